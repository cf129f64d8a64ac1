// The x86 dot and conv templates (schedules/x86_dot_schedule.h,
// x86_conv_schedule.h) against plain loops in double precision, one dynamic
// compile per graph run at shapes that take each specialize() branch:
//   dot:  tiles (N >= 24, M >= 4, edge tiles overlapping), rows (M < 4),
//         generic (N < 24);
//   conv: tiles (width >= 16), narrow (8..15), masked (< 8), generic
//         (fewer output channels than a micro-tile); with weights stored
//         channels-last (group 1, 16+ output channels): channels (width
//         >= 6), generic.
// Each dot form: transposed and strided operand views, batched and broadcast
// operands, Gemm's transposes (a constant transB is transposed at compile
// time) with alpha, beta and C, constant weights packed in panels, and Conv 1-D/2-D/3-D, padded, strided,
// dilated, grouped and depthwise, with bias and activation epilogues.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "lowering/host_target.h"
#include "Halide.h"
#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "schedules/x86_dot_schedule.h"
#include "tests/support/host_schedules.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

using Compiled = HostCompiled;

Compiled compile(Graph g) { return compile_on_host(std::move(g), "dotconv"); }

// Every test compiles for test_target() (the host, or $DISCO_TEST_TARGET:
// the AVX2 variants on an AVX-512 host), which this CPU must run.
class TargetEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!test_target_runs_here()) GTEST_SKIP() << "this CPU cannot run " << test_target_name() << " code";
  }
};
const auto *const kTargetEnvironment = ::testing::AddGlobalTestEnvironment(new TargetEnvironment);

// The fewest output channels of a Conv whose weight the host stores
// channels-last (schedules/x86_conv_schedule.h): one vector of them with
// AVX-512, two with AVX2; 16 either way. With AVX-512 the cases of 16 take
// one-vector micro-tiles, those of 32 and more two.
int64_t channels_last_outputs() { return 16; }

// The channels-last template's branches: "rows wide" only where AVX-512 has the registers.
const char *channels_last_branches() {
  return test_target_lanes() >= 16 ? "conv, branches: map rows wide rows" : "conv, branches: map rows";
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) * 0.0625f;
  return v;
}

int64_t count(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Row-major index helper.
struct Dims {
  std::vector<int64_t> s;
  int64_t at(std::initializer_list<int64_t> idx) const {
    int64_t o = 0, i = 0;
    for (int64_t v : idx) o = o * s[i++] + v;
    return o;
  }
};

void expect_close(const TensorData &got, const std::vector<double> &want, const std::string &what) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  const float *g = got.as<float>();
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(g[i], want[i], 1e-4 + 1e-4 * std::abs(want[i])) << what << " at element " << i;
}

bool has_template(const Compiled &c, const std::string &name) {
  for (const auto &s : c.schedules)
    if (s.rfind(name, 0) == 0) return true;
  return false;
}

// ---- MatMul / Gemm -----------------------------------------------------------

// relu(A @ B + bias) with A [b, m, k], B [k, n] read as Transpose(Bt) when
// `transposed` (Bt [n, k] an input), else B an input; bias [n] constant.
Graph matmul_graph(bool transposed, int64_t n_const) {
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {Dim::symbol("b"), Dim::symbol("m"), Dim::symbol("k")});
  std::string rhs;
  if (transposed) {
    auto bt = b.input("bt", DType::F32, {n_const, Dim::symbol("k")});
    rhs = b.op("Transpose", {bt}, {{"perm", attr_ints({1, 0})}});
  } else {
    rhs = b.input("bm", DType::F32, {Dim::symbol("k"), n_const});
  }
  auto bias = b.constant("bias", f32({n_const}, values(n_const, 5)));
  b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {a, rhs}), bias})}));
  return b.build();
}

void run_matmul(Executor &exec, bool transposed, int64_t batch, int64_t m, int64_t k, int64_t n) {
  TensorData a = f32({batch, m, k}, values(batch * m * k, 1));
  TensorData bm = transposed ? f32({n, k}, values(n * k, 2)) : f32({k, n}, values(k * n, 2));
  auto out = exec.run({a, bm});
  std::vector<float> bias = values(n, 5);
  std::vector<double> want;
  const float *pa = a.as<float>(), *pb = bm.as<float>();
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bias[j];
        for (int64_t kk = 0; kk < k; ++kk)
          s += double(pa[(bi * m + i) * k + kk]) * (transposed ? pb[j * k + kk] : pb[kk * n + j]);
        want.push_back(s > 0 ? s : 0);
      }
  expect_close(out[0], want, "batch " + std::to_string(batch) + " m " + std::to_string(m) + " k " + std::to_string(k));
}

