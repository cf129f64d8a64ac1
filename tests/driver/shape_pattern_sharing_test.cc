// Issue #26, kernels keyed by their symbolic shape pattern
// (targets/host/shape_pattern.h): groups that apply the same ops at different
// symbolic extents share one kernel, models that differ only in their axis
// names share every kernel through the kernel store, and groups whose extents
// differ in a fact the kernel may rely on do not share. Outputs are checked
// against plain loops at several shapes, so a kernel shared where it must not
// be (one that took another group's extents or facts) fails them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::attrs;
using testing::random_f32;

constexpr int64_t kChannels = 16;
// Each level's chain has constants of its own: they are kernel arguments, not code.
constexpr float kScale[] = {1.5f, 0.75f, 2.0f}, kShift[] = {0.25f, -0.5f, 0.125f}, kBias[] = {0.125f, 0.5f, -0.25f};

CompileOptions host_options() {
  CompileOptions o;
  o.backends = {"host"};
  o.use_cache = false;
  return o;
}

// Level i's chain; `tag` tells apart the constants of several chains of one level.
std::string chain(GraphBuilder &gb, const std::string &x, int i, const std::string &tag = "") {
  const std::string s = std::to_string(i) + tag;
  std::string y = gb.op("Mul", {x, gb.constant("scale" + s, testing::f32({}, {kScale[i]}))});
  y = gb.op("Add", {y, gb.constant("shift" + s, testing::f32({}, {kShift[i]}))});
  y = gb.op("Mul", {y, gb.op("Sigmoid", {y})});
  return gb.op("Sub", {y, gb.constant("bias" + s, testing::f32({}, {kBias[i]}))});
}

float chain_ref(float x, int i) {
  const float y = x * kScale[i] + kShift[i];
  return y / (1 + std::exp(-y)) - kBias[i];
}

