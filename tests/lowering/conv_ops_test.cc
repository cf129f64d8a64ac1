#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// ---- naive references, NCHW ------------------------------------------------

struct Conv2D {
  int64_t group = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // top, left, bottom, right
};

TensorData naive_conv(const TensorData &x, const TensorData &w, const std::vector<float> &bias, const Conv2D &p) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t m = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = (h + p.pt + p.pb - p.dh * (kh - 1) - 1) / p.sh + 1;
  int64_t ow = (wd + p.pl + p.pr - p.dw * (kw - 1) - 1) / p.sw + 1;
  TensorData out(DType::F32, {n, m, oh, ow});
  float *o = out.mutable_as<float>();
  const float *xv = x.as<float>(), *wv = w.as<float>();
  int64_t mg = m / p.group;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = bias.empty() ? 0.0 : bias[oc];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                int64_t y = i * p.sh - p.pt + u * p.dh, xx = j * p.sw - p.pl + v * p.dw;
                if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;
                int64_t ic = (oc / mg) * cg + ci;
                s += xv[((b * c + ic) * h + y) * wd + xx] * wv[((oc * cg + ci) * kh + u) * kw + v];
              }
          o[((b * m + oc) * oh + i) * ow + j] = static_cast<float>(s);
        }
  return out;
}

struct Pool2D {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil_mode = false, is_max = true, include_pad = false;
};

// A k x k window moving by `stride`, padded by `pad` on every side.
Pool2D square_pool(int64_t k, int64_t stride, int64_t pad = 0) {
  Pool2D p;
  p.kh = p.kw = k;
  p.sh = p.sw = stride;
  p.pt = p.pl = p.pb = p.pr = pad;
  return p;
}

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil_mode) {
  double size = static_cast<double>(in + pb + pe - d * (k - 1) - 1) / s + 1;
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(size) : std::floor(size));
  if (ceil_mode && (out - 1) * s >= in + pb) --out;  // no window may start in the trailing pad
  return out;
}

TensorData naive_pool(const TensorData &x, const Pool2D &p) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t oh = pool_out(h, p.kh, p.sh, p.dh, p.pt, p.pb, p.ceil_mode);
  int64_t ow = pool_out(w, p.kw, p.sw, p.dw, p.pl, p.pr, p.ceil_mode);
  TensorData out(DType::F32, {n, c, oh, ow});
  float *o = out.mutable_as<float>();
  const float *xv = x.as<float>();
  for (int64_t b = 0; b < n * c; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t u = 0; u < p.kh; ++u)
          for (int64_t v = 0; v < p.kw; ++v) {
            int64_t y = i * p.sh - p.pt + u * p.dh, xx = j * p.sw - p.pl + v * p.dw;
            if (y >= -p.pt && y < h + p.pb && xx >= -p.pl && xx < w + p.pr) ++padded;
            if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
            double val = xv[(b * h + y) * w + xx];
            best = std::max(best, val);
            sum += val;
            ++inside;
          }
        double r = p.is_max ? best : sum / static_cast<double>(p.include_pad ? padded : inside);
        o[(b * oh + i) * ow + j] = static_cast<float>(r);
      }
  return out;
}

Attributes conv_attrs(const Conv2D &p) {
  return {{"group", attr_int(p.group)},
          {"strides", attr_ints({p.sh, p.sw})},
          {"dilations", attr_ints({p.dh, p.dw})},
          {"pads", attr_ints({p.pt, p.pl, p.pb, p.pr})}};
}

Attributes pool_attrs(const Pool2D &p) {
  return {{"kernel_shape", attr_ints({p.kh, p.kw})}, {"strides", attr_ints({p.sh, p.sw})},
          {"dilations", attr_ints({p.dh, p.dw})},    {"pads", attr_ints({p.pt, p.pl, p.pb, p.pr})},
          {"ceil_mode", attr_int(p.ceil_mode)},      {"count_include_pad", attr_int(p.include_pad)}};
}

// Conv on [n, C, h, w] with symbolic n, h, w and constant weights.
void run_conv(const Conv2D &p, std::vector<int64_t> xs, std::vector<int64_t> ws, bool with_bias) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), xs[1], sym("h"), sym("w")});
  TensorData wt = f32(ws, ramp(numel(ws), 0.5f, 3));
  std::vector<float> bias = with_bias ? ramp(ws[0], 1.0f, 1) : std::vector<float>{};
  std::vector<std::string> ins{x, b.constant("wt", wt)};
  if (with_bias) ins.push_back(b.constant("bias", f32({ws[0]}, bias)));
  b.output(b.op("Conv", ins, conv_attrs(p)));
  TensorData xt = f32(xs, ramp(numel(xs)));
  auto out = testing::jit_eval(b.build(), {xt});
  TensorData ref = naive_conv(xt, wt, bias, p);
  ASSERT_EQ(out[0].shape, ref.shape);
  EXPECT_LE(testing::closeness(out[0], ref), 1.0);
}