TEST(X86DotSchedule, MatMulBranchesMatchTheReference) {
  // N = 100: at least the "rows" branch's width (kWideVectors vectors: 48 with
  // AVX2, 96 with AVX-512), not a multiple of either, so edge tiles overlap.
  Compiled c = compile(matmul_graph(false, 100));
  ASSERT_EQ(c.schedules, std::vector<std::string>{"dot, branches: tiles rows"});
  Executor exec(c.model.plan, c.model.dir);
  run_matmul(exec, false, 2, 37, 19, 100);    // tiles, edge tiles overlapping in n, the task of rows past M
  run_matmul(exec, false, 1, 130, 300, 100);  // tiles, several tasks of rows and two K blocks
  run_matmul(exec, false, 3, 20, 33, 100);    // tiles, one task of rows past M (24 with AVX-512)
  run_matmul(exec, false, 1, 60, 33, 100);    // tiles, one task of rows past M (64)
  run_matmul(exec, false, 1, 65, 33, 100);    // tiles, two tasks of 40 rows (AVX-512), the last past M
  run_matmul(exec, false, 3, 2, 7, 100);      // rows
  run_matmul(exec, false, 1, 1, 1, 100);      // rows, one element of k
}

// Gemm with alpha = beta = 1 seeds its sums with C. The "tiles" branch's
// last task computes whole micro-tiles past M, reading A's last row there
// (lowering/ops/dot_ops.cc): inputs of M rows, no more, and every row right.
TEST(X86DotSchedule, GemmSeededByCMatchesTheReferencePastM) {
  const int64_t k = 19, n = 100;
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {Dim::symbol("m"), k});
  auto w = b.constant("w", f32({k, n}, values(k * n, 6)));
  auto cc = b.input("c", DType::F32, {Dim::symbol("m"), n});
  b.output(b.op("Gemm", {a, w, cc}));
  Compiled c = compile(b.build());
  ASSERT_EQ(c.schedules, std::vector<std::string>{"dot, branches: tiles rows"});
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> pw = values(k * n, 6);
  for (int64_t m : {8, 20, 45, 60}) {
    TensorData ta = f32({m, k}, values(m * k, 8)), tc = f32({m, n}, values(m * n, 9));
    auto out = exec.run({ta, tc});
    const float *pa = ta.as<float>(), *pc = tc.as<float>();
    std::vector<double> want;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = pc[i * n + j];
        for (int64_t kk = 0; kk < k; ++kk) s += double(pa[i * k + kk]) * pw[kk * n + j];
        want.push_back(s);
      }
    expect_close(out[0], want, "gemm seeded by C, m " + std::to_string(m));
  }
}

// The rows per task of the "tiles" branch, for every M from one micro-tile
// to 1000: a multiple of MR, at most kTaskRows, in as few tasks as kTaskRows
// allows, and tasks that round M up by less than one micro-tile each (the
// last task stops at M and its sums at the next micro-tile). Tiles of the
// largest multiple of MR below M, shifted in at M's edge, computed M = 20 as
// two tasks of 16 rows and M = 60 as two of 56.
TEST(X86DotSchedule, TaskRowsSpreadMEvenly) {
  for (int mr : {4, 8}) {
    Halide::Func f("task_rows");
    Halide::Var m("m");
    f(m) = dot_task_rows(m, mr);
    Halide::Buffer<int32_t> rows = f.realize({1001});
    for (int M = mr; M <= 1000; ++M) {
      const int t = rows(M), tasks = (M + t - 1) / t, least = (M + kTaskRows - 1) / kTaskRows;
      SCOPED_TRACE("MR " + std::to_string(mr) + ", M " + std::to_string(M) + ": " + std::to_string(tasks) +
                   " tasks of " + std::to_string(t) + " rows");
      ASSERT_EQ(t % mr, 0);
      ASSERT_LE(t, kTaskRows);
      ASSERT_EQ(tasks, least);
      ASSERT_LT(tasks * t - M, tasks * mr);
    }
  }
}

