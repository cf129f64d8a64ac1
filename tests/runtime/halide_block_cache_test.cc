// runtime/halide_block_cache.h: large blocks come back for requests of the
// same size instead of fresh pages, small ones go to the C library, every
// block is aligned as Halide needs and holds its bytes, the cache is bounded
// and safe to use from several threads; and a kernel library's large stage
// stops faulting in fresh pages on every run.
#include "runtime/halide_block_cache.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "driver/session.h"
#include "frontend/graph_builder.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace disco {
namespace {

TEST(HalideBlockCache, ALargeFreedBlockIsHandedOutAgainForTheSameSize) {
  halide_block_cache_clear();
  void *a = halide_block_malloc(nullptr, 1 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 128, 0u);
  std::memset(a, 1, 1 << 20);  // all of it is usable
  halide_block_free(nullptr, a);
  EXPECT_EQ(halide_block_cache_bytes(), size_t(1) << 20);
  void *b = halide_block_malloc(nullptr, (1 << 20) - 5);  // rounds to the same size
  EXPECT_EQ(b, a);
  EXPECT_EQ(halide_block_cache_bytes(), 0u);
  void *c = halide_block_malloc(nullptr, 2 << 20);  // another size: a new block
  EXPECT_NE(c, a);
  halide_block_free(nullptr, b);
  halide_block_free(nullptr, c);
  EXPECT_EQ(halide_block_cache_bytes(), size_t(3) << 20);
  halide_block_cache_clear();
  EXPECT_EQ(halide_block_cache_bytes(), 0u);
}

TEST(HalideBlockCache, SmallBlocksAreNotKeptAndEveryBlockIsAligned) {
  halide_block_cache_clear();
  for (size_t bytes : {1, 100, 4096, 65000}) {  // 65000 rounds to 65024, under 64 KiB
    void *p = halide_block_malloc(nullptr, bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u) << bytes;
    std::memset(p, 7, bytes);
    halide_block_free(nullptr, p);
  }
  EXPECT_EQ(halide_block_cache_bytes(), 0u);
  halide_block_free(nullptr, nullptr);  // as free(NULL)
}

TEST(HalideBlockCache, TheCacheIsBoundedAndSafeAcrossThreads) {
  halide_block_cache_clear();
  // 640 MiB freed at once: no more than the 512 MiB bound stays cached.
  std::vector<void *> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(halide_block_malloc(nullptr, size_t(128) << 20));
  for (void *b : blocks) halide_block_free(nullptr, b);
  EXPECT_LE(halide_block_cache_bytes(), size_t(512) << 20);
  EXPECT_GE(halide_block_cache_bytes(), size_t(384) << 20);
  halide_block_cache_clear();
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t bytes = (size_t(64) << 10) * (1 + (i + t) % 3);
        char *p = static_cast<char *>(halide_block_malloc(nullptr, bytes));
        p[0] = static_cast<char>(t), p[bytes - 1] = static_cast<char>(i);
        EXPECT_EQ(p[0], static_cast<char>(t));
        halide_block_free(nullptr, p);
      }
    });
  for (auto &t : ts) t.join();
  EXPECT_LE(halide_block_cache_bytes(), size_t(4 * 3) * (192 << 10));
  halide_block_cache_clear();
}

long minor_faults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// A bilinear 2x Resize computes its first pass at root: 16 x 64 x 64 x 128
// floats, 8,192 pages. With the cache installed in the kernel library the
// pass's block comes back run after run: ten runs fault in fewer pages than
// one pass has (before, 8,193 a run).
TEST(HalideBlockCache, AKernelsLargeStageFaultsInNoFreshPagesRunAfterRun) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("b"), 64, 64, 64});
  TensorData scales(DType::F32, {4});
  const float scale[4] = {1, 1, 2, 2};
  for (int i = 0; i < 4; ++i) scales.mutable_as<float>()[i] = scale[i];
  b.output(b.op("Resize", {x, "", b.constant("scales", scales)}, {{"mode", attr_string("linear")}}));
  Session s(b.build(), "block_cache_resize", "", CompileOptions{});
  TensorData in(DType::F32, {16, 64, 64, 64});
  float *p = in.mutable_as<float>();
  for (int64_t i = 0; i < in.num_elements(); ++i) p[i] = static_cast<float>(i % 97);
  std::vector<TensorData> out;
  s.run({in}, out);
  s.run({in}, out);  // outputs and the cache's blocks in place
  const long before = minor_faults();
  for (int r = 0; r < 10; ++r) s.run({in}, out);
  const long faults = minor_faults() - before;
  EXPECT_LT(faults, 8192) << "pages faulted in over ten runs";
  // The numbers are a bilinear upsample's: an interior value is the mean of its neighbours' weights.
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{16, 64, 128, 128}));
  const float *y = out[0].as<float>();
  // half_pixel: output 2j+1 (j < 63) mixes input j and j+1 as 3:1.
  const float a = p[5 * 64 + 10], c = p[5 * 64 + 11], want = 0.75f * a + 0.25f * c;
  // Row 10 of the output (from input rows 4 and 5 as 1:3), column 21 (inputs 10 and 11 as 3:1).
  const float r4 = 0.75f * p[4 * 64 + 10] + 0.25f * p[4 * 64 + 11], r5 = want;
  EXPECT_NEAR(y[10 * 128 + 21], 0.25f * r4 + 0.75f * r5, 1e-4f);
}

}  // namespace
}  // namespace disco
