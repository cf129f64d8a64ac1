// x86 schedule templates and their specializations: each specialize()
// branch, and the generic branch after them, gives the numbers of a plain
// scalar implementation. Shapes are picked to take one branch each:
//   hint   the hinted symbol at its likely value;
//   small  at most kSerialElements elements;
//   dense  no broadcast dim is 1 and the inner extent is a multiple of 16;
//   generic otherwise (a broadcast, or a tail).
#include "schedules/x86_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/host_schedules.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

using Compiled = HostCompiled;

Compiled compile(Graph g, std::map<std::string, int64_t> hints = {}) {
  return compile_on_host(std::move(g), "sched", std::move(hints));
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) * 0.125f;
  return v;
}

// out = relu(x + y) * 2 with y [c, n] broadcast over x [a, n] when c is 1.
Graph broadcast_add() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("a"), Dim::symbol("n")});
  auto y = b.input("y", DType::F32, {Dim::symbol("c"), Dim::symbol("n")});
  auto r = b.op("Relu", {b.op("Add", {x, y})});
  b.output(b.op("Mul", {r, b.constant("two", f32({}, {2}))}));
  return b.build();
}

void expect_broadcast_add(Executor &exec, int64_t a, int64_t c, int64_t n) {
  TensorData x = f32({a, n}, values(a * n, 1)), y = f32({c, n}, values(c * n, 2));
  auto out = exec.run({x, y});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{a, n}));
  const float *px = x.as<float>(), *py = y.as<float>(), *po = out[0].as<float>();
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = px[i * n + j] + py[(c == 1 ? 0 : i) * n + j];
      float want = (s > 0 ? s : 0) * 2;
      ASSERT_EQ(po[i * n + j], want) << "a=" << a << " c=" << c << " n=" << n << " at " << i << "," << j;
    }
}

TEST(X86Schedule, LoopKernelSmallBranchMatchesTheReference) {
  Compiled c = compile(broadcast_add());
  Executor exec(c.model.plan, c.model.dir);
  expect_broadcast_add(exec, 3, 3, 16);  // 48 elements
  expect_broadcast_add(exec, 3, 1, 5);
}

TEST(X86Schedule, CastsOfOutOfRangeFloatsToEightAndSixteenBitsWrapAsPyTorch) {
  // PyTorch's x.to(torch.uint8), .to(torch.int8) and .to(torch.int16) on x86.
  // Three casts of one input in one compiled loop kernel, as in the exported
  // model where they saturated (Halide folded the int64 step away); Halide's
  // JIT of the unscheduled graph (jit_eval) wrapped all along.
  const std::vector<float> xv{0, 1, 100, 200, 255, -1, -100, 1.7f, -1.7f, 300, 70000};
  const std::vector<std::pair<DType, std::vector<int64_t>>> want{
      {DType::U8, {0, 1, 100, 200, 255, 255, 156, 1, 255, 44, 112}},
      {DType::I8, {0, 1, 100, -56, -1, -1, -100, 1, -1, 44, 112}},
      {DType::I16, {0, 1, 100, 200, 255, -1, -100, 1, -1, 300, 4464}}};
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n")});
  for (const auto &w : want) b.output(b.op("Cast", {x}, attrs({{"to", attr_int(dtype_to_onnx(w.first))}})));
  Compiled c = compile(b.build());
  Executor exec(c.model.plan, c.model.dir);
  for (int copies : {1, 8}) {  // the small branch, and whole vectors
    std::vector<float> in;
    for (int i = 0; i < copies; ++i) in.insert(in.end(), xv.begin(), xv.end());
    auto out = exec.run({f32({int64_t(in.size())}, in)});
    for (size_t k = 0; k < want.size(); ++k) {
      std::vector<int64_t> expected;
      for (int i = 0; i < copies; ++i) expected.insert(expected.end(), want[k].second.begin(), want[k].second.end());
      EXPECT_EQ(out[k].to_int64(), expected) << dtype_name(want[k].first) << " x" << copies;
    }
  }
}

TEST(X86Schedule, LoopKernelDenseBranchMatchesTheReference) {
  Compiled c = compile(broadcast_add());
  Executor exec(c.model.plan, c.model.dir);
  expect_broadcast_add(exec, 2100, 2100, 32);  // no broadcast, 32 % 16 == 0
}

