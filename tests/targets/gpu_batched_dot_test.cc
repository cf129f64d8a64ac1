// MatMuls (rank 2 to 4, symbolic batch dims, float and integer) on the GPU
// backends: the opencl backend gives every dot kernel the shared-memory tile
// template (gpu-dot-shared), their outputs on PoCL (run in a disco-exec child) match
// a plain loop at sizes that are not multiples of the 32x8 tile, and the cuda
// backend compiles the same kernels (compile only: no GPU is needed).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "driver/session.h"
#include "tests/support/onnx_graph_writer.h"
#include "tests/support/opencl_device.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;

// One MatMul Y = A x B' where B' is B, or B with its last two dims swapped
// (a Transpose node: attention's Q x K^T). Dims are numbers or symbol names;
// a constant B (weights) has numbers only.
struct DotCase {
  std::string name;
  std::vector<std::string> a, b;
  bool transpose_b = false;
  bool constant_b = false;
  int elem = kFloat;  // or INT64
  // Attention's heads, read through views (kHeads heads of kHeadDim): A is
  // [b, m, kHeads * kHeadDim] made [b, kHeads, m, kHeadDim] by a Reshape and a
  // Transpose; B is [b, n, kHeads * kHeadDim], made [b, kHeads, kHeadDim, n]
  // (Q.K^T) or, with b_heads_last false, [b, kHeads, n, kHeadDim] (P.V: A is
  // then a plain [b, kHeads, m, n]).
  bool heads = false, a_heads = true, b_heads_last = true;
};
void PrintTo(const DotCase &c, std::ostream *os) { *os << c.name; }

std::vector<int64_t> shape_of(const std::vector<std::string> &dims, const std::map<std::string, int64_t> &values) {
  std::vector<int64_t> s;
  for (const auto &d : dims) s.push_back(std::isdigit(static_cast<unsigned char>(d[0])) ? std::stoll(d) : values.at(d));
  return s;
}

// Floats in [-1, 1), or integers in [-4, 4] for an integer case.
TensorData random_tensor(const std::vector<int64_t> &shape, unsigned seed, int elem = kFloat) {
  if (elem == kFloat) return testing::random_f32(shape, seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(-4, 4);
  std::vector<int64_t> values(static_cast<size_t>(testing::numel(shape)));
  for (int64_t &v : values) v = u(rng);
  return testing::i64(shape, values);
}

constexpr int64_t kHeads = 3, kHeadDim = 12;

// input [b, s, kHeads * kHeadDim] -> Reshape (by the initializer heads_shape) [b, s, kHeads, kHeadDim] -> Transpose by perm.
std::string heads_view(testing::ModelWriter &w, const std::string &input, const std::vector<int64_t> &perm) {
  w.main.node("Reshape", {input, "heads_shape"}, {input + "_4d"});
  auto *t = w.main.node("Transpose", {input + "_4d"}, {input + "_heads"});
  auto *a = t->add_attribute();
  a->set_name("perm");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t d : perm) a->add_ints(d);
  return input + "_heads";
}

Graph model_of(const DotCase &c, const TensorData &constant_b) {
  testing::ModelWriter w(c.name, 13);
  if (c.heads) {
    w.main.symbolic_input("A", c.elem, c.a);
    w.main.symbolic_input("B", c.elem, c.b);
    w.main.tensor("heads_shape", testing::i64({4}, {0, 0, kHeads, kHeadDim}));
    const std::string lhs = c.a_heads ? heads_view(w, "A", {0, 2, 1, 3}) : "A";
    const std::string rhs = heads_view(w, "B", c.b_heads_last ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    w.main.node("MatMul", {lhs, rhs}, {"Y"});
    w.main.output("Y", c.elem);
    return w.graph();
  }
  w.main.symbolic_input("A", c.elem, c.a);
  if (c.constant_b)
    w.main.tensor("B", constant_b);
  else
    w.main.symbolic_input("B", c.elem, c.b);
  std::string rhs = "B";
  if (c.transpose_b) {
    auto *t = w.main.node("Transpose", {"B"}, {"Bt"});
    auto *perm = t->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    const int rank = static_cast<int>(c.b.size());
    for (int i = 0; i < rank - 2; ++i) perm->add_ints(i);
    perm->add_ints(rank - 1);
    perm->add_ints(rank - 2);
    rhs = "Bt";
  }
  w.main.node("MatMul", {"A", rhs}, {"Y"});
  w.main.output("Y", c.elem);
  return w.graph();
}

// numpy's matmul for these cases: B's batch dims are A's, or B has none.
// A [..., M, K]; B [..., K, N], or [..., N, K] when transposed.
std::vector<double> reference(const TensorData &a, const TensorData &b, bool transpose_b) {
  const auto &as = a.shape, &bs = b.shape;
  const std::vector<double> av = testing::floats(a), bv = testing::floats(b);
  const int64_t m = as[as.size() - 2], k = as.back();
  const int64_t n = transpose_b ? bs[bs.size() - 2] : bs.back();
  const int64_t batches = testing::numel(as) / (m * k);
  const bool b_batched = bs.size() > 2;
  std::vector<double> y(batches * m * n);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        const int64_t bt = b_batched ? t * k * n : 0;
        for (int64_t q = 0; q < k; ++q)
          s += av[(t * m + i) * k + q] * bv[bt + (transpose_b ? j * k + q : q * n + j)];
        y[(t * m + i) * n + j] = s;
      }
  return y;
}

