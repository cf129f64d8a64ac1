#include "targets/onednn/onednn_post_ops.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "frontend/errors.h"

namespace disco {

namespace {

struct KindName {
  OnednnPostOp::Kind kind;
  const char *name;
  int num_args;  // numbers after the name
};

const KindName kKinds[] = {
    {OnednnPostOp::Relu, "relu", 1},
    {OnednnPostOp::GeluErf, "gelu_erf", 0},
    {OnednnPostOp::Sigmoid, "sigmoid", 0},
    {OnednnPostOp::Tanh, "tanh", 0},
    {OnednnPostOp::Swish, "swish", 1},
    {OnednnPostOp::HardSwish, "hardswish", 0},
    {OnednnPostOp::Clip, "clip", 2},
    {OnednnPostOp::Linear, "linear", 2},
    {OnednnPostOp::Add, "add", 0},
    {OnednnPostOp::Sub, "sub", 0},
    {OnednnPostOp::Mul, "mul", 0},
    {OnednnPostOp::Div, "div", 0},
    {OnednnPostOp::Max, "max", 0},
    {OnednnPostOp::Min, "min", 0},
    {OnednnPostOp::BatchNorm, "batchnorm", 1},
};

const KindName &info(OnednnPostOp::Kind k) {
  for (const auto &e : kKinds)
    if (e.kind == k) return e;
  fail("internal: unknown oneDNN post-op kind ", static_cast<int>(k));
}

// Enough digits that a float parameter survives the round trip exactly.
std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

float eltwise(const OnednnPostOp &op, float x) {
  switch (op.kind) {
    case OnednnPostOp::Relu:
      return x > 0 ? x : static_cast<float>(op.a) * x;
    case OnednnPostOp::GeluErf:
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case OnednnPostOp::Sigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case OnednnPostOp::Tanh:
      return std::tanh(x);
    case OnednnPostOp::Swish:
      return x / (1.0f + std::exp(-static_cast<float>(op.a) * x));
    case OnednnPostOp::HardSwish:
      return x * std::fmin(std::fmax(x / 6.0f + 0.5f, 0.0f), 1.0f);
    case OnednnPostOp::Clip:
      return std::fmin(std::fmax(x, static_cast<float>(op.a)), static_cast<float>(op.b));
    case OnednnPostOp::Linear:
      return static_cast<float>(op.a) * x + static_cast<float>(op.b);
    default:
      fail("internal: post-op ", info(op.kind).name, " is not elementwise");
  }
}

float binary(OnednnPostOp::Kind k, float x, float y) {
  switch (k) {
    case OnednnPostOp::Add:
      return x + y;
    case OnednnPostOp::Sub:
      return x - y;
    case OnednnPostOp::Mul:
      return x * y;
    case OnednnPostOp::Div:
      return x / y;
    case OnednnPostOp::Max:
      return std::fmax(x, y);
    case OnednnPostOp::Min:
      return std::fmin(x, y);
    default:
      fail("internal: post-op ", info(k).name, " is not binary");
  }
}

}  // namespace

int OnednnPostOp::num_operands() const {
  switch (kind) {
    case Add:
    case Sub:
    case Mul:
    case Div:
    case Max:
    case Min:
      return 1;
    case BatchNorm:
      return 4;
    default:
      return 0;
  }
}

bool to_panel_op(const OnednnPostOp &op, PanelOp *p) {
  *p = PanelOp();
  switch (op.kind) {
    case OnednnPostOp::Add: p->kind = PanelOp::Add; return true;
    case OnednnPostOp::Mul: p->kind = PanelOp::Mul; return true;
    case OnednnPostOp::Relu: p->kind = PanelOp::Relu, p->a = static_cast<float>(op.a); return true;
    case OnednnPostOp::GeluErf: p->kind = PanelOp::GeluErf; return true;
    case OnednnPostOp::Linear:
      p->kind = PanelOp::Linear, p->a = static_cast<float>(op.a), p->b = static_cast<float>(op.b);
      return true;
    case OnednnPostOp::Sigmoid: p->kind = PanelOp::Sigmoid; return true;
    case OnednnPostOp::Swish: p->kind = PanelOp::Swish, p->a = static_cast<float>(op.a); return true;
    case OnednnPostOp::HardSwish: p->kind = PanelOp::HardSwish; return true;
    default: return false;
  }
}

std::string post_ops_to_string(const std::vector<OnednnPostOp> &ops) {
  std::string s;
  for (const auto &op : ops) {
    const KindName &k = info(op.kind);
    s += (s.empty() ? "" : ",") + std::string(k.name);
    if (k.num_args >= 1) s += ":" + number(op.a);
    if (k.num_args >= 2) s += ":" + number(op.b);
  }
  return s;
}

std::vector<OnednnPostOp> parse_post_ops(const std::string &text, const std::string &where) {
  std::vector<OnednnPostOp> ops;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    std::vector<std::string> parts;
    std::stringstream fields(item);
    for (std::string f; std::getline(fields, f, ':');) parts.push_back(f);
    DISCO_CHECK(!parts.empty(), where, ": empty post-op in '", text, "'");
    const KindName *found = nullptr;
    for (const auto &e : kKinds)
      if (parts[0] == e.name) found = &e;
    DISCO_CHECK(found, where, ": unknown post-op '", parts[0], "'");
    DISCO_CHECK(static_cast<int>(parts.size()) == found->num_args + 1, where, ": post-op '", item, "' takes ",
                found->num_args, " number(s)");
    OnednnPostOp op;
    op.kind = found->kind;
    double *args[] = {&op.a, &op.b};
    for (int i = 0; i < found->num_args; ++i) {
      char *end = nullptr;
      *args[i] = std::strtod(parts[i + 1].c_str(), &end);
      DISCO_CHECK(!parts[i + 1].empty() && *end == '\0', where, ": post-op '", item, "' has a bad number '",
                  parts[i + 1], "'");
    }
    ops.push_back(op);
  }
  return ops;
}

void apply_post_ops_scalar(float *data, const std::vector<int64_t> &dims, const std::vector<OnednnPostOp> &ops,
                           const std::vector<PostOpOperand> &operands) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const int rank = static_cast<int>(dims.size());
  size_t next = 0;
  for (const auto &op : ops) {
    DISCO_CHECK(op.kind != OnednnPostOp::BatchNorm, "internal: BatchNorm must be expanded before scalar post-ops");
    if (op.num_operands() == 0) {
      for (int64_t i = 0; i < n; ++i) data[i] = eltwise(op, data[i]);
      continue;
    }
    DISCO_CHECK(next < operands.size(), "internal: too few post-op operands");
    const PostOpOperand &o = operands[next++];
    DISCO_CHECK(static_cast<int>(o.dims.size()) == rank, "internal: post-op operand of rank ", o.dims.size(),
                " for a value of rank ", rank);
    // Strides of the operand, 0 along its broadcast dims.
    std::vector<int64_t> stride(rank, 0);
    for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
      stride[d] = o.dims[d] == 1 ? 0 : s;
      s *= o.dims[d];
    }
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += idx[d] * stride[d];
      data[i] = binary(op.kind, data[i], o.data[off]);
      for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; --d) idx[d] = 0;
    }
  }
}

}  // namespace disco
