// The oneDNN backend's squeeze-excitation step (onednn.binary): X times (or
// plus) a per-channel S computed from X, kept in oneDNN's layout between the
// convolutions around it and written over X, against plain-loop references
// at several run-time shapes; and the Muls it must leave to the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "runtime/memory_plan.h"
#include "targets/onednn/onednn_kernels.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

struct Se {
  const char *op = "Mul";
  bool s_first = false;     // Op(S, A) instead of Op(A, S)
  bool host_reader = false;  // Abs(Op(...)) as a second output
};

const Attributes kPad1 = testing::attrs({{"pads", attr_ints({1, 1, 1, 1})}});

// a = relu(conv3x3(x)) [n, 8, h, w]; s = sigmoid(conv1x1(relu(conv1x1(gap(a))))) [n, 8, 1, 1];
// y = conv3x3(Op(a, s)).
void check_se(const Se &se, bool want_binary) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
  TensorData w1 = tensor({8, 3, 3, 3}, 0.25f, 1), b1 = tensor({8}, 0.5f, 2);
  TensorData wa = tensor({4, 8, 1, 1}, 0.5f, 3), ba = tensor({4}, 0.25f, 4);
  TensorData wb = tensor({8, 4, 1, 1}, 0.5f, 5), bb = tensor({8}, 0.25f, 6);
  TensorData w2 = tensor({8, 8, 3, 3}, 0.0625f, 7), b2 = tensor({8}, 0.25f, 8);
  auto a = b.op("Relu", {b.op("Conv", {x, b.constant("w1", w1), b.constant("b1", b1)}, kPad1)});
  auto g = b.op("GlobalAveragePool", {a});
  auto h = b.op("Relu", {b.op("Conv", {g, b.constant("wa", wa), b.constant("ba", ba)})});
  auto s = b.op("Sigmoid", {b.op("Conv", {h, b.constant("wb", wb), b.constant("bb", bb)})});
  auto scaled = se.s_first ? b.op(se.op, {s, a}) : b.op(se.op, {a, s});
  b.output(b.op("Conv", {scaled, b.constant("w2", w2), b.constant("b2", b2)}, kPad1));
  if (se.host_reader) b.output(b.op("Abs", {scaled}));
  Session sess(b.build(), "se", "", onednn_first());
  const PlanStep *step = find_step(sess.last_compile().plan, "onednn.binary");
  if (!want_binary) {
    EXPECT_FALSE(step) << se.op << " is a oneDNN step";
  } else {
    ASSERT_TRUE(step) << se.op << " is not a oneDNN step";
    EXPECT_EQ(step->params.at("algorithm"), std::string(se.op) == "Mul" ? "mul" : "add");
    EXPECT_EQ(step->params.at("channels_last_inputs"), "0,1") << "X and S come from convolutions";
    EXPECT_EQ(step->params.at("channels_last_output"), "1") << "only a convolution reads the result";
    // X dies at the step (the pool read it before): the result takes its bytes.
    EXPECT_EQ(step->params.at(kOutputReusesInput), "0");
    const std::vector<int> shared = shared_buffers(sess.last_compile().plan);
    EXPECT_EQ(shared.at(step->outputs.at(0)), shared.at(step->inputs.at(0))) << se.op << ": the result in X's bytes";
  }
  for (Dims xs : {Dims{1, 3, 5, 6}, Dims{2, 3, 4, 3}}) {
    TensorData tx = tensor(xs, 0.5f, 9);
    auto out = sess.run({tx});
    Dims as, gs, hs, ss, ys;
    auto ra = ref_conv2d(values(tx), xs, values(w1), w1.shape, values(b1), {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &as);
    for (auto &v : ra) v = std::max(v, 0.0f);
    const int64_t spatial = as[2] * as[3];
    const std::vector<float> rg = ref_global_average(ra, as, &gs);
    auto rh = ref_conv2d(rg, gs, values(wa), wa.shape, values(ba), {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &hs);
    for (auto &v : rh) v = std::max(v, 0.0f);
    auto rs = ref_conv2d(rh, hs, values(wb), wb.shape, values(bb), {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &ss);
    for (auto &v : rs) v = 1.0f / (1.0f + std::exp(-v));
    std::vector<float> rm(ra.size());
    for (size_t i = 0; i < ra.size(); ++i)
      rm[i] = std::string(se.op) == "Mul" ? ra[i] * rs[i / spatial] : ra[i] + rs[i / spatial];
    auto ry = ref_conv2d(rm, as, values(w2), w2.shape, values(b2), {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &ys);
    const std::string at = std::string(se.op) + ", X [" + std::to_string(xs[0]) + ", 3, " + std::to_string(xs[2]) +
                           ", " + std::to_string(xs[3]) + "]";
    expect_near_all(out[0], ys, ry, "the conv after the " + at);
    if (se.host_reader) {
      for (auto &v : rm) v = std::fabs(v);
      expect_near_all(out[1], as, rm, "the host's reader of the " + at);
    }
  }
}

// The step on its own, X and Y plain (staged into channels_last_desc's layout
// and back): nhwc for 5 channels, blocked for 16, S per batch and shared, Mul
// and Add, against a plain loop. It never runs oneDNN's reference kernel: where
// that is all oneDNN offers (AVX-512 hosts with oneDNN 2.6), its own loop runs.
TEST(OnednnBinary, TheStepMatchesAPlainLoopInEveryLayoutAndNeverRunsAReferenceKernel) {
  for (const char *alg : {"mul", "add"})
    for (int64_t c : {5, 16})
      for (int64_t sn : {1, 2}) {
        auto k = make_kernel("onednn.binary", {{"algorithm", alg}, {"post_ops", ""}});
        const Dims xs{2, c, 3, 7}, ss{sn, c, 1, 1};
        TensorData x = tensor(xs, 0.5f, 3), sv = tensor(ss, 0.25f, 4), y(DType::F32, xs);
        std::vector<ExternTensor> ins{view(x), view(sv)}, outs{view(y)};
        SymbolValues syms;
        k->run(ExternCall{ins, outs, syms});
        std::vector<float> want(static_cast<size_t>(x.num_elements()));
        const auto vx = values(x), vs = values(sv);
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < 21; ++p) {
              const size_t i = static_cast<size_t>((n * c + ch) * 21 + p);
              const float s = vs[static_cast<size_t>((sn == 1 ? 0 : n) * c + ch)];
              want[i] = std::string(alg) == "mul" ? vx[i] * s : vx[i] + s;
            }
        const std::string at = std::string(alg) + ", C " + std::to_string(c) + ", S batch " + std::to_string(sn);
        expect_near_all(y, xs, want, at);
        EXPECT_EQ(k->implementation().find("ref"), std::string::npos) << at << ": " << k->implementation();
      }
}

TEST(OnednnBinary, SqueezeExcitationMulStaysInTheBlockedLayout) { check_se({"Mul", false, false}, true); }

TEST(OnednnBinary, PerChannelValueFirstAndAddToo) {
  check_se({"Mul", true, false}, true);
  check_se({"Add", false, false}, true);
}

TEST(OnednnBinary, AMulTheHostAlsoReadsStaysOnTheHost) { check_se({"Mul", false, true}, false); }

TEST(OnednnBinary, APerChannelValueNotComputedFromXIsLeftToTheConvEpilogue) {
  // x * s with s a constant [1, 8, 1, 1]: the conv before takes it as a post-op; no binary step.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
  TensorData w1 = tensor({8, 3, 3, 3}, 0.25f, 1), sc = tensor({1, 8, 1, 1}, 0.5f, 2);
  TensorData w2 = tensor({8, 8, 3, 3}, 0.0625f, 7);
  auto a = b.op("Conv", {x, b.constant("w1", w1)}, kPad1);
  auto m = b.op("Mul", {a, b.constant("sc", sc)});
  b.output(b.op("Conv", {m, b.constant("w2", w2)}, kPad1));
  Session sess(b.build(), "se_const", "", onednn_first());
  EXPECT_FALSE(find_step(sess.last_compile().plan, "onednn.binary"));
  const Dims xs = {1, 3, 4, 5};
  TensorData tx = tensor(xs, 0.5f, 9);
  auto out = sess.run({tx});
  Dims as, ys;
  auto ra = ref_conv2d(values(tx), xs, values(w1), w1.shape, {}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &as);
  for (size_t i = 0; i < ra.size(); ++i) ra[i] *= sc.as<float>()[i / (as[2] * as[3]) % 8];
  auto ry = ref_conv2d(ra, as, values(w2), w2.shape, {}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &ys);
  expect_near_all(out[0], ys, ry, "conv, constant scale, conv");
}

}  // namespace
}  // namespace disco