TEST(X86Schedule, LoopKernelGenericBranchMatchesTheReference) {
  Compiled c = compile(broadcast_add());
  Executor exec(c.model.plan, c.model.dir);
  expect_broadcast_add(exec, 2100, 1, 32);     // y broadcast
  expect_broadcast_add(exec, 1100, 1100, 33);  // a tail
}

TEST(X86Schedule, LoopKernelHintBranchMatchesTheReference) {
  Compiled c = compile(broadcast_add(), {{"n", 24}});
  EXPECT_EQ(c.schedules, std::vector<std::string>{"loop, branches: hint small dense"});
  Executor exec(c.model.plan, c.model.dir);
  expect_broadcast_add(exec, 2100, 1, 24);  // the hint, with a broadcast
  expect_broadcast_add(exec, 2100, 2100, 48);
}

// softmax(x * k) over rows of n, then exp: a stitch kernel.
Graph row_softmax() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("r"), Dim::symbol("n")});
  auto k = b.constant("k", f32({}, {0.5f}));
  auto sm = b.op("Softmax", {b.op("Mul", {x, k})}, {{"axis", attr_int(-1)}});
  b.output(b.op("Sqrt", {sm}));
  return b.build();
}

void expect_row_softmax(Executor &exec, int64_t r, int64_t n) {
  TensorData x = f32({r, n}, values(r * n, 3));
  auto out = exec.run({x});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{r, n}));
  const float *px = x.as<float>(), *po = out[0].as<float>();
  for (int64_t i = 0; i < r; ++i) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, 0.5 * px[i * n + j]);
    for (int64_t j = 0; j < n; ++j) s += std::exp(0.5 * px[i * n + j] - m);
    for (int64_t j = 0; j < n; ++j) {
      double want = std::sqrt(std::exp(0.5 * px[i * n + j] - m) / s);
      ASSERT_NEAR(po[i * n + j], want, 1e-6 + 1e-5 * want) << "r=" << r << " n=" << n << " at " << i << "," << j;
    }
  }
}

TEST(X86Schedule, StitchKernelBranchesMatchTheReference) {
  Compiled c = compile(row_softmax());
  Executor exec(c.model.plan, c.model.dir);
  expect_row_softmax(exec, 5, 7);      // small
  expect_row_softmax(exec, 1200, 64);  // dense
  expect_row_softmax(exec, 700, 77);   // generic: a tail in every row
  expect_row_softmax(exec, 40000, 1);  // generic: rows of one
}

TEST(X86Schedule, StitchKernelHintBranchMatchesTheReference) {
  Compiled c = compile(row_softmax(), {{"n", 40}});
  EXPECT_EQ(c.schedules, std::vector<std::string>{"stitch, branches: hint small dense"});
  Executor exec(c.model.plan, c.model.dir);
  expect_row_softmax(exec, 1000, 40);  // hint
  expect_row_softmax(exec, 1000, 41);  // generic
}

// Compiles g with DISCO_STMT_DIR set and returns its kernels' lowered loop
// nests, concatenated, in *stmt.
Compiled compile_with_stmts(Graph g, const std::string &name, std::string *stmt) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_EQ(setenv("DISCO_STMT_DIR", dir.c_str(), 1), 0);
  Compiled c = compile(std::move(g));
  unsetenv("DISCO_STMT_DIR");
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    *stmt += ss.str();
  }
  EXPECT_FALSE(stmt->empty()) << "no lowered statement in " << dir;
  return c;
}

// Softmax over the last axis of [b, h, w, c], as a channels-last LayerNorm's
// rows are (convnext_tiny): the stitch template's rows fuse b, h and w.
Graph softmax_last_4d() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("b"), Dim::symbol("h"), Dim::symbol("w"), Dim::symbol("c")});
  b.output(b.op("Softmax", {x}, {{"axis", attr_int(-1)}}));
  return b.build();
}