// The [b, s, kHeads * kHeadDim] input as [b, kHeads, s, kHeadDim], or
// [b, kHeads, kHeadDim, s] with `last`.
TensorData heads_of(const TensorData &t, bool last) {
  const int64_t b = t.shape[0], s = t.shape[1];
  const std::vector<double> v = testing::floats(t);
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t d = 0; d < kHeadDim; ++d) {
          const int64_t to = last ? ((i * kHeads + h) * kHeadDim + d) * s + j : ((i * kHeads + h) * s + j) * kHeadDim + d;
          out[to] = static_cast<float>(v[(i * s + j) * kHeads * kHeadDim + h * kHeadDim + d]);
        }
  return testing::f32(last ? std::vector<int64_t>{b, kHeads, kHeadDim, s} : std::vector<int64_t>{b, kHeads, s, kHeadDim}, out);
}

// Compiles the case for `target` afresh; the schedule of each kernel, "label: template".
std::vector<std::string> compile_schedules(const DotCase &c, const TensorData &constant_b, const std::string &target,
                                           std::unique_ptr<Session> *session = nullptr) {
  CompileOptions o;
  o.target = target;
  o.use_cache = false;
  select_gpu_target(o, /*backends_given=*/false);
  std::vector<std::string> lines;
  std::string label;
  o.progress = [&](const std::string &line) {
    if (line.rfind("kernel ", 0) == 0) label = line;
    if (line.find("  schedule ") != std::string::npos) lines.push_back(label + ": " + line.substr(line.find("schedule ") + 9));
  };
  auto s = std::make_unique<Session>(model_of(c, constant_b), c.name, "", o);
  if (session) *session = std::move(s);
  return lines;
}

// The template of the kernel that holds the MatMul ("gpu-dot-shared", "gpu-dot").
std::string dot_template(const std::vector<std::string> &schedules) {
  for (const auto &s : schedules)
    if (s.find("MatMul") != std::string::npos) return s.substr(s.rfind(": ") + 2);
  return "";
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const auto &l : lines) s += "  " + l + "\n";
  return s;
}

const std::vector<DotCase> &cases() {
  static const std::vector<DotCase> all = {
      {"rank3_weights", {"b", "m", "70"}, {"70", "33"}, false, true},
      {"rank3_activations", {"b", "m", "k"}, {"b", "k", "n"}},
      {"rank4_activations", {"b", "h", "m", "k"}, {"b", "h", "k", "n"}},
      {"rank4_transposed", {"b", "h", "m", "k"}, {"b", "h", "n", "k"}, true},
      {"rank4_weights", {"b", "h", "m", "33"}, {"33", "5"}, false, true},
      {"rank2_activations", {"m", "k"}, {"k", "n"}},
      {"rank3_broadcast_b", {"b", "m", "k"}, {"k", "n"}},
      {"rank3_int64", {"b", "m", "k"}, {"b", "k", "n"}, false, false, onnx::TensorProto::INT64},
      {"rank2_int64", {"m", "k"}, {"k", "n"}, false, false, onnx::TensorProto::INT64},
      {"rank2_int64_weights", {"m", "70"}, {"70", "33"}, false, true, onnx::TensorProto::INT64},
      {"rank3_int64_weights", {"b", "m", "70"}, {"70", "33"}, false, true, onnx::TensorProto::INT64},
      // Attention through Reshape and Transpose views: Q.K^T, and P.V (P plain).
      {"attention_qkt", {"b", "m", "36"}, {"b", "n", "36"}, false, false, kFloat, true, true, true},
      {"attention_pv", {"b", "3", "m", "n"}, {"b", "n", "36"}, false, false, kFloat, true, false, false},
  };
  return all;
}