TEST(X86DotSchedule, NarrowMatMulTakesTheGenericBranch) {
  Compiled c = compile(matmul_graph(false, 5));
  Executor exec(c.model.plan, c.model.dir);
  run_matmul(exec, false, 2, 9, 13, 5);
  run_matmul(exec, false, 1, 1, 3, 5);
}

TEST(X86DotSchedule, TransposedOperandViewMatchesTheReference) {
  Compiled c = compile(matmul_graph(true, 40));
  ASSERT_TRUE(has_template(c, "dot"));
  Executor exec(c.model.plan, c.model.dir);
  run_matmul(exec, true, 2, 33, 17, 40);
  run_matmul(exec, true, 1, 3, 5, 40);
}

// Batched @ batched, B a strided view (every other column of a wider input,
// Slice with step 2), both with symbolic extents.
TEST(X86DotSchedule, BatchedStridedOperandMatchesTheReference) {
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {Dim::symbol("b"), Dim::symbol("m"), Dim::symbol("k")});
  auto wide = b.input("w", DType::F32, {Dim::symbol("b"), Dim::symbol("k"), Dim::symbol("n2")});
  auto starts = b.constant("starts", TensorData::from_int64({0}, {1}));
  auto ends = b.constant("ends", TensorData::from_int64({1 << 30}, {1}));
  auto axes = b.constant("axes", TensorData::from_int64({2}, {1}));
  auto steps = b.constant("steps", TensorData::from_int64({2}, {1}));
  auto strided = b.op("Slice", {wide, starts, ends, axes, steps});
  b.output(b.op("MatMul", {a, strided}));
  Compiled c = compile(b.build());
  Executor exec(c.model.plan, c.model.dir);
  for (auto [batch, m, k, n2] : std::vector<std::array<int64_t, 4>>{{2, 29, 11, 100}, {3, 2, 5, 61}, {1, 6, 4, 9}}) {
    TensorData ta = f32({batch, m, k}, values(batch * m * k, 3)), tw = f32({batch, k, n2}, values(batch * k * n2, 4));
    auto out = exec.run({ta, tw});
    const int64_t n = (n2 + 1) / 2;
    std::vector<double> want;
    const float *pa = ta.as<float>(), *pw = tw.as<float>();
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t kk = 0; kk < k; ++kk) s += double(pa[(bi * m + i) * k + kk]) * pw[(bi * k + kk) * n2 + 2 * j];
          want.push_back(s);
        }
    expect_close(out[0], want, "strided batch " + std::to_string(batch) + " m " + std::to_string(m));
  }
}

// Gemm(A^T, B^T) * alpha + beta * C with constant B (transposed at compile time).
TEST(X86DotSchedule, GemmTransposesAlphaBetaMatchTheReference) {
  const int64_t k = 21, n = 30;
  GraphBuilder b;
  auto at = b.input("at", DType::F32, {k, Dim::symbol("m")});
  auto bt = b.constant("bt", f32({n, k}, values(n * k, 6)));
  auto cc = b.constant("c", f32({1, n}, values(n, 7)));
  b.output(
      b.op("Gemm", {at, bt, cc},
           {{"transA", attr_int(1)}, {"transB", attr_int(1)}, {"alpha", attr_float(0.5f)}, {"beta", attr_float(2)}}));
  Compiled c = compile(b.build());
  ASSERT_TRUE(has_template(c, "dot"));
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> pb = values(n * k, 6), pc = values(n, 7);
  for (int64_t m : {1, 3, 4, 45}) {
    TensorData ta = f32({k, m}, values(k * m, 8));
    auto out = exec.run({ta});
    const float *pa = ta.as<float>();
    std::vector<double> want;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) s += double(pa[kk * m + i]) * pb[j * k + kk];
        want.push_back(0.5 * s + 2.0 * pc[j]);
      }
    expect_close(out[0], want, "gemm m " + std::to_string(m));
  }
}

// Constant right operands packed at compile time in panels of the micro-tile
// (lowering/weight_layout.h, dot_panel_width): 3 vectors wide when N is a
// multiple of 3 vectors, else 2; other N keep the per-task pack. A MatMul
// with a constant B (bias and relu after it) and a torch-Linear-style Gemm
// (transB 1, C) on one constant, at M of every branch.
std::string packed_constant(const Compiled &c, const std::string &marker = "/panels") {
  for (const auto &b : c.model.plan.buffers)
    if (b.kind == PlanBuffer::Constant && b.name.find(marker) != std::string::npos) return b.name;
  return "";
}

