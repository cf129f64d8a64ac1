// RNN/GRU/LSTM against a direct reference, for what the ONNX node tests do
// not cover: reverse and bidirectional runs, sequence_lens (with Y's zero
// padding), GRU's linear_before_reset, LSTM's Y_c, input_forget and clip.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

constexpr int64_t T = 3, B = 2, I = 2, H = 3;

struct Ref {
  std::vector<float> y, yh, yc;
};

float sigm(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Layout 0, default activations (Tanh for RNN), except `relu` for RNN.
Ref reference(const std::string &op, int D, const std::vector<float> &x, const std::vector<float> &w,
              const std::vector<float> &r, const std::vector<float> &bias, const std::vector<int> &lens, bool lbr,
              bool input_forget, float clip, bool reverse_only) {
  int G = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
  Ref out;
  out.y.assign(T * D * B * H, 0.0f);
  out.yh.assign(D * B * H, 0.0f);
  out.yc.assign(D * B * H, 0.0f);
  auto cl = [&](float v) { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; };
  for (int d = 0; d < D; ++d) {
    bool rev = reverse_only || d == 1;
    for (int b = 0; b < B; ++b) {
      std::vector<float> h(H, 0.0f), c(H, 0.0f);
      for (int s = 0; s < lens[b]; ++s) {
        int t = rev ? lens[b] - 1 - s : s;
        // xw[g*H+j] and rh[g*H+j] with their biases.
        std::vector<float> xw(G * H), rh(G * H);
        for (int k = 0; k < G * H; ++k) {
          float a = bias[d * 2 * G * H + k], q = bias[d * 2 * G * H + G * H + k];
          for (int i = 0; i < I; ++i) a += x[(t * B + b) * I + i] * w[(d * G * H + k) * I + i];
          for (int i = 0; i < H; ++i) q += r[(d * G * H + k) * H + i] * h[i];
          xw[k] = a;
          rh[k] = q;
        }
        std::vector<float> nh(H), nc(H);
        for (int j = 0; j < H; ++j) {
          if (op == "RNN") {
            nh[j] = std::max(0.0f, cl(xw[j] + rh[j]));
          } else if (op == "GRU") {
            float z = sigm(cl(xw[j] + rh[j])), rr = sigm(cl(xw[H + j] + rh[H + j]));
            float hh;
            if (lbr) {
              hh = std::tanh(cl(xw[2 * H + j] + rr * rh[2 * H + j]));
            } else {
              float q = bias[d * 2 * G * H + G * H + 2 * H + j];
              for (int i = 0; i < H; ++i) {
                float ri = sigm(cl(xw[H + i] + rh[H + i]));
                q += r[(d * G * H + 2 * H + j) * H + i] * ri * h[i];
              }
              hh = std::tanh(cl(xw[2 * H + j] + q));
            }
            nh[j] = (1 - z) * hh + z * h[j];
          } else {
            float ig = sigm(cl(xw[j] + rh[j]));
            float fg = input_forget ? 1 - ig : sigm(cl(xw[2 * H + j] + rh[2 * H + j]));
            float cc = std::tanh(cl(xw[3 * H + j] + rh[3 * H + j]));
            nc[j] = fg * c[j] + ig * cc;
            float o = sigm(cl(xw[H + j] + rh[H + j]));
            nh[j] = o * std::tanh(cl(nc[j]));
          }
        }
        h = nh;
        c = nc;
        for (int j = 0; j < H; ++j) out.y[((t * D + d) * B + b) * H + j] = h[j];
      }
      for (int j = 0; j < H; ++j) {
        out.yh[(d * B + b) * H + j] = h[j];
        out.yc[(d * B + b) * H + j] = c[j];
      }
    }
  }
  return out;
}

void check(const std::string &op, const std::string &direction, Attributes extra, bool lbr, bool input_forget,
           float clip) {
  int D = direction == "bidirectional" ? 2 : 1;
  int G = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
  int outs = op == "LSTM" ? 3 : 2;
  auto x = ramp(T * B * I, 0.3f, 1), w = ramp(D * G * H * I, 0.2f, 2), r = ramp(D * G * H * H, 0.15f, 3),
       bias = ramp(D * 2 * G * H, 0.1f, 4);
  std::vector<int> lens{2, 3};
  GraphBuilder g(14);
  std::vector<std::string> in{g.input("X", DType::F32, {T, B, I}), g.input("W", DType::F32, {D, G * H, I}),
                              g.input("R", DType::F32, {D, G * H, H}), g.input("B", DType::F32, {D, 2 * G * H}),
                              g.input("L", DType::I32, {B})};
  extra["direction"] = attr_string(direction);
  extra["hidden_size"] = attr_int(H);
  for (const auto &o : g.op_n(op, in, outs, extra)) g.output(o);
  auto got = jit_eval(g.build(), {f32({T, B, I}, x), f32({D, G * H, I}, w), f32({D, G * H, H}, r),
                                  f32({D, 2 * G * H}, bias), i32({B}, {lens[0], lens[1]})});
  Ref want = reference(op, D, x, w, r, bias, lens, lbr, input_forget, clip, direction == "reverse");
  EXPECT_LE(closeness(got[0], f32({T, D, B, H}, want.y)), 1.0) << op << " " << direction << " Y";
  EXPECT_LE(closeness(got[1], f32({D, B, H}, want.yh)), 1.0) << op << " " << direction << " Y_h";
  if (op == "LSTM") {
    EXPECT_LE(closeness(got[2], f32({D, B, H}, want.yc)), 1.0) << op << " " << direction << " Y_c";
  }
}

Attribute strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Strings;
  a.strings = std::move(v);
  return a;
}

TEST(Recurrent, RnnReluReverseAndBidirectionalWithSequenceLens) {
  check("RNN", "reverse", attrs({{"activations", strings({"Relu"})}}), false, false, 0);
  check("RNN", "bidirectional", attrs({{"activations", strings({"Relu", "Relu"})}}), false, false, 0);
}

TEST(Recurrent, GruBothResetVariants) {
  check("GRU", "bidirectional", {}, false, false, 0);
  check("GRU", "reverse", attrs({{"linear_before_reset", attr_int(1)}}), true, false, 0);
}

TEST(Recurrent, LstmStatesInputForgetAndClip) {
  check("LSTM", "bidirectional", {}, false, false, 0);
  check("LSTM", "forward", attrs({{"input_forget", attr_int(1)}, {"clip", attr_float(0.5f)}}), false, true, 0.5f);
}

}  // namespace
}  // namespace disco
