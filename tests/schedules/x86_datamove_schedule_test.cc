// The x86 schedules of the data-movement ops (schedules/x86_schedule.cc)
// against numpy (tests/references/make_datamove_references.py), each at a
// shape whose tiled axes are whole tiles (or vectors) and at one whose axes
// are not. Transposes compiled with symbolic extents take the aligned
// specialization and the generic branch of one kernel at the two shapes;
// compiled with the shape's own extents, the aligned shape takes the block
// schedule with no branch and the odd one the plain tiles. Pools run in two
// passes (window rows, then the fold down them) at both.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/npy.h"
#include "tests/support/host_schedules.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

struct Reference {
  TensorData input, output;
};

std::string tag(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Reference reference(const std::string &name, const std::vector<int64_t> &shape) {
  const std::string base = references_dir() + "/datamove/" + name + "." + tag(shape);
  return {read_npy(base + ".input.npy"), read_npy(base + ".output.npy")};
}

// Transpose of x; its dims symbolic (but the first, always) or the shape's own.
Graph transpose_graph(DType t, const std::vector<int64_t> &shape, const std::vector<int64_t> &perm, bool symbolic) {
  GraphBuilder b;
  Shape s{Dim::symbol("d0")};
  for (size_t i = 1; i < shape.size(); ++i) s.push_back(symbolic ? Dim::symbol("d" + std::to_string(i)) : Dim(shape[i]));
  b.output(b.op("Transpose", {b.input("x", t, s)}, attrs({{"perm", attr_ints(perm)}})));
  return b.build();
}

void expect_equal(const TensorData &got, const TensorData &want, const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.dtype, want.dtype) << what;
  const size_t bytes = want.num_elements() * dtype_size(want.dtype);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0) << what;
}

struct TransposeCase {
  std::string name;
  std::vector<int64_t> perm;
  DType dtype;
  std::vector<int64_t> aligned, odd;
};

const std::vector<TransposeCase> kTransposes = {
    {"transpose_0312", {0, 3, 1, 2}, DType::F32, {2, 16, 8, 24}, {2, 13, 11, 19}},
    {"transpose_0231", {0, 2, 3, 1}, DType::F32, {2, 16, 8, 24}, {2, 13, 11, 19}},
    {"transpose_021", {0, 2, 1}, DType::F32, {3, 40, 24}, {3, 21, 35}},
    {"transpose_021_i64", {0, 2, 1}, DType::I64, {2, 8, 12}, {2, 5, 7}},
};

TEST(X86DatamoveSchedule, TransposesOfSymbolicExtentsMatchNumpyInBothBranches) {
  for (const auto &c : kTransposes) {
    HostCompiled k = compile_on_host(transpose_graph(c.dtype, c.aligned, c.perm, true), "transpose");
    Executor exec(k.model.plan, k.model.dir);
    for (const auto &shape : {c.aligned, c.odd}) {
      Reference r = reference(c.name, shape);
      expect_equal(exec.run({r.input})[0], r.output, c.name + " at " + tag(shape));
    }
  }
}

TEST(X86DatamoveSchedule, TransposesOfStaticExtentsMatchNumpy) {
  for (const auto &c : kTransposes)
    for (const auto &shape : {c.aligned, c.odd}) {
      HostCompiled k = compile_on_host(transpose_graph(c.dtype, shape, c.perm, false), "transpose");
      Executor exec(k.model.plan, k.model.dir);
      Reference r = reference(c.name, shape);
      expect_equal(exec.run({r.input})[0], r.output, c.name + " at " + tag(shape) + ", static");
    }
}

// A Transpose of a Relu in the same kernel: the staged block computes the
// Relu over the block. Relu commutes with the permutation, so numpy's
// transpose with its negatives zeroed is the reference.
TEST(X86DatamoveSchedule, TransposeOfAFusedProducerMatchesNumpy) {
  const TransposeCase &c = kTransposes[1];
  GraphBuilder b;
  Shape s{Dim::symbol("d0"), Dim::symbol("d1"), Dim::symbol("d2"), Dim::symbol("d3")};
  auto relu = b.op("Relu", {b.input("x", DType::F32, s)});
  b.output(b.op("Transpose", {relu}, attrs({{"perm", attr_ints(c.perm)}})));
  HostCompiled k = compile_on_host(b.build(), "relu_transpose");
  ASSERT_EQ(k.schedules.size(), 1u) << "Relu and Transpose in one kernel";
  Executor exec(k.model.plan, k.model.dir);
  for (const auto &shape : {c.aligned, c.odd}) {
    Reference r = reference(c.name, shape);
    float *want = r.output.mutable_as<float>();
    for (int64_t i = 0; i < r.output.num_elements(); ++i) want[i] = want[i] > 0 ? want[i] : 0;
    expect_equal(exec.run({r.input})[0], r.output, "relu then " + c.name + " at " + tag(shape));
  }
}

// ---- MaxPool / AveragePool 3x3 stride 2 (two passes: lowering/ops/conv_ops.cc)

struct PoolCase {
  std::string name, op;
  int64_t pad, count_include_pad;
  std::vector<int64_t> aligned, odd;  // aligned: a whole number of vectors per output row
};

const std::vector<PoolCase> kPools = {
    {"maxpool_3x3_s2_pad1", "MaxPool", 1, 0, {2, 3, 16, 32}, {2, 3, 13, 11}},
    {"maxpool_3x3_s2", "MaxPool", 0, 0, {2, 3, 17, 33}, {2, 3, 13, 11}},
    {"avgpool_3x3_s2_pad1", "AveragePool", 1, 0, {2, 3, 16, 32}, {2, 3, 13, 11}},
    {"avgpool_3x3_s2_pad1_include_pad", "AveragePool", 1, 1, {2, 3, 16, 32}, {2, 3, 13, 11}},
    {"avgpool_3x3_s2", "AveragePool", 0, 0, {2, 3, 17, 33}, {2, 3, 13, 11}},
};

