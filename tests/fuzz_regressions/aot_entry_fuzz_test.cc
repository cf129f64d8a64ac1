// The AOT entry points with bad buffer descriptors (issue #23; fuzz/fuzz_aot_entry.cc
// fuzzes them): each kind of bad argument gives a non-zero return and a message
// naming the argument, never a crash; a good run is checked against plain loops.
// The library is fuzz/aot/fuzz_model.onnx compiled by this build's disco
// (a: float32 [batch, seq, 8], b: float32 [seq, 1], c: int64 [n], d: bool [seq];
// y, z, w, r, v as fuzz/aot/make_model.py says).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#define DISCO_AOT_OWN_HALIDE_TYPES
#include "aot_fuzz_regress.h"

namespace {

struct Buf {
  halide_buffer_t b{};
  std::vector<halide_dimension_t> dims;
  std::vector<uint8_t> mem;
  // Dense row-major, shape in ONNX order; memory for it unless `host` is false.
  Buf(std::vector<int> shape, uint8_t code, uint8_t bits, bool host = true) {
    dims.resize(shape.size());
    int64_t stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      const int e = shape[shape.size() - 1 - i];
      dims[i] = {0, e, (int32_t)stride, 0};
      stride *= e;
    }
    b.type.code = code;
    b.type.bits = bits;
    b.type.lanes = 1;
    b.dimensions = (int32_t)shape.size();
    b.dim = dims.data();
    if (host) {
      mem.assign((size_t)stride * ((bits + 7) / 8) + 1, 0);
      b.host = mem.data();
    }
  }
  template <typename T>
  T *as() { return reinterpret_cast<T *>(mem.data()); }
};

constexpr uint8_t kInt = 0, kUInt = 1, kFloat = 2;

struct Call {
  int batch, seq, n;
  Buf a, b, c, d, y, z, w, r, v;
  Call(int batch_, int seq_, int n_)
      : batch(batch_), seq(seq_), n(n_), a({batch, seq, 8}, kFloat, 32), b({seq, 1}, kFloat, 32), c({n}, kInt, 64),
        d({seq}, kUInt, 1), y({batch, seq, 4}, kFloat, 32), z({batch, seq}, kFloat, 32), w({2 * n}, kInt, 64),
        r({2 * batch * seq, 4}, kFloat, 32), v({batch, seq}, kFloat, 32) {}
  const halide_buffer_t *in[4] = {&a.b, &b.b, &c.b, &d.b};
  halide_buffer_t *out[5] = {&y.b, &z.b, &w.b, &r.b, &v.b};
  // The error of a run ("" when it succeeds).
  std::string run() {
    const int rc = aot_fuzz_regress_run_arrays(in, out);
    const std::string e = aot_fuzz_regress_last_error();
    EXPECT_EQ(rc != 0, !e.empty()) << e;
    return rc == 0 ? "" : e;
  }
};

TEST(AotEntryFuzz, GoodRunMatchesPlainLoops) {
  Call k(2, 3, 5);
  for (int i = 0; i < 2 * 3 * 8; ++i) k.a.as<float>()[i] = std::sin(0.37f * i);
  for (int i = 0; i < 3; ++i) k.b.as<float>()[i] = 0.25f * i - 0.3f;
  for (int i = 0; i < 5; ++i) k.c.as<int64_t>()[i] = i - 2;
  for (int i = 0; i < 3; ++i) k.d.as<uint8_t>()[i] = i % 2;
  ASSERT_EQ(k.run(), "");
  auto W = [](int i, int j) { return ((i * 7 + j * 3) % 11 - 5) / 8.0; };
  for (int bs = 0; bs < 6; ++bs) {
    const float *a = k.a.as<float>() + bs * 8;
    const double bias = k.b.as<float>()[bs % 3];
    double logits[4], mx = -1e30, sum = 0, mean = 0;
    for (int j = 0; j < 4; ++j) {
      logits[j] = 0;
      for (int i = 0; i < 8; ++i) logits[j] += std::max(0.0, a[i] + bias) * W(i, j);
      mx = std::max(mx, logits[j]);
    }
    for (int j = 0; j < 4; ++j) sum += std::exp(logits[j] - mx);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(k.y.as<float>()[bs * 4 + j], std::exp(logits[j] - mx) / sum, 1e-5);
    for (int i = 0; i < 8; ++i) mean += a[i] / 8.0;
    EXPECT_NEAR(k.z.as<float>()[bs], mean, 1e-5);
    EXPECT_NEAR(k.v.as<float>()[bs], bs % 3 % 2 ? mean : -mean, 1e-5);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(k.r.as<float>()[bs * 8 + i], 2 * a[i]);
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(k.w.as<int64_t>()[i], i - 2);
    EXPECT_EQ(k.w.as<int64_t>()[5 + i], (i - 2) * (i - 2));
  }
}