void check_packed_dot(int64_t n, const std::string &panels) {
  const int64_t k = 300;  // two K blocks
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {Dim::symbol("b"), Dim::symbol("m"), k});
  auto x = b.input("x", DType::F32, {Dim::symbol("m"), k});
  auto w = b.constant("w", f32({k, n}, values(k * n, 12)));
  auto wt = b.constant("wt", f32({n, k}, values(n * k, 13)));
  auto bias = b.constant("bias", f32({n}, values(n, 14)));
  b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {a, w}), bias})}));
  b.output(b.op("Gemm", {x, wt, bias}, {{"transB", attr_int(1)}}));
  Compiled c = compile(b.build());
  ASSERT_EQ(c.schedules, (std::vector<std::string>{"dot, branches: tiles rows", "dot, branches: tiles rows"})) << n;
  if (panels.empty())
    EXPECT_EQ(packed_constant(c), "") << "N = " << n << " is not a whole number of panels";
  else
    EXPECT_NE(packed_constant(c).find(panels), std::string::npos) << "N = " << n << ": " << packed_constant(c);
  Executor exec(c.model.plan, c.model.dir);
  const std::vector<float> pw = values(k * n, 12), pwt = values(n * k, 13), pbias = values(n, 14);
  for (auto [batch, m] : std::vector<std::array<int64_t, 2>>{{1, 1}, {2, 3}, {1, 4}, {2, 37}, {1, 130}}) {
    TensorData ta = f32({batch, m, k}, values(batch * m * k, 15)), tx = f32({m, k}, values(m * k, 16));
    auto out = exec.run({ta, tx});
    const float *pa = ta.as<float>(), *px = tx.as<float>();
    std::vector<double> want_mm, want_gemm;
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = pbias[j];
          for (int64_t kk = 0; kk < k; ++kk) s += double(pa[(bi * m + i) * k + kk]) * pw[kk * n + j];
          want_mm.push_back(s > 0 ? s : 0);
        }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = pbias[j];
        for (int64_t kk = 0; kk < k; ++kk) s += double(px[i * k + kk]) * pwt[j * k + kk];
        want_gemm.push_back(s);
      }
    const std::string what = "N " + std::to_string(n) + " batch " + std::to_string(batch) + " m " + std::to_string(m);
    expect_close(out[0], want_mm, "packed MatMul, " + what);
    expect_close(out[1], want_gemm, "packed Gemm, " + what);
  }
}

TEST(X86DotSchedule, ConstantWeightsPackedInPanelsMatchTheReference) {
  const int lanes = test_target_lanes();
  check_packed_dot(6 * lanes, "/panels" + std::to_string(3 * lanes));   // panels of 3 vectors
  check_packed_dot(10 * lanes, "/panels" + std::to_string(2 * lanes));  // of 2 vectors (and tasks across panels)
  check_packed_dot(6 * lanes + 1, "");                                  // not packed: per-task pack
}

// ---- Conv --------------------------------------------------------------------

struct ConvCase {
  std::string name;
  int64_t cin, cout, group;
  std::vector<int64_t> kernel, stride, dilation, pads;  // pads: begins then ends
};

// relu(conv(x, w) + bias) over [n, cin, spatial...] with symbolic spatial dims.
Graph conv_graph(const ConvCase &cc) {
  const size_t sp = cc.kernel.size();
  GraphBuilder b;
  Shape xs{Dim::symbol("n"), cc.cin};
  for (size_t i = 0; i < sp; ++i) xs.push_back(Dim::symbol("s" + std::to_string(i)));
  auto x = b.input("x", DType::F32, xs);
  std::vector<int64_t> ws{cc.cout, cc.cin / cc.group};
  ws.insert(ws.end(), cc.kernel.begin(), cc.kernel.end());
  auto w = b.constant("w", f32(ws, values(count(ws), 9)));
  auto bias = b.constant("bias", f32({cc.cout}, values(cc.cout, 10)));
  auto y = b.op("Conv", {x, w, bias},
                {{"group", attr_int(cc.group)},
                 {"strides", attr_ints(cc.stride)},
                 {"dilations", attr_ints(cc.dilation)},
                 {"pads", attr_ints(cc.pads)}});
  b.output(b.op("Relu", {y}));
  return b.build();
}

