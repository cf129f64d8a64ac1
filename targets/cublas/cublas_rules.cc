#include "targets/cublas/cublas_rules.h"

#include <sstream>

#include "frontend/attributes.h"

namespace disco {

namespace {

bool match_matmul(const MatchContext &ctx, const Node &n, CublasUnit &u, std::string *why) {
  if (n.inputs.size() != 2 || n.outputs.empty()) return *why = "MatMul needs two inputs", false;
  u.a = n.inputs[0];
  u.b = n.inputs[1];
  if (*why = ctx.dtype_reason({u.a, u.b, n.outputs[0]}); !why->empty()) return false;
  const int ra = ctx.rank_of(u.a), rb = ctx.rank_of(u.b);
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
  if (*why = ctx.dtype_reason({u.a, u.b, c, y}); !why->empty()) return false;
  if (ctx.rank_of(u.a) != 2 || ctx.rank_of(u.b) != 2 || ctx.rank_of(y) != 2)
    return *why = "A, B and Y must be 2-D", false;
  const AttrReader attrs(n.attrs, n.where());
  u.anchor = CublasUnit::Gemm;
  u.trans_a = attrs.get_int("transA", 0) != 0;
  u.trans_b = attrs.get_int("transB", 0) != 0;
  u.alpha = attrs.get_float("alpha", 1.0f);
  const double beta = attrs.get_float("beta", 1.0f);
  if (c < 0 || beta == 0) return true;
  if (!ctx.broadcasts_into(*ctx.value(c).shape, *ctx.value(y).shape))
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
    if (ctx.is_op(add, "Add") && other >= 0 && other != u.output && ctx.is_constant(other) &&
        ctx.value(other).dtype == DType::F32 && ctx.value(n.outputs[0]).dtype == DType::F32 &&
        ctx.broadcasts_into(*ctx.value(other).shape, *ctx.value(u.output).shape)) {
      u.epilogue.push_back({CublasEpilogueOp::Add, other, 1.0});
      u.nodes.push_back(add);
      u.output = n.outputs[0];
    }
  }
  const int relu = ctx.sole_consumer(u.output);
  if (ctx.is_op(relu, "Relu")) {
    u.epilogue.push_back({CublasEpilogueOp::Relu});
    u.nodes.push_back(relu);
    u.output = ctx.node(relu).outputs[0];
  }
}

}  // namespace

std::vector<SupportRule> cublas_rules() {
  using Anchor = bool (*)(const MatchContext &, const Node &, CublasUnit &, std::string *);
  // A rule for one anchor op: the anchor's match, then its epilogue.
  auto rule = [](const char *op, Anchor match_anchor) -> SupportRule {
    return {"cublas.matmul+bias+relu", op, [match_anchor](const MatchContext &ctx, int node) {
              CublasUnit u;
              u.nodes = {node};
              std::string why;
              if (!match_anchor(ctx, ctx.node(node), u, &why)) return decline(why);
              u.output = ctx.node(node).outputs[0];
              match_epilogue(ctx, u);
              return take_record(std::move(u));
            }};
  };
  return {rule("MatMul", match_matmul), rule("Gemm", match_gemm)};
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