void expect_softmax_last_4d(Executor &exec, int64_t n, int64_t h, int64_t w, int64_t c) {
  TensorData x = f32({n, h, w, c}, values(n * h * w * c, 5));
  auto out = exec.run({x});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{n, h, w, c}));
  const float *px = x.as<float>(), *po = out[0].as<float>();
  for (int64_t r = 0; r < n * h * w; ++r) {
    double m = px[r * c], s = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, static_cast<double>(px[r * c + j]));
    for (int64_t j = 0; j < c; ++j) s += std::exp(px[r * c + j] - m);
    for (int64_t j = 0; j < c; ++j)
      ASSERT_NEAR(po[r * c + j], std::exp(px[r * c + j] - m) / s, 1e-6) << "row " << r << " col " << j;
  }
}

// A stitch kernel's row folds (the Softmax's max and sum) are stored once per
// task: stored at the row, their size was one Halide could not bound, so
// every row was a heap allocation (31,000 a run of convnext_tiny's
// LayerNorms). In the task's function, every allocation inside its loops has
// a constant size (a stack array).
TEST(X86Schedule, StitchKernelRowFoldsAreNoHeapAllocationPerRow) {
  std::string stmt;
  Compiled c = compile_with_stmts(softmax_last_4d(), "stitch_fold_stmt", &stmt);
  ASSERT_EQ(c.schedules, std::vector<std::string>{"stitch, branches: small dense"});
  // The task's function: from its name to the next function's.
  const size_t task = stmt.find("_par_for_"), end = stmt.find("func ", task);
  ASSERT_NE(task, std::string::npos) << stmt;
  const size_t loop = stmt.find("for (", task);
  ASSERT_LT(loop, end) << stmt;
  int in_loops = 0;
  for (size_t at = stmt.find("allocate ", loop); at < end; at = stmt.find("allocate ", at + 1)) {
    const size_t open = stmt.find('[', at), close = stmt.find(']', at);
    ASSERT_LT(open, close) << stmt.substr(at, 200);
    // "float32 * 1 * 64": after the type, numbers only.
    const std::string size = stmt.substr(open + 1, close - open - 1);
    EXPECT_EQ(size.find_first_not_of("0123456789 *", size.find(' ')), std::string::npos)
        << "an allocation of non-constant size inside the task's loops: " << stmt.substr(at, close - at + 1);
    ++in_loops;
  }
  EXPECT_GT(in_loops, 0) << "no allocation inside the loops (the partials); the test reads the wrong function";
  Executor exec(c.model.plan, c.model.dir);
  expect_softmax_last_4d(exec, 1, 56, 56, 96);
  expect_softmax_last_4d(exec, 2, 7, 5, 37);  // a tail in every row
}

// A ReduceMean over the last axis of [b, h, w, c] (a LayerNorm or RMSNorm
// written out, as exports before opset 17 have it): the generic template's row
// fold at root.
Graph reduce_mean_last() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("b"), Dim::symbol("h"), Dim::symbol("w"), Dim::symbol("c")});
  b.output(b.op("ReduceMean", {x}, {{"axes", attr_ints({-1})}, {"keepdims", attr_int(1)}}));
  return b.build();
}

void expect_reduce_mean_last(Executor &exec, int64_t n, int64_t h, int64_t w, int64_t c) {
  TensorData x = f32({n, h, w, c}, values(n * h * w * c, 4));
  auto out = exec.run({x});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{n, h, w, 1}));
  const float *px = x.as<float>(), *po = out[0].as<float>();
  for (int64_t r = 0; r < n * h * w; ++r) {
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += px[r * c + j];
    ASSERT_NEAR(po[r], s / static_cast<double>(c), 1e-6) << n << "x" << h << "x" << w << "x" << c << " row " << r;
  }
}

// Each row's partial sums a vector, stored once per task (not allocated per
// row) and merged by a plain loop: the fold of rows indexed by a fused kept
// dim once took 5 ns per term, with a heap allocation per row and an atomic
// (compare-and-swap) merge of each lane. Read from the lowered loop nest
// (DISCO_STMT_DIR), since timings are not tests.
TEST(X86Schedule, RowFoldAtRootKeepsItsPartialsPerTaskAndMergesWithoutAtomics) {
  std::string stmt;
  Compiled c = compile_with_stmts(reduce_mean_last(), "row_fold_stmt", &stmt);
  ASSERT_EQ(c.schedules, std::vector<std::string>{"generic"});
  EXPECT_EQ(stmt.find("atomic"), std::string::npos) << stmt;
  // In the task's function, the partials are allocated before its loop over rows.
  const size_t alloc = stmt.find("allocate "), rows = stmt.find("for (");
  ASSERT_NE(alloc, std::string::npos) << stmt;
  EXPECT_LT(alloc, rows) << stmt;
  Executor exec(c.model.plan, c.model.dir);
  expect_reduce_mean_last(exec, 2, 40, 40, 96);
  expect_reduce_mean_last(exec, 1, 3, 5, 37);  // a tail in every row
  expect_reduce_mean_last(exec, 3, 64, 1, 768);
}

