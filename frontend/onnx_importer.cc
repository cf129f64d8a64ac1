#include "frontend/onnx_importer.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <fstream>

#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "onnx/onnx_pb.h"

namespace disco {

namespace {

std::string dir_of(const std::string &path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

template <typename Src, typename Dst>
void copy_elements(const Src &src, TensorData &t) {
  Dst *out = t.mutable_as<Dst>();
  for (int i = 0; i < src.size(); ++i) out[i] = static_cast<Dst>(src.Get(i));
}

// How many elements the typed field that holds `t`'s values has (-1: no such field).
int64_t typed_count(const onnx::TensorProto &p, DType t) {
  switch (t) {
    case DType::F32: return p.float_data_size();
    case DType::F64: return p.double_data_size();
    case DType::I64: return p.int64_data_size();
    case DType::U64:
    case DType::U32: return p.uint64_data_size();
    case DType::I32:
    case DType::I16:
    case DType::U16:
    case DType::F16:
    case DType::BF16:
    case DType::I8:
    case DType::U8:
    case DType::Bool: return p.int32_data_size();
    default: return -1;
  }
}

// An external_data offset or length: a non-negative decimal number.
int64_t external_number(const std::string &text, const std::string &key, const std::string &what) {
  const auto v = parse_count(text);
  DISCO_CHECK(v, what, ": external data ", key, " '", text, "' is not a byte count");
  return *v;
}

// `kind` and the name make `what`, which names the tensor in messages
// ("initializer tensor 'w'"). Its size is computed with overflow checks and
// compared with the data present (and, for external data, the memory limit)
// before anything is allocated: a header cannot make disco allocate more than
// the file holds.
TensorData read_tensor(const onnx::TensorProto &p, const std::string &base_dir, const std::string &kind) {
  const std::string name = p.name().empty() ? "<unnamed>" : p.name();
  const std::string what = kind + " '" + name + "'";
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  const DType dtype = dtype_from_onnx(p.data_type());
  const int64_t count = checked_elements(dims, what);
  const int64_t needed = checked_bytes(dims, dtype, what);
  const auto nbytes = static_cast<size_t>(needed);
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : p.external_data()) {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = external_number(kv.value(), "offset", what);
      if (kv.key() == "length") length = external_number(kv.value(), "length", what);
    }
    DISCO_CHECK(!location.empty(), what, ": external data without a location");
    DISCO_CHECK(location.find("..") == std::string::npos && location[0] != '/', what,
                ": external data location '", location, "' must stay inside the model's folder");
    const std::string file = base_dir + "/" + location;
    std::ifstream f(file, std::ios::binary | std::ios::ate);
    DISCO_CHECK(f.good(), what, ": cannot open external data file '", file, "'");
    DISCO_CHECK(length < 0 || length == needed, what, ": external length ", length, " does not match its shape ",
                dims_text(dims), " (", needed, " bytes)");
    const auto file_size = static_cast<int64_t>(f.tellg());
    DISCO_CHECK(offset <= file_size && needed <= file_size - offset, what, " of shape ", dims_text(dims), " needs ",
                bytes_text(needed), " from offset ", offset, " of external data file '", location, "', which has ",
                file_size, " bytes");
    memory_limit().check_bytes(what, dims, needed);
    TensorData t(dtype, dims);
    f.seekg(offset);
    f.read(reinterpret_cast<char *>(t.mutable_data()), static_cast<std::streamsize>(nbytes));
    DISCO_CHECK(static_cast<size_t>(f.gcount()) == nbytes, what, ": external data file '", location,
                "' is too short");
    return t;
  }
  if (p.has_raw_data()) {
    DISCO_CHECK(p.raw_data().size() == nbytes, what, " has ", p.raw_data().size(), " bytes of raw data, its shape ",
                dims_text(dims), " needs ", needed, " bytes");
    TensorData t(dtype, dims);
    if (nbytes > 0) std::memcpy(t.mutable_data(), p.raw_data().data(), nbytes);  // an empty tensor has no storage
    return t;
  }
  const int64_t given = typed_count(p, dtype);
  DISCO_CHECK(given >= 0, what, ": unsupported dtype");
  DISCO_CHECK(given == count, what, " has ", given, " elements, its shape ", dims_text(dims), " needs ", count, " elements");
  TensorData t(dtype, dims);
  switch (t.dtype) {
    case DType::F32: copy_elements<decltype(p.float_data()), float>(p.float_data(), t); break;
    case DType::F64: copy_elements<decltype(p.double_data()), double>(p.double_data(), t); break;
    case DType::I64: copy_elements<decltype(p.int64_data()), int64_t>(p.int64_data(), t); break;
    case DType::U64: copy_elements<decltype(p.uint64_data()), uint64_t>(p.uint64_data(), t); break;
    case DType::U32: copy_elements<decltype(p.uint64_data()), uint32_t>(p.uint64_data(), t); break;
    case DType::I32: copy_elements<decltype(p.int32_data()), int32_t>(p.int32_data(), t); break;
    case DType::I16: copy_elements<decltype(p.int32_data()), int16_t>(p.int32_data(), t); break;
    case DType::U16:
    case DType::F16:
    case DType::BF16: copy_elements<decltype(p.int32_data()), uint16_t>(p.int32_data(), t); break;
    case DType::I8: copy_elements<decltype(p.int32_data()), int8_t>(p.int32_data(), t); break;
    case DType::U8:
    case DType::Bool: copy_elements<decltype(p.int32_data()), uint8_t>(p.int32_data(), t); break;
    default: fail(what, ": unsupported dtype");
  }
  return t;
}

// `owner`: empty for the model's graph; for a subgraph, the node and attribute
// that hold it (named in its errors).
Graph read_graph(const onnx::GraphProto &gp, const std::map<std::string, int> &opsets, const std::string &base_dir,
                 const std::string &owner);

Attribute read_attribute(const onnx::AttributeProto &a, const std::map<std::string, int> &opsets,
                         const std::string &base_dir, const std::string &where) {
  Attribute r;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: r.kind = Attribute::Float; r.f = a.f(); break;
    case onnx::AttributeProto::INT: r.kind = Attribute::Int; r.i = a.i(); break;
    case onnx::AttributeProto::STRING: r.kind = Attribute::String; r.s = a.s(); break;
    case onnx::AttributeProto::TENSOR: r.kind = Attribute::Tensor; r.t = read_tensor(a.t(), base_dir, where + ": attribute '" + a.name() + "' tensor"); break;
    case onnx::AttributeProto::GRAPH:
      r.kind = Attribute::GraphAttr;
      r.g = std::make_shared<Graph>(read_graph(a.g(), opsets, base_dir, where + ": attribute '" + a.name() + "'"));
      break;
    case onnx::AttributeProto::FLOATS:
      r.kind = Attribute::Floats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      r.kind = Attribute::Ints;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attribute::Strings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    default: fail(where, ": attribute '", a.name(), "' has an unsupported type (", a.type(), ")");
  }
  return r;
}

