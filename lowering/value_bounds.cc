#include "lowering/value_bounds.h"

#include <algorithm>
#include <cmath>

#include "frontend/attributes.h"

namespace disco {

namespace {

constexpr int kMaxDepth = 8;
constexpr int64_t kMaxConstantElements = int64_t{1} << 20;

std::optional<double> constant_bound(const Value &v) {
  if (!v.constant || !dtype_is_float(v.constant->dtype) || v.constant->num_elements() > kMaxConstantElements)
    return std::nullopt;
  double m = 0;
  for (int64_t i = 0; i < v.constant->num_elements(); ++i) {
    const double x = v.constant->float_at(i);
    if (!std::isfinite(x)) return std::nullopt;
    m = std::max(m, std::fabs(x));
  }
  return m;
}

std::optional<double> bound(const Graph &g, int value, int depth);

// Normalized values z have sum 0 and sum of squares at most n, so no |z| can
// exceed sqrt(n - 1); then |z * scale + bias| <= sqrt(n - 1) max|scale| + max|bias|.
std::optional<double> layernorm_bound(const Graph &g, const Node &n) {
  const Value &x = g.value(n.inputs[0]);
  if (!x.shape || n.inputs.size() < 2) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x.shape->size());
  int64_t axis = AttrReader(n.attrs, n.where()).get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  double count = 1;
  for (int64_t d = axis; d < rank; ++d) {
    if (!(*x.shape)[d].is_const()) return std::nullopt;
    count *= static_cast<double>((*x.shape)[d].as_const());
  }
  auto scale = constant_bound(g.value(n.inputs[1]));
  std::optional<double> shift = 0.0;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) shift = constant_bound(g.value(n.inputs[2]));
  if (!scale || !shift) return std::nullopt;
  return std::sqrt(std::max(count - 1, 0.0)) * *scale + *shift;
}

std::optional<double> bound(const Graph &g, int value, int depth) {
  if (value < 0 || depth > kMaxDepth) return std::nullopt;
  const Value &v = g.value(value);
  if (v.constant) return constant_bound(v);
  if (v.producer < 0) return std::nullopt;
  const Node &n = g.nodes[static_cast<size_t>(v.producer)];
  if (!n.domain.empty()) return std::nullopt;
  const std::string &op = n.op_type;
  if (op == "Softmax" || op == "Sigmoid" || op == "Tanh") return 1.0;
  if (op == "LayerNormalization" && n.outputs[0] == value) return layernorm_bound(g, n);
  if (op == "Relu" || op == "Neg" || op == "Abs" || op == "Identity") return bound(g, n.inputs[0], depth + 1);
  if ((op == "Mul" || op == "Add" || op == "Sub") && n.inputs.size() == 2) {
    auto a = bound(g, n.inputs[0], depth + 1), b = bound(g, n.inputs[1], depth + 1);
    if (!a || !b) return std::nullopt;
    return op == "Mul" ? *a * *b : *a + *b;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> abs_bound(const Graph &g, int value) {
  auto b = bound(g, value, 0);
  // Each rule above is exact arithmetic on the bounds; float rounding in the
  // kernels can exceed them by a few ulps.
  if (b) *b = *b * (1 + 1e-5) + 1e-6;
  return b;
}

}  // namespace disco