// Folds at root of rows longer than kLongFold (2^18) sum them in blocks
// (x86_schedule.cc, fold_in_blocks): one chain per lane over a row of 2^22
// same-signed terms was about 2e-4 off, relative (2^24: 6.8e-4), where
// PyTorch's float32 sum matches float64 to about 1e-7. A row fold (kept
// dims; 18x the bound without blocks) and a whole-tensor fold (64 lanes: at
// this length within the bound either way, so its value is what is
// checked), each with a tail of 37 terms past whole vectors.
TEST(X86Schedule, LongFoldsAtRootSumInBlocksCloseToFloat64) {
  const int64_t n = (int64_t(1) << 22) + 37;
  std::vector<float> v(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i) v[i] = 0.1f + static_cast<float>(i % 1000) * 1e-5f;
  auto sum_of = [&](int64_t from, int64_t count) {
    double s = 0;
    for (int64_t i = from; i < from + count; ++i) s += v[i];
    return s;
  };
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {Dim::symbol("b"), Dim::symbol("n")});
    b.output(b.op("ReduceSum", {x, b.constant("axes", i64({1}, {-1}))}, {{"keepdims", attr_int(1)}}));
    Compiled c = compile(b.build());
    Executor exec(c.model.plan, c.model.dir);
    auto out = exec.run({f32({2, n}, v)});
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 1}));
    for (int r = 0; r < 2; ++r) {
      const double want = sum_of(r * n, n);
      EXPECT_LE(std::abs(out[0].as<float>()[r] - want), 2e-6 * want) << "row " << r;
    }
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {Dim::symbol("n")});
    b.output(b.op("ReduceSum", {x}, {{"keepdims", attr_int(0)}}));
    Compiled c = compile(b.build());
    Executor exec(c.model.plan, c.model.dir);
    auto out = exec.run({f32({2 * n}, v)});
    const double want = sum_of(0, 2 * n);
    EXPECT_LE(std::abs(out[0].as<float>()[0] - want), 2e-6 * want);
  }
}

// Runs a kernel of two [n, 12, len, 64] inputs (attention heads) at three
// shapes and checks each output element against want(x, y, i), i its flat
// index.
template <class Want>
void expect_heads_match(Executor &exec, const Want &want) {
  for (auto [n, len] : {std::pair<int64_t, int64_t>{1, 128}, {2, 5}, {3, 77}}) {
    const std::vector<int64_t> dims = {n, 12, len, 64};
    const int64_t count = n * 12 * len * 64;
    TensorData x = f32(dims, values(count, 6)), y = f32(dims, values(count, 7));
    auto out = exec.run({x, y});
    ASSERT_EQ(out[0].shape, dims);
    const float *px = x.as<float>(), *py = y.as<float>(), *po = out[0].as<float>();
    for (int64_t i = 0; i < count; ++i) ASSERT_EQ(po[i], want(px, py, i)) << n << "x12x" << len << "x64, element " << i;
  }
}

// A rotary embedding's half swap, as LLaMA-style blocks export it:
// Concat(-x[..., 32:], x[..., :32]) along the innermost axis of 64, times
// cos. The loop template unrolls the row's 4 vectors, so each vector lies in
// one piece and reads it densely; as a loop of vectors each lane clamped
// its own index into both pieces and selected, a gather per lane.
Graph rotate_half() {
  GraphBuilder b;
  const Shape s = {Dim::symbol("b"), Dim(12), Dim::symbol("s"), Dim(64)};
  auto x = b.input("x", DType::F32, s);
  auto cos = b.input("cos", DType::F32, s);
  auto half = [&](int64_t from, int64_t to) {
    return b.op("Slice", {x, b.constant("starts" + std::to_string(from), i64({1}, {from})),
                          b.constant("ends" + std::to_string(from), i64({1}, {to})),
                          b.constant("axes" + std::to_string(from), i64({1}, {-1}))});
  };
  auto rotated = b.op("Concat", {b.op("Neg", {half(32, 64)}), half(0, 32)}, {{"axis", attr_int(-1)}});
  b.output(b.op("Mul", {rotated, cos}));
  return b.build();
}