// ---- Conv ------------------------------------------------------------------

TEST(ConvInference, OutputDimsAreSymbolicWithARunTimeCheck) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("batch"), 3, sym("H"), sym("W")});
  auto w = b.constant("w", TensorData(DType::F32, {8, 3, 3, 3}));
  b.output(b.op("Conv", {x, w}, {{"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}}));
  Graph g = b.build();
  ShapeStore store;
  infer_shapes(g, store);
  // H + 1 + 1 - 1*(3-1) - 1 = H - 1
  Shape expect{sym("batch"), 8, floor_div(sym("H") - 1, 2) + 1, floor_div(sym("W") - 1, 2) + 1};
  EXPECT_EQ(*g.value(g.outputs[0]).shape, expect);
  int at_least = 0;
  for (const auto &c : store.checks())
    if (c.kind == RuntimeCheck::AtLeast && c.message.find("Conv_0") != std::string::npos) ++at_least;
  EXPECT_EQ(at_least, 2);
}

TEST(ConvInference, SameUpperKeepsTheExtentOverStride) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("H"), sym("W")});
  auto w = b.input("w", DType::F32, {4, 2, 3, 3});
  b.output(b.op("Conv", {x, w}, {{"strides", attr_ints({2, 1})}, {"auto_pad", attr_string("SAME_UPPER")}}));
  Graph g = b.build();
  ShapeStore store;
  infer_shapes(g, store);
  EXPECT_EQ(*g.value(g.outputs[0]).shape, (Shape{sym("n"), 4, ceil_div(sym("H"), 2), sym("W")}));
}

TEST(ConvInference, ChannelMismatchNamesTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("H"), sym("W")});
  auto w = b.input("w", DType::F32, {8, 4, 3, 3});
  b.output(b.op("Conv", {x, w}));
  Graph g = b.build();
  ShapeStore store;
  expect_error_naming([&] { infer_shapes(g, store); }, "Conv_0", "channels");
}

TEST(ConvInference, BadAttributesNameTheNode) {
  for (auto [name, attr] : std::vector<std::pair<std::string, Attribute>>{
           {"strides", attr_ints({0, 1})}, {"pads", attr_ints({1, 1})}, {"auto_pad", attr_string("SAME")}}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 3, sym("H"), sym("W")});
    auto w = b.input("w", DType::F32, {8, 3, 3, 3});
    b.output(b.op("Conv", {x, w}, {{name, attr}}));
    Graph g = b.build();
    ShapeStore store;
    expect_error_naming([&] { infer_shapes(g, store); }, "Conv_0", name);
  }
}

TEST(Conv, GroupedStridedDilatedPaddedWithBias) {
  Conv2D p;
  p.group = 2;
  p.sh = 2;
  p.dw = 2;
  p.pt = 1, p.pl = 0, p.pb = 2, p.pr = 1;
  run_conv(p, {2, 4, 6, 7}, {4, 2, 3, 2}, true);
}

TEST(Conv, DepthwiseWithChannelMultiplier) {
  Conv2D p;
  p.group = 3;
  p.pt = p.pl = p.pb = p.pr = 1;
  run_conv(p, {1, 3, 5, 4}, {6, 1, 3, 3}, false);
}

TEST(Conv, OneDimensionalMatchesTheTwoDimensionalReference) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("len")});
  TensorData wt = f32({3, 2, 3}, ramp(18, 0.5f, 2));
  std::vector<float> bias{1, -1, 0.5f};
  b.output(b.op("Conv", {x, b.constant("wt", wt), b.constant("b", f32({3}, bias))},
                {{"strides", attr_ints({2})}, {"pads", attr_ints({1, 1})}}));
  TensorData xt = f32({2, 2, 9}, ramp(36));
  auto out = testing::jit_eval(b.build(), {xt});
  // The same data as [n, C, 1, len] with a 1 x k kernel.
  Conv2D p;
  p.sw = 2;
  p.pl = p.pr = 1;
  TensorData ref = naive_conv(f32({2, 2, 1, 9}, ramp(36)), f32({3, 2, 1, 3}, ramp(18, 0.5f, 2)), bias, p);
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3, 5}));
  ref.shape = out[0].shape;
  EXPECT_LE(testing::closeness(out[0], ref), 1.0);
}