void run_conv(Executor &exec, const ConvCase &cc, int64_t n, const std::vector<int64_t> &in) {
  const size_t sp = cc.kernel.size();
  std::vector<int64_t> xs{n, cc.cin};
  xs.insert(xs.end(), in.begin(), in.end());
  TensorData x = f32(xs, values(count(xs), 11));
  auto out = exec.run({x});
  std::vector<int64_t> os{n, cc.cout};
  for (size_t i = 0; i < sp; ++i)
    os.push_back((in[i] + cc.pads[i] + cc.pads[sp + i] - cc.dilation[i] * (cc.kernel[i] - 1) - 1) / cc.stride[i] + 1);
  ASSERT_EQ(out[0].shape, os) << cc.name;
  std::vector<float> w = values(cc.cout * (cc.cin / cc.group) * count(cc.kernel), 9), bias = values(cc.cout, 10);
  const float *px = x.as<float>();
  const int64_t cg = cc.cin / cc.group, og = cc.cout / cc.group;
  std::vector<double> want;
  // Output positions row-major over spatial dims (up to 3).
  std::vector<int64_t> o3(3, 1), i3(3, 1), k3(3, 1), s3(3, 1), d3(3, 1), p3(3, 0);
  for (size_t i = 0; i < sp; ++i) {
    o3[3 - sp + i] = os[2 + i];
    i3[3 - sp + i] = in[i];
    k3[3 - sp + i] = cc.kernel[i];
    s3[3 - sp + i] = cc.stride[i];
    d3[3 - sp + i] = cc.dilation[i];
    p3[3 - sp + i] = cc.pads[i];
  }
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cc.cout; ++co)
      for (int64_t z = 0; z < o3[0]; ++z)
        for (int64_t yy = 0; yy < o3[1]; ++yy)
          for (int64_t xx = 0; xx < o3[2]; ++xx) {
            double s = bias[co];
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kz = 0; kz < k3[0]; ++kz)
                for (int64_t ky = 0; ky < k3[1]; ++ky)
                  for (int64_t kx = 0; kx < k3[2]; ++kx) {
                    int64_t iz = z * s3[0] + kz * d3[0] - p3[0], iy = yy * s3[1] + ky * d3[1] - p3[1],
                            ix = xx * s3[2] + kx * d3[2] - p3[2];
                    if (iz < 0 || iz >= i3[0] || iy < 0 || iy >= i3[1] || ix < 0 || ix >= i3[2]) continue;
                    int64_t cin = co / og * cg + ci;
                    double xv = px[(((b * cc.cin + cin) * i3[0] + iz) * i3[1] + iy) * i3[2] + ix];
                    double wv = w[(((co * cg + ci) * k3[0] + kz) * k3[1] + ky) * k3[2] + kx];
                    s += xv * wv;
                  }
            want.push_back(s > 0 ? s : 0);
          }
  std::string what = cc.name + " input";
  for (auto d : in) what += " " + std::to_string(d);
  expect_close(out[0], want, what);
}

void check_conv(const ConvCase &cc, const std::vector<std::vector<int64_t>> &shapes, const char *branches) {
  Compiled c = compile(conv_graph(cc));
  ASSERT_EQ(c.schedules, std::vector<std::string>{branches}) << cc.name;
  Executor exec(c.model.plan, c.model.dir);
  for (const auto &s : shapes) run_conv(exec, cc, 2, s);
}

TEST(X86ConvSchedule, PaddedConv2dBranchesMatchTheReference) {
  // widths 37 (tiles), 11 (narrow), 5 and 1 (masked)
  check_conv({"3x3 pad 1", 5, 13, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, {{9, 37}, {4, 11}, {6, 5}, {1, 1}},
             "conv, branches: tiles narrow masked");
}

TEST(X86ConvSchedule, StridedDilatedConv2dMatchesTheReference) {
  check_conv({"3x3 stride 2", 4, 8, 1, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 2}}, {{11, 41}, {7, 9}, {3, 4}},
             "conv, branches: tiles narrow masked");
  check_conv({"3x2 dilation 2", 3, 6, 1, {3, 2}, {1, 1}, {2, 3}, {2, 1, 2, 1}}, {{8, 35}, {5, 6}},
             "conv, branches: tiles narrow masked");
}