TEST(X86Schedule, ConcatAlongAShortInnermostAxisReadsEachPieceDensely) {
  std::string stmt;
  Compiled c = compile_with_stmts(rotate_half(), "rotate_half_stmt", &stmt);
  // Every vector store of an output reads whole vectors: no select between
  // the pieces and no clamped lanes ("min(ramp(" is a gather).
  std::istringstream lines(stmt);
  int stores = 0;
  for (std::string line; std::getline(lines, line);) {
    // A store: the line starts with an output's name and a vector index.
    const size_t at = line.find_first_not_of(' '), store = line.find("_out0[ramp(");
    if (at == std::string::npos || store == std::string::npos || line.find(' ', at) < store) continue;
    ++stores;
    EXPECT_EQ(line.find("select("), std::string::npos) << line;
    EXPECT_EQ(line.find("min(ramp("), std::string::npos) << line;
    EXPECT_EQ(line.find("max(ramp("), std::string::npos) << line;
  }
  EXPECT_GT(stores, 0) << "no vector store of an output: the test reads the wrong statements\n" << stmt;
  Executor exec(c.model.plan, c.model.dir);
  expect_heads_match(exec, [](const float *x, const float *cos, int64_t i) {
    const float rotated = i % 64 < 32 ? -x[i + 32] : x[i - 32];
    return rotated * cos[i];
  });
}

// A loop kernel's rows of [b, 12, s, 64] in tasks of nested loops: a task
// rebuilds its rows' indices once, not a division and a remainder by each
// symbolic extent per row (a third of the time of LLaMA's rotary kernels,
// 64 floats a row). In the task's function, no remainder inside its loops.
TEST(X86Schedule, LoopKernelRowsOfSeveralDimsAreNestedLoopsWithoutDivisions) {
  GraphBuilder b;
  const Shape shape = {Dim::symbol("b"), Dim(12), Dim::symbol("s"), Dim(64)};
  auto x = b.input("x", DType::F32, shape), y = b.input("y", DType::F32, shape);
  b.output(b.op("Mul", {b.op("Relu", {x}), y}));
  std::string stmt;
  Compiled c = compile_with_stmts(b.build(), "nested_rows_stmt", &stmt);
  const size_t task = stmt.find("_par_for_");
  ASSERT_NE(task, std::string::npos) << stmt;
  const size_t loop = stmt.find("for (", task), end = stmt.find("\n}", task);
  ASSERT_LT(loop, end) << stmt;
  // Remainders of indices (not of a vector by a broadcast constant, "% x16(",
  // as the NaN-keeping Relu's sign mask is).
  const std::string body = stmt.substr(loop, end - loop);
  for (size_t at = body.find(" % "); at != std::string::npos; at = body.find(" % ", at + 1))
    EXPECT_FALSE(body[at + 3] != 'x' || !std::isdigit(static_cast<unsigned char>(body[at + 4])))
        << "a remainder of an index inside the task's loops: " << body.substr(at, 60) << "\n"
        << stmt.substr(task, end - task);
  Executor exec(c.model.plan, c.model.dir);
  expect_heads_match(exec, [](const float *x, const float *y, int64_t i) { return std::max(x[i], 0.0f) * y[i]; });
}

TEST(X86Schedule, LoopAndStitchKernelsOfSymbolicShapesHaveSmallAndDenseBranches) {
  EXPECT_EQ(compile(broadcast_add()).schedules, std::vector<std::string>{"loop, branches: small dense"});
  EXPECT_EQ(compile(row_softmax()).schedules, std::vector<std::string>{"stitch, branches: small dense"});
}

TEST(X86Schedule, StaticShapesGetNoBranches) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim(64), Dim(768)});
  b.output(b.op("Softmax", {x}, {{"axis", attr_int(-1)}}));
  Compiled c = compile(b.build());
  EXPECT_EQ(c.schedules, std::vector<std::string>{"stitch"});
}

}  // namespace
}  // namespace disco
