// The process-wide store of packed oneDNN weights (targets/onednn/onednn_weights.h):
// equal bytes in the same layouts share one packed copy, other bytes get
// their own, and what comes back holds the source reordered; two sessions of
// one model give the reference's numbers through it.
#include "targets/onednn/onednn_weights.h"

#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "targets/onednn/onednn_step.h"
#include "driver/session.h"
#include "tests/support/onednn_cases.h"

namespace disco {
namespace {

using testing::onednn_first;
using testing::tensor;
using testing::values;
using Tag = dnnl::memory::format_tag;

dnnl::memory::desc desc(int64_t rows, int64_t cols, Tag tag) {
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, tag);
}

// The packed copy, column-major ("ba"), back as a row-major [rows, cols] array.
std::vector<float> unpacked(const dnnl::memory &m, int64_t rows, int64_t cols) {
  const auto *p = static_cast<const float *>(m.get_data_handle());
  std::vector<float> out(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = p[j * rows + i];
  return out;
}

TEST(OnednnWeights, EqualBytesInEqualLayoutsShareOnePackedCopy) {
  dnnl::stream stream(onednn_engine());
  const TensorData a = tensor({24, 40}, 0.125f, 3), b = tensor({24, 40}, 0.125f, 3);  // two buffers, one content
  ASSERT_NE(a.data(), b.data());
  auto pa = shared_packed_weights(desc(24, 40, Tag::ab), a.data(), desc(24, 40, Tag::ba), stream);
  auto pb = shared_packed_weights(desc(24, 40, Tag::ab), b.data(), desc(24, 40, Tag::ba), stream);
  EXPECT_EQ(pa.get(), pb.get());
  EXPECT_EQ(unpacked(*pa, 24, 40), values(a));
  // Another wanted layout is another copy.
  auto pc = shared_packed_weights(desc(24, 40, Tag::ab), a.data(), desc(24, 40, Tag::ab), stream);
  EXPECT_NE(pc.get(), pa.get());
}

TEST(OnednnWeights, BytesThatDifferAnywhereGetTheirOwnCopy) {
  dnnl::stream stream(onednn_engine());
  const TensorData a = tensor({16, 33}, 0.25f, 1);
  auto pa = shared_packed_weights(desc(16, 33, Tag::ab), a.data(), desc(16, 33, Tag::ba), stream);
  for (int64_t at : {int64_t{0}, int64_t{16 * 33 / 2}, int64_t{16 * 33 - 1}}) {  // the last one lies in the tail word
    TensorData b = tensor({16, 33}, 0.25f, 1);
    b.mutable_as<float>()[at] += 1.0f;
    auto pb = shared_packed_weights(desc(16, 33, Tag::ab), b.data(), desc(16, 33, Tag::ba), stream);
    EXPECT_NE(pa.get(), pb.get()) << "element " << at;
    EXPECT_EQ(unpacked(*pb, 16, 33), values(b)) << "element " << at;
  }
  EXPECT_EQ(unpacked(*pa, 16, 33), values(a));
}

TEST(OnednnWeights, TwoSessionsOfOneModelAndAnotherModelKeepTheirOwnNumbers) {
  // [m, 64] x W [64, 48]: sessions of model 1 share packed W, model 2 has other weights of the same shape.
  auto model = [](float scale) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {Dim::symbol("m"), 64});
    b.output(b.op("MatMul", {x, b.constant("w", tensor({64, 48}, scale, 2))}));
    return b.build();
  };
  Session first(model(0.125f), "weights_a", "", onednn_first());
  Session second(model(0.125f), "weights_a2", "", onednn_first());
  Session other(model(-0.5f), "weights_b", "", onednn_first());
  for (int64_t m : {1, 5}) {
    const TensorData x = tensor({m, 64}, 0.0625f, 1);
    for (auto [s, scale] : {std::pair<Session *, float>{&first, 0.125f}, {&other, -0.5f}, {&second, 0.125f}}) {
      const std::vector<float> w = values(tensor({64, 48}, scale, 2)), xv = values(x);
      const auto y = s->run({x});
      ASSERT_EQ(y[0].num_elements(), m * 48);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < 48; ++j) {
          double want = 0;
          for (int64_t k = 0; k < 64; ++k) want += double(xv[i * 64 + k]) * w[k * 48 + j];
          EXPECT_NEAR(y[0].as<float>()[i * 48 + j], want, 1e-3 * (1 + std::abs(want))) << "m " << m << " scale " << scale;
        }
    }
  }
}

}  // namespace
}  // namespace disco
