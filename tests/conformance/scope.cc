#include "tests/conformance/scope.h"

#include <fstream>
#include <set>
#include <sstream>

#include "onnx/onnx_pb.h"

namespace disco::conformance {

namespace {

const std::set<std::string> kRandomOps = {"Bernoulli",    "RandomNormal",      "RandomNormalLike",
                                          "RandomUniform", "RandomUniformLike", "Multinomial"};
const std::set<std::string> kSequenceOps = {
    "SequenceConstruct", "SequenceAt",   "SequenceEmpty",   "SequenceErase",      "SequenceInsert",
    "SequenceLength",    "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional",
    "OptionalGetElement", "OptionalHasElement"};
const std::set<std::string> kStringOps = {"StringNormalizer", "RegexFullMatch", "StringConcat", "StringSplit",
                                          "TfIdfVectorizer"};

std::optional<std::string> type_reason(const onnx::TypeProto &t) {
  if (t.has_sequence_type()) return "sequence type";
  if (t.has_optional_type()) return "optional type";
  if (t.has_map_type()) return "map type";
  if (t.has_tensor_type() && t.tensor_type().elem_type() == onnx::TensorProto::STRING) return "string tensor";
  return std::nullopt;
}

std::optional<std::string> graph_reason(const onnx::GraphProto &g) {
  for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto &vi : *list)
      if (auto r = type_reason(vi.type())) return *r + " ('" + vi.name() + "')";
  for (const auto &init : g.initializer())
    if (init.data_type() == onnx::TensorProto::STRING) return "string tensor ('" + init.name() + "')";
  for (const auto &n : g.node()) {
    if (n.domain() == "ai.onnx.preview.training") return "op " + n.op_type() + " of ai.onnx.preview.training";
    if (kRandomOps.count(n.op_type())) return "random-number op " + n.op_type();
    if (kSequenceOps.count(n.op_type())) return "sequence/optional op " + n.op_type();
    if (kStringOps.count(n.op_type())) return "string op " + n.op_type();
    for (const auto &a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH)
        if (auto r = graph_reason(a.g())) return r;
      if (a.type() == onnx::AttributeProto::TENSOR && a.t().data_type() == onnx::TensorProto::STRING)
        return "string tensor attribute";
      if (a.type() == onnx::AttributeProto::TYPE_PROTO || a.type() == onnx::AttributeProto::TYPE_PROTOS)
        return "type-proto attribute";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> out_of_scope_reason(const std::string &model_path) {
  std::ifstream f(model_path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::ModelProto m;
  if (!m.ParseFromString(ss.str())) return std::nullopt;  // in scope; the importer reports the error
  for (const auto &o : m.opset_import())
    if (o.domain() == "ai.onnx.preview.training") return "ai.onnx.preview.training domain";
  return graph_reason(m.graph());
}

}  // namespace disco::conformance