TEST(AotEntryFuzz, EmptyTensorsNeedNoHost) {
  Call k(0, 3, 0);
  k.a.b.host = k.c.b.host = k.y.b.host = k.w.b.host = nullptr;
  k.z.b.host = k.r.b.host = k.v.b.host = nullptr;
  EXPECT_EQ(k.run(), "");
}

TEST(AotEntryFuzz, NullArraysAndBuffers) {
  Call k(1, 2, 1);
  EXPECT_NE(aot_fuzz_regress_run_arrays(nullptr, k.out), 0);
  EXPECT_NE(std::string(aot_fuzz_regress_last_error()).find("must not be null"), std::string::npos);
  EXPECT_NE(aot_fuzz_regress_output_shapes_arrays(k.in, nullptr), 0);
  k.in[2] = nullptr;
  EXPECT_EQ(k.run(), "input 'c' is a null pointer");
  k.in[2] = &k.c.b;
  k.out[3] = nullptr;
  EXPECT_EQ(k.run(), "output 'r' is a null pointer");
}

TEST(AotEntryFuzz, BadDescriptorsNameTheArgument) {
  auto expect = [](const std::function<void(Call &)> &spoil, const std::string &part) {
    Call k(2, 3, 4);
    spoil(k);
    const std::string e = k.run();
    EXPECT_NE(e.find(part), std::string::npos) << "error: '" << e << "', expected it to contain '" << part << "'";
  };
  expect([](Call &k) { k.a.b.dimensions = 2; }, "input 'a' has rank 2, expected rank 3");
  expect([](Call &k) { k.b.b.dim = nullptr; }, "input 'b' has rank 2 but no dim array");
  expect([](Call &k) { k.a.b.type.lanes = 4; }, "input 'a' has dtype a vector type (4 lanes), expected float32");
  expect([](Call &k) { k.d.b.type.bits = 8; }, "input 'd' has dtype uint8, expected bool");
  expect([](Call &k) { k.c.b.type.code = 3; }, "input 'c' has dtype type code 3, expected int64");
  expect([](Call &k) { k.a.dims[1].min = 1; }, "input 'a' dim 1 has min 1");
  expect([](Call &k) { k.a.dims[1].stride = 16; }, "input 'a' dim 1 has stride 16, expected 8");
  expect([](Call &k) { k.a.dims[2].extent = -1; }, "input 'a' dim 0 is -1, expected a size >= 0");
  expect(
      [](Call &k) {
        k.a.dims[0].extent = 7;  // dense [2, 3, 7] in a's memory for [2, 3, 8]
        k.a.dims[1].stride = 7;
        k.a.dims[2].stride = 21;
      },
      "input 'a' dim 2 is 7, expected 8 (fixed by the model)");
  expect([](Call &k) { k.d.dims[0].extent = 2; }, "input 'd' dim 0 is 2, expected 3 (symbol 'seq'");
  expect([](Call &k) { k.b.b.host = nullptr; }, "input 'b' has no host memory");
  expect([](Call &k) { k.w.b.host = nullptr; }, "output 'w' has no host memory");
  expect([](Call &k) { k.r.dims[1].extent = 5; }, "output 'r' dim 0 is 5, expected 12");
  expect([](Call &k) { k.v.b.type.bits = 64; }, "output 'v' has dtype float64, expected float32");
  static uint8_t fake[64];
  expect(
      [](Call &k) {
        k.c.b.device = 1;
        k.c.b.device_interface = reinterpret_cast<const halide_device_interface_t *>(fake);
      },
      "input 'c' lives on a device");
}

// n = 2^30 makes w [2^31]: refused from the shapes, before any host is looked at or allocated.
TEST(AotEntryFuzz, HugeSymbolIsRefusedBeforeAllocating) {
  Call k(1, 1, 1);
  k.c.dims[0].extent = 1 << 30;
  k.c.b.host = nullptr;
  EXPECT_EQ(k.run(), "buffer 'w' dim 0 evaluates to 2147483648, outside [0, 2^31)");
}

}  // namespace