TEST(X86ConvSchedule, GroupedAndDepthwiseConvMatchTheReference) {
  check_conv({"grouped", 8, 12, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, {{6, 20}, {3, 3}},
             "conv, branches: tiles narrow masked");
  check_conv({"depthwise", 7, 7, 7, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, {{12, 40}, {5, 5}},
             "conv, branches: tiles narrow masked");
}

TEST(X86ConvSchedule, FewChannelsTakeTheGenericBranch) {
  check_conv({"3 output channels", 4, 3, 1, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, {{7, 30}, {3, 3}}, "conv");
}

TEST(X86ConvSchedule, Conv1dAnd3dMatchTheReference) {
  check_conv({"1-D", 3, 9, 1, {5}, {1}, {1}, {2, 2}}, {{50}, {6}, {1}}, "conv, branches: tiles narrow masked");
  check_conv({"3-D", 2, 6, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}}, {{3, 4, 19}, {2, 3, 5}},
             "conv, branches: tiles narrow masked");
}

// Group-1 Convs with enough output channels get their weight stored
// channels-last at compile time and the micro-kernel vectorized over output
// channels (6 positions by 2 vectors of channels with AVX2), its positions
// flattened across rows: "map" for maps of up to 256 positions (tiles
// spanning rows: 2x3 is one tile), "rows" for larger ones at least a tile
// wide, with AVX-512 first "rows wide" where tiles 7/6 as wide cover a row
// with fewer positions (rows of 37 and 28 below; 24 stays "rows"), the
// guarded generic one for the rest (1x1, and 65x5 below).
// 40 channels: edge tiles of channels overlap. Fewer than 8 input channels
// (a stem's 3) keep the width-vectorized kernel.
TEST(X86ConvSchedule, ChannelsLastWeightsMatchTheReference) {
  const int64_t wide = channels_last_outputs();
  const char *both = channels_last_branches();
  check_conv({"channels-last 3x3 pad 1", 8, 2 * wide + wide / 2, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
             {{9, 37}, {12, 24}, {4, 12}, {3, 7}, {2, 3}, {1, 1}}, both);
  check_conv({"channels-last 3x3 stride 2", 9, wide, 1, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 2}},
             {{11, 41}, {20, 55}, {7, 13}, {3, 4}, {130, 9}}, both);
  check_conv({"channels-last 3x2 dilation 2", 8, wide, 1, {3, 2}, {1, 1}, {2, 3}, {2, 1, 2, 1}}, {{8, 35}, {5, 6}},
             both);
  check_conv({"channels-last 1x1", 20, wide, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, {{5, 14}, {2, 2}}, both);
  check_conv({"channels-last 1-D", 8, wide, 1, {5}, {1}, {1}, {2, 2}}, {{50}, {6}, {1}, {300}},
             "conv, branches: map");
  check_conv({"channels-last 3-D", 8, wide, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
             {{3, 4, 19}, {2, 3, 5}, {4, 8, 10}}, both);
  check_conv({"stem", 3, wide, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, {{9, 37}, {3, 3}},
             "conv, branches: tiles narrow masked");
}

// ConvTranspose 2x2 stride 2 (a UNet's upsampling): host kernels against the reference.
TEST(X86ConvSchedule, ConvTranspose2x2Stride2MatchesTheReference) {
  const int64_t cin = 6, cout = 4;
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), cin, Dim::symbol("h"), Dim::symbol("w")});
  auto w = b.constant("w", f32({cin, cout, 2, 2}, values(cin * cout * 4, 12)));
  b.output(b.op("ConvTranspose", {x, w}, {{"strides", attr_ints({2, 2})}, {"kernel_shape", attr_ints({2, 2})}}));
  Compiled c = compile(b.build());
  Executor exec(c.model.plan, c.model.dir);
  std::vector<float> pw = values(cin * cout * 4, 12);
  for (auto [n, h, wd] : std::vector<std::array<int64_t, 3>>{{2, 5, 19}, {1, 1, 3}}) {
    TensorData tx = f32({n, cin, h, wd}, values(n * cin * h * wd, 13));
    auto out = exec.run({tx});
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{n, cout, 2 * h, 2 * wd}));
    const float *px = tx.as<float>();
    std::vector<double> want;
    for (int64_t bi = 0; bi < n; ++bi)
      for (int64_t co = 0; co < cout; ++co)
        for (int64_t oy = 0; oy < 2 * h; ++oy)
          for (int64_t ox = 0; ox < 2 * wd; ++ox) {
            double s = 0;
            for (int64_t ci = 0; ci < cin; ++ci)
              s += double(px[((bi * cin + ci) * h + oy / 2) * wd + ox / 2]) *
                   pw[((ci * cout + co) * 2 + oy % 2) * 2 + ox % 2];
            want.push_back(s);
          }
    expect_close(out[0], want, "convtranspose h " + std::to_string(h));
  }
}