TEST(Conv, SameUpperAndSameLowerPadOppositeSides) {
  // A 2x2 kernel at stride 1 needs one pad row and column in total.
  for (const std::string mode : {"SAME_UPPER", "SAME_LOWER"}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {1, 1, sym("h"), sym("w")});
    TensorData wt = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    b.output(b.op("Conv", {x, b.constant("wt", wt)}, {{"auto_pad", attr_string(mode)}}));
    TensorData xt = f32({1, 1, 3, 4}, ramp(12));
    auto out = testing::jit_eval(b.build(), {xt});
    Conv2D p;
    // The odd pad goes at the end for SAME_UPPER, at the start for SAME_LOWER.
    (mode == "SAME_UPPER" ? p.pb : p.pt) = 1;
    (mode == "SAME_UPPER" ? p.pr : p.pl) = 1;
    TensorData ref = naive_conv(xt, wt, {}, p);
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 3, 4})) << mode;
    EXPECT_LE(testing::closeness(out[0], ref), 1.0) << mode;
  }
}

TEST(Conv, ValidIgnoresPads) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 2, sym("h"), sym("w")});
  TensorData wt = f32({2, 2, 2, 3}, ramp(24, 1.0f));
  b.output(b.op("Conv", {x, b.constant("wt", wt)}, {{"auto_pad", attr_string("VALID")}}));
  TensorData xt = f32({1, 2, 4, 5}, ramp(40));
  auto out = testing::jit_eval(b.build(), {xt});
  TensorData ref = naive_conv(xt, wt, {}, Conv2D{});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 3, 3}));
  EXPECT_LE(testing::closeness(out[0], ref), 1.0);
}

TEST(Conv, InputSmallerThanTheKernelFailsAtRunTimeNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 1, sym("h"), sym("w")});
  b.output(b.op("Conv", {x, b.constant("wt", TensorData(DType::F32, {1, 1, 3, 3}))}));
  Graph g = b.build();
  expect_error_naming([&] { testing::jit_eval(g, {f32({1, 1, 2, 5}, ramp(10))}); }, "Conv_0", ">= 1");
}

// ---- pools -----------------------------------------------------------------

void run_pool(const std::string &op, const Pool2D &p, std::vector<int64_t> xs, std::vector<int64_t> expect_shape) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), xs[1], sym("h"), sym("w")});
  b.output(b.op(op, {x}, pool_attrs(p)));
  TensorData xt = f32(xs, ramp(numel(xs), 0.5f, 4));
  auto out = testing::jit_eval(b.build(), {xt});
  TensorData ref = naive_pool(xt, p);
  ASSERT_EQ(ref.shape, expect_shape);
  ASSERT_EQ(out[0].shape, expect_shape);
  EXPECT_LE(testing::closeness(out[0], ref), 1.0);
}

TEST(MaxPool, PaddedAndStrided) {
  run_pool("MaxPool", square_pool(3, 2, 1), {2, 3, 7, 6}, {2, 3, 4, 3});
}

TEST(MaxPool, CeilModeAddsAWindowButNeverOneStartingInThePad) {
  Pool2D p = square_pool(3, 2);
  p.pb = 2;  // h: 4 rows, floor and ceil agree on 2 once the pad-only window is dropped
  p.ceil_mode = true;
  // w: 6 columns, (6 - 3) / 2 = 1.5 -> 3 windows, the last one overhanging.
  run_pool("MaxPool", p, {1, 2, 4, 6}, {1, 2, 2, 3});
}

TEST(MaxPool, Dilated) {
  Pool2D p;
  p.kh = p.kw = 2;
  p.dh = 2;
  p.dw = 3;
  run_pool("MaxPool", p, {1, 1, 5, 6}, {1, 1, 3, 3});
}

// Indices are flat offsets into X of each window's first maximum; with
// storage_order 1 the spatial part is column-major.
TEST(MaxPool, IndicesOutputGivesFlatOffsetsOfTheFirstMaximum) {
  for (int64_t order : {0, 1}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), sym("c"), sym("h"), sym("w")});
    auto outs = b.op_n("MaxPool", {x}, 2,
                       {{"kernel_shape", attr_ints({2, 2})}, {"storage_order", attr_int(order)}});
    b.output(outs[0]);
    b.output(outs[1]);
    auto out = testing::jit_eval(b.build(), {f32({1, 2, 2, 3}, {1, 5, 5, 2, 0, 3, 9, 9, 9, 9, 9, 9})});
    EXPECT_EQ(floats(out[0]), (std::vector<double>{5, 5, 9, 9}));
    EXPECT_EQ(floats(out[1]), order == 0 ? (std::vector<double>{1, 1, 6, 7}) : (std::vector<double>{2, 2, 6, 8}));
  }
}

TEST(MaxPool, MissingKernelShapeNamesTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 1, sym("h"), sym("w")});
  b.output(b.op("MaxPool", {x}));
  Graph g = b.build();
  ShapeStore store;
  expect_error_naming([&] { infer_shapes(g, store); }, "MaxPool_0", "kernel_shape");
}