DType read_elem_type(const onnx::ValueInfoProto &vi, const std::string &what) {
  const onnx::TypeProto &t = vi.type();
  const char *kind = t.has_sequence_type()   ? "a sequence"
                     : t.has_map_type()      ? "a map"
                     : t.has_optional_type() ? "an optional"
                                             : "not a tensor";
  DISCO_CHECK(t.has_tensor_type(), what, " '", vi.name(), "' is ", kind,
              ": disco takes tensors only (no sequence, map or optional types)");
  return dtype_from_onnx(t.tensor_type().elem_type());
}

Graph read_graph(const onnx::GraphProto &gp, const std::map<std::string, int> &opsets, const std::string &base_dir,
                 const std::string &owner) {
  const bool subgraph = !owner.empty();
  const std::string graph_what = subgraph ? owner + ": subgraph" : "graph";
  Graph g;
  g.name = gp.name();
  g.opsets = opsets;
  for (const auto &init : gp.initializer()) {
    int id = g.add_value(init.name());
    g.value(id).constant = read_tensor(init, base_dir, "initializer tensor");
    g.value(id).dtype = g.value(id).constant->dtype;
    std::vector<Dim> shape;
    for (auto d : g.value(id).constant->shape) shape.emplace_back(d);
    g.value(id).shape = shape;
  }
  for (const auto &vi : gp.input()) {
    if (g.find_value(vi.name()) >= 0) continue;  // an initializer listed as input (IR < 4)
    // A subgraph's inputs are bound to outer values, so their types may be left out.
    const bool untyped = subgraph && vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET;
    int id = g.add_value(vi.name(), untyped ? DType::Undefined : read_elem_type(vi, graph_what + " input"));
    const auto &tt = vi.type().tensor_type();
    if (tt.has_shape()) {
      Shape shape;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto &d = tt.shape().dim(i);
        if (d.has_dim_value()) {
          DISCO_CHECK(d.dim_value() >= 0, "graph input '", vi.name(), "' dim ", i, " is negative");
          shape.emplace_back(d.dim_value());
        } else if (d.has_dim_param() && !d.dim_param().empty()) {
          shape.push_back(Dim::symbol(d.dim_param()));
        } else {
          shape.push_back(Dim::symbol(vi.name() + "_dim" + std::to_string(i)));
        }
      }
      g.value(id).shape = shape;
    }
    g.inputs.push_back(id);
  }
  int counter = 0;
  for (const auto &np : gp.node()) {
    Node n;
    n.op_type = np.op_type();
    n.name = np.name().empty() ? np.op_type() + "_" + std::to_string(counter) : np.name();
    ++counter;
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    auto it = opsets.find(n.domain);
    n.opset = it == opsets.end() ? 0 : it->second;
    for (const auto &in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = g.find_value(in);
      if (id < 0) id = g.add_value(in);  // produced later, or by an enclosing graph
      n.inputs.push_back(id);
    }
    for (const auto &out : np.output()) {
      int id = out.empty() ? -1 : g.find_value(out);
      if (id >= 0 && g.value(id).producer >= 0)
        fail(n.where(), ": output '", out, "' is already produced by another node");
      if (id < 0) id = g.add_value(out);
      g.value(id).producer = static_cast<int>(g.nodes.size());
      n.outputs.push_back(id);
    }
    for (const auto &a : np.attribute()) n.attrs[a.name()] = read_attribute(a, opsets, base_dir, n.where());
    g.nodes.push_back(std::move(n));
  }
  for (const auto &vi : gp.output()) {
    int id = g.find_value(vi.name());
    // A body may output an enclosing graph's value as it is, with no node between.
    if (id < 0 && subgraph && !vi.name().empty()) id = g.add_value(vi.name());
    DISCO_CHECK(id >= 0, "graph output '", vi.name(), "' is never produced");
    if (g.value(id).dtype == DType::Undefined && vi.type().has_tensor_type())
      g.value(id).dtype = read_elem_type(vi, graph_what + " output");
    g.outputs.push_back(id);
  }
  return g;
}

}  // namespace

Graph load_onnx_bytes(const std::string &bytes, const std::string &base_dir, const std::string &what) {
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t *>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  DISCO_CHECK(model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage(), "'", what,
              "' is not a valid ONNX model (the protobuf does not parse; is the file truncated?)");
  DISCO_CHECK(model.has_graph(), "'", what, "' has no graph");
  std::map<std::string, int> opsets;
  for (const auto &o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
  if (opsets.empty()) opsets[""] = 1;
  Graph g = read_graph(model.graph(), opsets, base_dir, "");
  DISCO_CHECK(!g.outputs.empty(), "'", what, "' has no outputs");
  g.sort_nodes();
  return g;
}

Graph load_onnx_file(const std::string &path) { return load_onnx_bytes(read_file(path), dir_of(path), path); }

TensorData load_onnx_tensor_file(const std::string &path) {
  onnx::TensorProto t;
  const std::string bytes = read_file(path);
  DISCO_CHECK(t.ParseFromString(bytes), "'", path, "' is not a serialized ONNX TensorProto");
  return read_tensor(t, dir_of(path), "tensor file '" + path + "': tensor");
}

}  // namespace disco