Graph pool_graph(const PoolCase &c, const std::vector<int64_t> &shape, bool symbolic) {
  GraphBuilder b;
  Shape s{Dim::symbol("n"), shape[1]};
  for (int i = 2; i < 4; ++i) s.push_back(symbolic ? Dim::symbol("d" + std::to_string(i)) : Dim(shape[i]));
  Attributes a = attrs({{"kernel_shape", attr_ints({3, 3})},
                        {"strides", attr_ints({2, 2})},
                        {"pads", attr_ints({c.pad, c.pad, c.pad, c.pad})}});
  if (c.op == "AveragePool") a["count_include_pad"] = attr_int(c.count_include_pad);
  b.output(b.op(c.op, {b.input("x", DType::F32, s)}, a));
  return b.build();
}

// Each case against its reference at its aligned and odd shapes: compiled once
// with symbolic extents for both, or once per shape with the shape's own.
template <class Case, class MakeGraph>
void expect_cases_match(const std::vector<Case> &cases, MakeGraph graph, bool symbolic, double tol) {
  for (const auto &c : cases) {
    std::optional<HostCompiled> once;
    if (symbolic) once.emplace(compile_on_host(graph(c, c.aligned, true), c.name));
    for (const auto &shape : {c.aligned, c.odd}) {
      const HostCompiled k = symbolic ? *once : compile_on_host(graph(c, shape, false), c.name);
      Executor exec(k.model.plan, k.model.dir);
      Reference r = reference(c.name, shape);
      EXPECT_LE(closeness(exec.run({r.input})[0], r.output, tol, tol), 1.0) << c.name << " at " << tag(shape);
    }
  }
}

TEST(X86DatamoveSchedule, PoolsOfSymbolicExtentsMatchNumpy) { expect_cases_match(kPools, pool_graph, true, 1e-6); }

TEST(X86DatamoveSchedule, PoolsOfStaticExtentsMatchNumpy) { expect_cases_match(kPools, pool_graph, false, 1e-6); }

// ---- Resize, 2-D (lowering/ops/resize_ops.cc): per-plane passes; for power-of-two
// scales with half_pixel coordinates the columns' pass reads edge-padded rows at
// affine taps (plane_pass_output); for integer scales with align_corners it selects
// two of three such taps per output.

struct ResizeCase {
  std::string name, mode, ctm;
  float scale;
  std::vector<int64_t> aligned, odd;
};

const std::vector<ResizeCase> kResizes = {
    {"resize_linear_2x", "linear", "half_pixel", 2, {2, 3, 8, 16}, {2, 3, 5, 7}},
    {"resize_cubic_2x", "cubic", "half_pixel", 2, {2, 3, 8, 16}, {2, 3, 5, 7}},
    {"resize_linear_4x", "linear", "half_pixel", 4, {1, 2, 4, 8}, {1, 2, 3, 5}},
    {"resize_linear_align_corners_2x", "linear", "align_corners", 2, {2, 3, 8, 16}, {2, 3, 5, 7}},
    {"resize_linear_align_corners_3x", "linear", "align_corners", 3, {1, 2, 4, 8}, {1, 2, 3, 5}},
    // Scales that are not whole (make_datamove_references.py says why).
    {"resize_linear_align_corners_1_5x", "linear", "align_corners", 1.5f, {1, 2, 4, 8}, {1, 2, 5, 7}},
    {"resize_cubic_align_corners_0_6x", "cubic", "align_corners", 0.6f, {1, 2, 10, 20}, {1, 2, 4, 4}},
    {"resize_nearest_0_3x", "nearest", "asymmetric", 0.3f, {1, 2, 10, 20}, {1, 2, 17, 33}},
    {"resize_nearest_1_3x", "nearest", "asymmetric", 1.3f, {1, 2, 10, 20}, {1, 2, 17, 33}},
};

Graph resize_graph(const ResizeCase &c, const std::vector<int64_t> &shape, bool symbolic) {
  GraphBuilder b;
  Shape s{Dim::symbol("n"), shape[1]};
  for (int i = 2; i < 4; ++i) s.push_back(symbolic ? Dim::symbol("d" + std::to_string(i)) : Dim(shape[i]));
  TensorData scales(DType::F32, {4});
  const float sc[4] = {1, 1, c.scale, c.scale};
  for (int i = 0; i < 4; ++i) scales.mutable_as<float>()[i] = sc[i];
  b.output(b.op("Resize", {b.input("x", DType::F32, s), "", b.constant("scales", scales)},
                attrs({{"mode", attr_string(c.mode)},
                       {"coordinate_transformation_mode", attr_string(c.ctm)},
                       {"cubic_coeff_a", attr_float(-0.75f)},
                       {"nearest_mode", attr_string("floor")}})));  // PyTorch's nearest
  return b.build();
}

TEST(X86DatamoveSchedule, ResizesOfSymbolicExtentsMatchPyTorch) {
  expect_cases_match(kResizes, resize_graph, true, 1e-5);
}

TEST(X86DatamoveSchedule, ResizesOfStaticExtentsMatchPyTorch) {
  expect_cases_match(kResizes, resize_graph, false, 1e-5);
}

}  // namespace
}  // namespace disco