// A 5-op activation chain (Mul, Add, Sigmoid, Mul, Sub) at three pyramid
// levels: x [n, 16, h, w], then two 2x2 max pools of it, whose extents are
// floor(h / 2) and floor(floor(h / 2) / 2) as symbolic expressions.
Graph pyramid(const std::string &n, const std::string &h, const std::string &w) {
  GraphBuilder gb(17);
  std::string level = gb.input("x", DType::F32, {Dim::symbol(n), kChannels, Dim::symbol(h), Dim::symbol(w)});
  for (int i = 0; i < 3; ++i) {
    if (i)
      level = gb.op("MaxPool", {level}, attrs({{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}));
    gb.output(chain(gb, level, i));
  }
  return gb.build();
}

struct Level {
  std::vector<float> v;
  int64_t n, h, w;
};

Level pool(const Level &a) {
  Level b{{}, a.n, a.h / 2, a.w / 2};
  for (int64_t p = 0; p < a.n * kChannels; ++p)
    for (int64_t y = 0; y < b.h; ++y)
      for (int64_t x = 0; x < b.w; ++x) {
        float m = -INFINITY;
        for (int64_t dy = 0; dy < 2; ++dy)
          for (int64_t dx = 0; dx < 2; ++dx) m = std::max(m, a.v[(p * a.h + 2 * y + dy) * a.w + 2 * x + dx]);
        b.v.push_back(m);
      }
  return b;
}

void expect_pyramid_matches_loops(const CompiledModel &m) {
  Executor exec(m.plan, m.dir);
  for (const std::vector<int64_t> &shape : {std::vector<int64_t>{1, kChannels, 8, 12}, {2, kChannels, 13, 7}}) {
    const TensorData x = random_f32(shape, 11);
    const auto out = exec.run({x});
    ASSERT_EQ(out.size(), 3u);
    Level level{std::vector<float>(x.as<float>(), x.as<float>() + x.num_elements()), shape[0], shape[2], shape[3]};
    for (int i = 0; i < 3; ++i) {
      if (i) level = pool(level);
      EXPECT_EQ(out[i].shape, (std::vector<int64_t>{level.n, kChannels, level.h, level.w})) << "level " << i;
      ASSERT_EQ(out[i].num_elements(), static_cast<int64_t>(level.v.size()));
      for (size_t e = 0; e < level.v.size(); ++e)
        ASSERT_NEAR(out[i].as<float>()[e], chain_ref(level.v[e], i), 1e-5)
            << "level " << i << " element " << e << " at input " << dims_str(shape);
    }
  }
}

// The distinct kernels of the steps whose label names `op`.
std::set<std::string> kernels_computing(const Plan &plan, const std::string &op, size_t *steps) {
  std::set<std::string> k;
  *steps = 0;
  for (const auto &st : plan.steps)
    if (!st.kernel.empty() && st.label.find(op) != std::string::npos) {
      k.insert(st.kernel);
      ++*steps;
    }
  return k;
}

TEST(KernelSharing, PyramidLevelsWithSymbolicExtentsShareOneKernel) {
  const CompiledModel m = compile_graph(pyramid("n", "h", "w"), "pyramid", "", host_options());
  size_t steps = 0;
  EXPECT_EQ(kernels_computing(m.plan, "Sigmoid", &steps).size(), 1u)
      << "the levels' chains differ only in their extents and constants";
  EXPECT_EQ(steps, 3u);
  EXPECT_EQ(kernels_computing(m.plan, "MaxPool", &steps).size(), 1u) << "so do the two pools";
  EXPECT_EQ(steps, 2u);
  EXPECT_EQ(m.profile.kernels, 5);
  EXPECT_EQ(m.profile.unique_kernels, 2);
  expect_pyramid_matches_loops(m);
}

// The same model exported twice with other names for its dynamic axes.
TEST(KernelSharing, ModelsDifferingInAxisNamesShareEveryKernelThroughTheStore) {
  const std::string cache =
      std::filesystem::temp_directory_path() / ("disco-axis-names-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(cache);
  CompileOptions o;
  o.backends = {"host"};
  o.cache_dir = cache;
  const CompiledModel a = compile_graph(pyramid("n", "h", "w"), "first", "key-a", o);
  EXPECT_EQ(a.profile.stored_kernels, 0) << "the cache was empty";
  const CompiledModel b = compile_graph(pyramid("batch", "height", "width"), "second", "key-b", o);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_EQ(b.profile.unique_kernels, 2);
  EXPECT_EQ(b.profile.stored_kernels, b.profile.unique_kernels) << "every kernel comes from the first model";
  expect_pyramid_matches_loops(b);
  std::filesystem::remove_all(cache);
}

// Transposes of [16 m, 16 q] (a Flatten of x [m, 16, q, 16]: both extents
// multiples of 16) and of z [k, j] and u [i, l] (bare symbols). The x86
// transpose template rounds the tiles of the first up to whole vectors, with
// no tail, where it proves both extents are multiples of the vector width, so
// that kernel must not serve z or u; z's and u's groups are alike in every
// fact and share.
TEST(KernelSharing, GroupsDifferingInAKeyedFactDoNotShare) {
  GraphBuilder gb(17);
  const Dim m = Dim::symbol("m"), q = Dim::symbol("q");
  const std::string x = gb.input("x", DType::F32, {m, kChannels, q, kChannels});
  const std::string z = gb.input("z", DType::F32, {Dim::symbol("k"), Dim::symbol("j")});
  const std::string u = gb.input("u", DType::F32, {Dim::symbol("i"), Dim::symbol("l")});
  const std::string flat = gb.op("Flatten", {x}, attrs({{"axis", attr_int(2)}}));
  gb.output(flat);  // then the Flatten is a group of its own, not part of the Transpose's
  for (const std::string &t : {flat, z, u}) gb.output(gb.op("Transpose", {t}, attrs({{"perm", attr_ints({1, 0})}})));
  const CompiledModel c = compile_graph(gb.build(), "facts", "", host_options());
  std::vector<std::string> transposes;
  for (const auto &st : c.plan.steps)
    if (st.label.find("Transpose") != std::string::npos) transposes.push_back(st.kernel);
  ASSERT_EQ(transposes.size(), 3u);
  EXPECT_NE(transposes[0], transposes[1]) << "16 m and 16 q are multiples of 16, k and j are not";
  EXPECT_EQ(transposes[1], transposes[2]) << "k, j and i, l have the same facts";

  Executor exec(c.plan, c.dir);
  for (const auto &[rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {3, 1}, {2, 3}}) {
    const TensorData xs = random_f32({rows, kChannels, cols, kChannels}, 5);
    const TensorData zs = random_f32({16 * rows + 3, 16 * cols + 5}, 6), us = random_f32({16 * cols, 16 * rows}, 7);
    const auto out = exec.run({xs, zs, us});
    ASSERT_EQ(out.size(), 4u);
    const std::pair<const TensorData *, std::vector<int64_t>> cases[] = {
        {&xs, {16 * rows, 16 * cols}}, {&zs, zs.shape}, {&us, us.shape}};
    for (int o = 0; o < 3; ++o) {
      const auto &[in, shape] = cases[o];
      const TensorData &t = out[o + 1];
      ASSERT_EQ(t.shape, (std::vector<int64_t>{shape[1], shape[0]})) << "transpose " << o;
      for (int64_t r = 0; r < shape[0]; ++r)
        for (int64_t col = 0; col < shape[1]; ++col)
          ASSERT_EQ(t.as<float>()[col * shape[0] + r], in->as<float>()[r * shape[1] + col])
              << "transpose " << o << " at (" << r << ", " << col << ") of " << dims_str(shape);
    }
  }
}

}  // namespace
}  // namespace disco