TensorData weights_of(const DotCase &c) {
  return c.constant_b ? random_tensor(shape_of(c.b, {}), 7, c.elem) : TensorData();
}

class GpuBatchedDot : public ::testing::TestWithParam<DotCase> {};

TEST_P(GpuBatchedDot, GetsTheSharedMemoryTileTemplateOnOpencl) {
  const DotCase &c = GetParam();
  const auto schedules = compile_schedules(c, weights_of(c), "opencl");
  EXPECT_EQ(dot_template(schedules), "gpu-dot-shared") << c.name << ":\n" << joined(schedules);
}

TEST_P(GpuBatchedDot, CompilesForCuda) {
  const DotCase &c = GetParam();
  std::vector<std::string> schedules;
  ASSERT_NO_THROW(schedules = compile_schedules(c, weights_of(c), "cuda")) << c.name;
  EXPECT_EQ(dot_template(schedules), "gpu-dot-shared") << c.name << ":\n" << joined(schedules);
}

TEST_P(GpuBatchedDot, MatchesAPlainLoopOnPocl) {
  if (!testing::has_pocl_device()) GTEST_SKIP() << "PoCL is not installed (tools/setup.sh installs pocl-opencl-icd)";
  const DotCase &c = GetParam();
  const TensorData weights = weights_of(c);
  std::unique_ptr<Session> s;
  const auto schedules = compile_schedules(c, weights, "opencl", &s);
  EXPECT_EQ(dot_template(schedules), "gpu-dot-shared") << c.name << ":\n" << joined(schedules);
  // Batch 1 and 3; M, N, K off the 32x8 tile, K below and above one k step of 32, and many k steps.
  const std::vector<std::map<std::string, int64_t>> sizes = {
      {{"b", 1}, {"h", 1}, {"m", 5}, {"k", 70}, {"n", 33}},
      {{"b", 3}, {"h", 2}, {"m", 33}, {"k", 5}, {"n", 70}},
      {{"b", 3}, {"h", 1}, {"m", 70}, {"k", 33}, {"n", 5}},
      {{"b", 1}, {"h", 3}, {"m", 1}, {"k", 1}, {"n", 1}},
      {{"b", 2}, {"h", 2}, {"m", 130}, {"k", 257}, {"n", 100}},
  };
  unsigned seed = 1;
  for (const auto &v : sizes) {
    const TensorData a = random_tensor(shape_of(c.a, v), seed++, c.elem);
    const TensorData b = c.constant_b ? weights : random_tensor(shape_of(c.b, v), seed++, c.elem);
    std::vector<TensorData> in = {a};
    if (!c.constant_b) in.push_back(b);
    const auto got = s->run(in);
    const std::vector<double> want = c.heads ? reference(c.a_heads ? heads_of(a, false) : a, heads_of(b, c.b_heads_last), false)
                                             : reference(a, b, c.transpose_b);
    std::string at;
    for (int64_t d : a.shape) at += (at.empty() ? "" : "x") + std::to_string(d);
    const std::vector<double> y_got = testing::floats(got[0]);
    ASSERT_EQ(y_got.size(), want.size()) << c.name << " at A " << at;
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double y = y_got[i];
      const double err = std::fabs(y - want[i]);
      worst = std::max(worst, err);
      if (!(err <= 1e-4 + 1e-4 * std::fabs(want[i])) && bad++ < 3)
        ADD_FAILURE() << c.name << " at A " << at << ": element " << i << " is " << y << ", want " << want[i];
    }
    EXPECT_EQ(bad, 0) << c.name << " at A " << at << ": " << bad << " of " << want.size() << " elements wrong";
    std::printf("  %s at A %s: max abs error %.3g\n", c.name.c_str(), at.c_str(), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuBatchedDot, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<DotCase> &i) { return i.param.name; });

}  // namespace
}  // namespace disco