TEST(AveragePool, ExcludesPadByDefault) {
  Pool2D p = square_pool(3, 2, 1);
  p.is_max = false;
  run_pool("AveragePool", p, {1, 2, 5, 6}, {1, 2, 3, 3});
}

TEST(AveragePool, CountIncludePad) {
  Pool2D p;
  p.is_max = false;
  p.include_pad = true;
  p.kh = 3;
  p.kw = 2;
  p.sh = 2;
  p.pt = p.pb = 1;
  p.pl = 1;
  run_pool("AveragePool", p, {2, 1, 5, 4}, {2, 1, 3, 4});
}

TEST(AveragePool, CeilModeOverhangIsNotCountedEvenWithPad) {
  Pool2D p = square_pool(3, 2);
  p.is_max = false;
  p.include_pad = true;
  p.ceil_mode = true;
  run_pool("AveragePool", p, {1, 1, 6, 6}, {1, 1, 3, 3});
}

TEST(AveragePool, HalfInputsSumInFloat) {
  Pool2D p;
  p.is_max = false;
  p.kh = p.kw = 2;
  p.pt = p.pl = 1;
  GraphBuilder b;
  auto x = b.input("x", DType::F16, {sym("n"), 1, sym("h"), sym("w")});
  b.output(b.op("AveragePool", {x}, pool_attrs(p)));
  std::vector<float> xv = ramp(20, 0.5f);
  TensorData xh(DType::F16, {1, 1, 4, 5});
  for (size_t i = 0; i < xv.size(); ++i) xh.mutable_as<uint16_t>()[i] = float_to_half(xv[i]);  // exact in half
  auto out = testing::jit_eval(b.build(), {xh});
  ASSERT_EQ(out[0].dtype, DType::F16);
  TensorData ref = naive_pool(f32({1, 1, 4, 5}, xv), p);
  ASSERT_EQ(out[0].shape, ref.shape);
  EXPECT_LE(testing::closeness(out[0], ref, 1e-3, 1e-3), 1.0);
}

TEST(GlobalPools, ReduceEverySpatialDim) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("h"), sym("w")});
  b.output(b.op("GlobalAveragePool", {x}));
  b.output(b.op("GlobalMaxPool", {x}));
  std::vector<float> v{1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};  // [1, 2, 2, 3]
  auto out = testing::jit_eval(b.build(), {f32({1, 2, 2, 3}, v)});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_LE(testing::closeness(out[0], f32({1, 2, 1, 1}, {3.5f, -3.5f})), 1.0);
  EXPECT_LE(testing::closeness(out[1], f32({1, 2, 1, 1}, {6, -1})), 1.0);
}

// ---- BatchNormalization ----------------------------------------------------

TEST(BatchNormalization, InferenceModeAtOpsets9And15) {
  for (int opset : {9, 15}) {
    GraphBuilder b(opset);
    auto x = b.input("x", DType::F32, {sym("n"), 2, sym("h")});
    std::vector<float> scale{2, 0.5f}, bias{1, -1}, mean{0.5f, -2}, var{4, 0.25f};
    b.output(b.op("BatchNormalization",
                  {x, b.constant("s", f32({2}, scale)), b.constant("b", f32({2}, bias)),
                   b.constant("m", f32({2}, mean)), b.constant("v", f32({2}, var))},
                  {{"epsilon", attr_float(0.0f)}}));
    std::vector<float> xv{1, 2, 3, 4, 5, 6};  // [1, 2, 3]
    auto out = testing::jit_eval(b.build(), {f32({1, 2, 3}, xv)});
    // (x - mean) / sqrt(var) * scale + bias, per channel.
    std::vector<float> ref{(1 - 0.5f) / 2 * 2 + 1,    (2 - 0.5f) / 2 * 2 + 1,    (3 - 0.5f) / 2 * 2 + 1,
                           (4 + 2) / 0.5f * 0.5f - 1, (5 + 2) / 0.5f * 0.5f - 1, (6 + 2) / 0.5f * 0.5f - 1};
    EXPECT_LE(testing::closeness(out[0], f32({1, 2, 3}, ref)), 1.0) << "opset " << opset;
  }
}

TEST(BatchNormalization, TrainingOutputsAreRejected) {
  GraphBuilder b(15);
  auto x = b.input("x", DType::F32, {sym("n"), 2});
  std::vector<std::string> ins{x};
  for (const char *n : {"s", "b", "m", "v"}) ins.push_back(b.constant(n, f32({2}, {1, 1})));
  auto outs = b.op_n("BatchNormalization", ins, 3);
  for (const auto &o : outs) b.output(o);
  Graph g = b.build();
  ShapeStore store;
  expect_error_naming([&] { infer_shapes(g, store); }, "BatchNormalization_0", "inference");
}

}  // namespace
}  // namespace disco
