// The x86 schedules of the data-movement ops (schedules/x86_schedule.cc)
// against numpy (tests/references/make_datamove_references.py), each at a
// shape whose tiled axes are whole tiles and at one whose axes are not:
// compiled with symbolic extents, the two shapes take the aligned
// specialization and the generic branch of one kernel; compiled with the
// shape's own extents, the aligned shape takes the block schedule with no
// branch and the odd one the plain tiles.
#include <gtest/gtest.h>

#include <cstring>

#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/npy.h"
#include "tests/support/host_schedules.h"
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

}  // namespace
}  // namespace disco
