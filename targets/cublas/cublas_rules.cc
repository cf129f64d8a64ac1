#include "targets/cublas/cublas_rules.h"

#include <sstream>

#include "frontend/attributes.h"
#include "frontend/errors.h"

namespace disco {

namespace {

bool is_default_domain(const Node &n) { return n.domain.empty() || n.domain == "ai.onnx"; }

int rank_of(const MatchContext &ctx, int vid) {
  return vid >= 0 && ctx.value(vid).shape ? static_cast<int>(ctx.value(vid).shape->size()) : -1;
}

// Names the first value that is not float32, or "".
std::string dtype_reason(const MatchContext &ctx, const std::vector<int> &vids) {
  for (int v : vids)
    if (v >= 0 && ctx.value(v).dtype != DType::F32)
      return "only float32 is supported; '" + ctx.value(v).name + "' is " + dtype_name(ctx.value(v).dtype);
  return "";
}

// A value of shape `small` broadcasts into `big` without growing it.
bool fits_into(const ShapeStore &store, const Shape &small, const Shape &big) {
  if (small.size() > big.size()) return false;
  const size_t off = big.size() - small.size();
  for (size_t i = 0; i < small.size(); ++i)
    if (!store.canonical(small[i]).is_const(1) && !store.same_dim(small[i], big[off + i])) return false;
  return true;
}

bool match_matmul(const MatchContext &ctx, const Node &n, CublasUnit &u, std::string *why) {
  if (n.inputs.size() != 2 || n.outputs.empty()) return *why = "MatMul needs two inputs", false;
  u.a = n.inputs[0];
  u.b = n.inputs[1];
  if (*why = dtype_reason(ctx, {u.a, u.b, n.outputs[0]}); !why->empty()) return false;
  const int ra = rank_of(ctx, u.a), rb = rank_of(ctx, u.b);
  if (ra < 2 || rb < 2) return *why = "1-D operands are left to the next backend", false;
  if (ra == 2 || rb == 2) return true;  // one GEMM, or A shared by every batch
  if (ra != rb) return *why = "A and B have different ranks (their batch dims broadcast)", false;
  const Shape &sa = *ctx.value(u.a).shape, &sb = *ctx.value(u.b).shape;
  for (int i = 0; i < ra - 2; ++i)
    if (!ctx.store().same_dim(sa[i], sb[i]))
      return *why = "batch dim " + std::to_string(i) + " of A and B may differ (cuBLAS does not broadcast it)", false;
  return true;
}

bool match_gemm(const MatchContext &ctx, const Node &n, CublasUnit &u, std::string *why) {
  if (n.opset < 7) return *why = "Gemm before opset 7 (the broadcast attribute) is not supported", false;
  if (n.inputs.size() < 2 || n.outputs.empty()) return *why = "Gemm needs A and B", false;
  const int c = n.inputs.size() > 2 ? n.inputs[2] : -1, y = n.outputs[0];
  u.a = n.inputs[0];
  u.b = n.inputs[1];
  if (*why = dtype_reason(ctx, {u.a, u.b, c, y}); !why->empty()) return false;
  if (rank_of(ctx, u.a) != 2 || rank_of(ctx, u.b) != 2 || rank_of(ctx, y) != 2)
    return *why = "A, B and Y must be 2-D", false;
  const AttrReader attrs(n.attrs, n.where());
  u.anchor = CublasUnit::Gemm;
  u.trans_a = attrs.get_int("transA", 0) != 0;
  u.trans_b = attrs.get_int("transB", 0) != 0;
  u.alpha = attrs.get_float("alpha", 1.0f);
  const double beta = attrs.get_float("beta", 1.0f);
  if (c < 0 || beta == 0) return true;
  if (!fits_into(ctx.store(), *ctx.value(c).shape, *ctx.value(y).shape))
    return *why = "C does not broadcast to [M, N]", false;
  u.epilogue.push_back({CublasEpilogueOp::Add, c, beta});
  return true;
}

// A constant bias added to the result (either side of the Add), then a Relu.
void match_epilogue(const MatchContext &ctx, CublasUnit &u) {
  const int add = ctx.sole_consumer(u.output);
  if (add >= 0) {
    const Node &n = ctx.node(add);
    const int other = n.inputs.size() == 2 ? n.inputs[n.inputs[0] == u.output ? 1 : 0] : -1;
    if (n.op_type == "Add" && is_default_domain(n) && other >= 0 && other != u.output && ctx.is_constant(other) &&
        ctx.value(other).dtype == DType::F32 && ctx.value(n.outputs[0]).dtype == DType::F32 &&
        fits_into(ctx.store(), *ctx.value(other).shape, *ctx.value(u.output).shape)) {
      u.epilogue.push_back({CublasEpilogueOp::Add, other, 1.0});
      u.nodes.push_back(add);
      u.output = n.outputs[0];
    }
  }
  const int relu = ctx.sole_consumer(u.output);
  if (relu >= 0 && ctx.node(relu).op_type == "Relu" && is_default_domain(ctx.node(relu))) {
    u.epilogue.push_back({CublasEpilogueOp::Relu});
    u.nodes.push_back(relu);
    u.output = ctx.node(relu).outputs[0];
  }
}

}  // namespace

std::optional<CublasUnit> match_cublas_unit(const MatchContext &ctx, int node, std::string *why) {
  const Node &n = ctx.node(node);
  CublasUnit u;
  u.nodes = {node};
  try {
    bool ok = false;
    if (!is_default_domain(n))
      *why = "not an ONNX op";
    else if (n.op_type == "MatMul")
      ok = match_matmul(ctx, n, u, why);
    else if (n.op_type == "Gemm")
      ok = match_gemm(ctx, n, u, why);
    else
      *why = "not an op the cuBLAS backend anchors at";
    if (!ok) return std::nullopt;
    u.output = n.outputs[0];
    match_epilogue(ctx, u);
  } catch (const Error &e) {
    *why = e.what();  // a malformed attribute: the next backend reports it properly
    return std::nullopt;
  }
  return u;
}

std::vector<SupportRule> cublas_rules() {
  auto check = [](const MatchContext &ctx, int node, std::string *why) -> std::vector<int> {
    auto u = match_cublas_unit(ctx, node, why);
    return u ? u->nodes : std::vector<int>{};
  };
  return {{"cublas.matmul+bias+relu", {"MatMul", "Gemm"}, check}};
}

std::string epilogue_to_string(const std::vector<CublasEpilogueOp> &ops) {
  std::ostringstream s;
  s.precision(17);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) s << ",";
    if (ops[i].kind == CublasEpilogueOp::Relu)
      s << "relu";
    else
      s << "add:" << ops[i].scale;
  }
  return s.str();
}

}  // namespace disco