// ConvTranspose with a constant weight, 2-D: `kernel` x `kernel` taps,
// stride, pads (begin = end), bias; the reference scatters each input
// position's taps. Kernel == stride with no pads is lowered per output
// phase onto the conv template (channels-last weights with 16+ channels);
// other geometries keep the general gather (its weight read channels-last
// too when stored so).
void check_conv_transpose(int64_t cin, int64_t cout, int64_t kernel, int64_t stride, int64_t pad,
                          const std::vector<std::array<int64_t, 3>> &shapes, const std::string &schedule) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), cin, Dim::symbol("h"), Dim::symbol("w")});
  const std::vector<float> pw = values(cin * cout * kernel * kernel, 17), pb = values(cout, 18);
  auto w = b.constant("w", f32({cin, cout, kernel, kernel}, pw));
  auto bias = b.constant("bias", f32({cout}, pb));
  b.output(b.op("ConvTranspose", {x, w, bias},
                {{"strides", attr_ints({stride, stride})},
                 {"kernel_shape", attr_ints({kernel, kernel})},
                 {"pads", attr_ints({pad, pad, pad, pad})}}));
  Compiled c = compile(b.build());
  ASSERT_EQ(c.schedules.size(), 1u);
  EXPECT_EQ(c.schedules[0].rfind(schedule, 0), 0u) << c.schedules[0];
  const bool wide = cout >= channels_last_outputs() && cin >= 8;
  EXPECT_EQ(packed_constant(c, "/channels_last").empty(), !wide) << "the weight is stored channels-last iff wide";
  Executor exec(c.model.plan, c.model.dir);
  for (auto [n, h, wd] : shapes) {
    TensorData tx = f32({n, cin, h, wd}, values(n * cin * h * wd, 19));
    auto out = exec.run({tx});
    const int64_t oh = (h - 1) * stride + kernel - 2 * pad, ow = (wd - 1) * stride + kernel - 2 * pad;
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{n, cout, oh, ow}));
    std::vector<double> want(static_cast<size_t>(n * cout * oh * ow));
    for (int64_t bi = 0; bi < n; ++bi)
      for (int64_t co = 0; co < cout; ++co) {
        for (int64_t i = 0; i < oh * ow; ++i) want[(bi * cout + co) * oh * ow + i] = pb[co];
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t iy = 0; iy < h; ++iy)
            for (int64_t ix = 0; ix < wd; ++ix)
              for (int64_t ky = 0; ky < kernel; ++ky)
                for (int64_t kx = 0; kx < kernel; ++kx) {
                  const int64_t oy = iy * stride + ky - pad, ox = ix * stride + kx - pad;
                  if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                  want[((bi * cout + co) * oh + oy) * ow + ox] +=
                      double(tx.as<float>()[((bi * cin + ci) * h + iy) * wd + ix]) *
                      pw[((ci * cout + co) * kernel + ky) * kernel + kx];
                }
      }
    expect_close(out[0], want, "convtranspose k" + std::to_string(kernel) + " s" + std::to_string(stride) + " h " +
                                   std::to_string(h) + " w " + std::to_string(wd));
  }
}

TEST(X86ConvSchedule, ConvTransposeByOutputPhaseMatchesTheReference) {
  const int64_t wide = channels_last_outputs();
  check_conv_transpose(8, 2 * wide + 3, 2, 2, 0, {{2, 5, 19}, {1, 1, 3}, {1, 4, 1}, {1, 70, 2}},
                       channels_last_branches());
  check_conv_transpose(9, 3 * wide, 3, 3, 0, {{1, 3, 7}, {2, 2, 2}}, channels_last_branches());
  check_conv_transpose(7, 9, 2, 2, 0, {{2, 6, 21}, {1, 2, 2}}, "conv, branches: tiles narrow masked");
  check_conv_transpose(7, 4, 2, 2, 0, {{1, 3, 5}}, "conv");  // fewer channels than a micro-tile: generic
}

TEST(X86ConvSchedule, GeneralConvTransposeReadsChannelsLastWeights) {
  const int64_t wide = channels_last_outputs();
  check_conv_transpose(8, wide, 3, 2, 1, {{2, 5, 9}, {1, 2, 1}}, "generic");
}

}  // namespace
}  // namespace disco
