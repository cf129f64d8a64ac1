// The x86 recurrent template (schedules/x86_recurrent_schedule.h) on PyTorch's
// own LSTM and GRU: two bidirectional layers, batch_first, exported to ONNX as
// the model zoo's taggers are (tests/references/make_recurrent_references.py),
// compiled once for the host backend with dynamic batch and seq, run at four
// shapes (batch 1 and 3: a row per statement; 6: tiles of 4 batch rows, a
// whole block and a partial one on AVX2, half tiles on AVX-512; 11: a whole
// block of 8 rows and a partial one on AVX-512) and compared with PyTorch's
// outputs. The
// LSTM's hidden size (24) is a partial tile, the GRU's (20) not a whole
// number of vectors; the GRU is PyTorch's linear_before_reset form. lstm_h64
// (one bidirectional layer, hidden 64) gets whole tiles: 16 terms of k per
// statement, 16 hidden units by 4 batch rows. lstm_forward and gru_forward
// (one forward layer each) run 50 and 52 rows of X at their first two shapes,
// more than one task of the input projection (48 rows): a forward layer over
// more than one task once failed its bounds check. Every recurrent kernel must
// get the recurrent template and have its weights stored gate-major at compile
// time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "driver/backend_registry.h"
#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/npy.h"
#include "tests/support/gru_reference.h"
#include "tests/support/lstm_reference.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

struct Compiled {
  CompiledModel model;
  std::vector<std::string> schedules;  // "recurrent", ... per kernel
  std::vector<std::string> splits;     // the compile's "split N node(s) for the backends" lines
};

Compiled compile_for(const std::string &path, std::vector<std::string> backends) {
  CompileOptions o;
  o.use_cache = false;
  o.backends = std::move(backends);
  std::vector<std::string> lines, splits;
  o.progress = [&](const std::string &line) {
    if (line.find("  schedule ") != std::string::npos) lines.push_back(line.substr(line.find("schedule ") + 9));
    if (line.rfind("split ", 0) == 0) splits.push_back(line);
  };
  Compiled c{compile_onnx(path, o), {}, {}};
  c.schedules = lines;
  c.splits = splits;
  return c;
}

Compiled compile_on_host(const std::string &path) { return compile_for(path, {"host"}); }

// The model's outputs at the reference's four input shapes (BASE.k.input.npy)
// against PyTorch's (BASE.k.output.npy), from one compile.
void expect_four_shapes_match(const Compiled &c, const std::string &base, const std::string &what) {
  Executor exec(c.model.plan, c.model.dir);
  for (int k = 1; k <= 4; ++k) {
    const std::string ref = base + "." + std::to_string(k);
    auto out = exec.run({read_npy(ref + ".input.npy")});
    testing::expect_close(out[0], read_npy(ref + ".output.npy"), what + " at shape set " + std::to_string(k));
  }
}

struct Tagger {
  std::string name;
  int layers;
};
void PrintTo(const Tagger &t, std::ostream *os) { *os << t.name; }

class RecurrentTemplate : public ::testing::TestWithParam<Tagger> {};

TEST_P(RecurrentTemplate, LayersMatchPyTorchAtFourShapesWithOneCompile) {
  const std::string base = testing::references_dir() + "/recurrent/" + GetParam().name;
  Compiled c = compile_on_host(base + ".onnx");
  int recurrent = 0;
  for (const auto &s : c.schedules) recurrent += s == "recurrent";
  EXPECT_EQ(recurrent, GetParam().layers) << "every layer's kernel must get the recurrent template";
  expect_four_shapes_match(c, base, GetParam().name);
}

// With oneDNN, each layer's input projection is a oneDNN matmul
// (lowering/recurrent_projection.h) and the recurrent kernel reads its
// result: the recurrence alone gets the template, and the biases (Wb + Rb,
// without GRU's Rb of gate h under linear_before_reset) move into the
// matmul's Add. The oneDNN backend's own recurrence step
// (onednn.recurrence) is switched off for this (DISCO_RECURRENCE_STEP=0,
// read when the backend matches), so that the host's template runs.
TEST_P(RecurrentTemplate, LayersAfterOnednnProjectionsMatchPyTorchAtFourShapes) {
  const std::string base = testing::references_dir() + "/recurrent/" + GetParam().name;
  ::setenv("DISCO_RECURRENCE_STEP", "0", 1);
  Compiled c = compile_for(base + ".onnx", {"onednn", "host"});
  ::unsetenv("DISCO_RECURRENCE_STEP");
  ASSERT_EQ(c.splits.size(), 1u) << "the layers' projections must be split out for oneDNN";
  EXPECT_EQ(c.splits[0],
            "split " + std::to_string(GetParam().layers) + " node(s) for the backends (Backend::prepare_graph)");
  // Layers whose projections and states have one shape share one kernel.
  int recurrent = 0;
  for (const auto &s : c.schedules) {
    recurrent += s == "recurrent";
    EXPECT_EQ(s.rfind("generic", 0), std::string::npos) << "a kernel fell back to the generic schedule";
  }
  EXPECT_GE(recurrent, 1) << "the layers' recurrences must get the recurrent template";
  EXPECT_LE(recurrent, GetParam().layers);
  install_backend_runtimes();  // the matmul steps' glue
  expect_four_shapes_match(c, base, GetParam().name + " after oneDNN projections");
}

// By default the oneDNN backend takes each layer's recurrence too, as an
// onednn.recurrence step (targets/onednn/recurrent_cell.h): no Halide
// recurrent kernel is left, and the numbers are PyTorch's.
TEST_P(RecurrentTemplate, LayersAsOnednnRecurrenceStepsMatchPyTorchAtFourShapes) {
  const std::string base = testing::references_dir() + "/recurrent/" + GetParam().name;
  Compiled c = compile_for(base + ".onnx", {"onednn", "host"});
  int steps = 0;
  for (const PlanStep &s : c.model.plan.steps) steps += s.extern_call == "onednn.recurrence";
  EXPECT_EQ(steps, GetParam().layers) << "each layer's recurrence must be an onednn.recurrence step";
  for (const auto &s : c.schedules) EXPECT_NE(s, "recurrent") << "a layer's recurrence stayed on the host";
  install_backend_runtimes();
  expect_four_shapes_match(c, base, GetParam().name + " as onednn.recurrence steps");
}

INSTANTIATE_TEST_SUITE_P(Taggers, RecurrentTemplate,
                         ::testing::Values(Tagger{"lstm_small", 2}, Tagger{"gru_small", 2}, Tagger{"lstm_h64", 1},
                                           Tagger{"lstm_forward", 1}, Tagger{"gru_forward", 1}),
                         [](const ::testing::TestParamInfo<Tagger> &i) { return i.param.name; });

// A forward layer over 12,800 rows of X (64 x 200): the input projection's
// buffer was once sized by its task count along the direction axis (3.5 GB,
// refused at run time). The input is sin(0.001 i) over its elements, as
// make_recurrent_references.py makes it; the last step's outputs are compared.
TEST(RecurrentTemplate, AForwardLayerOverTwelveThousandRowsMatchesPyTorch) {
  const std::string base = testing::references_dir() + "/recurrent/lstm_long";
  Compiled c = compile_on_host(base + ".onnx");
  TensorData x(DType::F32, {64, 200, 16});
  float *xv = x.mutable_as<float>();
  for (int64_t i = 0; i < 64 * 200 * 16; ++i) xv[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
  Executor exec(c.model.plan, c.model.dir);
  auto out = exec.run({x});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{64, 200, 32}));
  TensorData last(DType::F32, {64, 32});
  for (int64_t b = 0; b < 64; ++b)
    for (int64_t j = 0; j < 32; ++j)
      last.mutable_as<float>()[b * 32 + j] = out[0].as<float>()[(b * 200 + 199) * 32 + j];
  testing::expect_close(last, read_npy(base + ".last_step.npy"), "lstm_long's last step");
}

// One forward layer of `op` (G gates) over x [seq, batch, I] with constant
// W, R and B, compiled for the host with dynamic seq and batch.
CompiledModel forward_layer(const std::string &op, int64_t G, int64_t H, int64_t I, const std::vector<float> &w,
                            const std::vector<float> &r, const std::vector<float> &b, Attributes attrs,
                            const std::string &name) {
  GraphBuilder g;
  auto xin = g.input("x", DType::F32, {Dim::symbol("seq"), Dim::symbol("batch"), I});
  attrs["hidden_size"] = attr_int(H);
  g.output(g.op(op,
                {xin, g.constant("W", testing::f32({1, G * H, I}, w)), g.constant("R", testing::f32({1, G * H, H}, r)),
                 g.constant("B", testing::f32({1, 2 * G * H}, b))},
                attrs));
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
  return compile_graph(g.build(), name, "", o);
}

// The layer's output y [T, 1, B, H] for x [T, B, I] on one and on two
// threads against the double-precision reference `want` (rtol 1e-4, atol
// 1e-5; testing::expect_close, which also fails a NaN).
void expect_one_and_two_threads_match(const CompiledModel &m, int64_t T, int64_t B, int64_t I, int64_t H,
                                      const std::vector<float> &x, const std::vector<double> &want,
                                      const std::string &what) {
  const TensorData reference = testing::f64({T, 1, B, H}, want);
  for (int threads : {1, 2}) {
    Executor exec(m.plan, m.dir);
    exec.set_num_threads(threads);
    auto out = exec.run({testing::f32({T, B, I}, x)});
    testing::expect_close(out[0], reference,
                          what + ", batch " + std::to_string(B) + ", " + std::to_string(threads) + " thread(s)");
  }
}

// One direction with the work to share its step's tiles of hidden units
// between threads, run on one and on two threads, against ONNX's GRU in
// double (tests/support/gru_reference.h), both reset forms: a tile that read
// another's units of the same phase would differ between the runs and from
// the reference. Hidden 512 (R 3 MiB, shared at any batch;
// parallel_tiles_batch) and 400 (25 tiles: halves of 13 and 12; with
// linear_before_reset, a tile's phases within it, Stage::phases_within_tiles)
// at 16, 5 and 2 batch rows: the whole, half and one-row tiles of the
// template.
TEST(RecurrentTemplate, AForwardGruSharingItsTilesBetweenThreadsMatchesTheOnnxFormula) {
  const int64_t T = 3, I = 8, G = 3;
  for (int64_t H : {512, 400}) {
    const auto w = testing::sine_wave(G * H * I, 0.7f, 0.1f, 0.3f),
               r = testing::sine_wave(G * H * H, 1.3f, 0.2f, 0.05f),
               b = testing::sine_wave(2 * G * H, 0.9f, 0.3f, 0.2f);
    for (bool lbr : {false, true}) {
      const std::string name = "gru_wide_" + std::to_string(H) + (lbr ? "_lbr" : "");
      CompiledModel m = forward_layer("GRU", G, H, I, w, r, b, {{"linear_before_reset", attr_int(lbr ? 1 : 0)}}, name);
      for (int64_t B : {16, 5, 2}) {
        const auto x = testing::sine_wave(T * B * I, 0.37f, 0.5f);
        expect_one_and_two_threads_match(m, T, B, I, H, x, testing::reference_gru({T, B, I, H, 1}, x, w, r, b, lbr),
                                         name);
      }
    }
  }
}

// One forward LSTM layer, whose phases run within each tile
// (Stage::phases_within_tiles), on one and on two threads against ONNX's LSTM
// in double (tests/support/lstm_reference.h): hidden 128 (8 tiles, shared
// from 4 batch rows: 0.13 MFLOP a row) and 72 (5 tiles, the last partial;
// shared from 13 rows) at 16, 5 and 2 rows. A tile whose phase read another
// tile's sums, or a state row before its tile wrote it, would differ from the
// reference.
TEST(RecurrentTemplate, AForwardLstmSharingItsTilesBetweenThreadsMatchesTheOnnxFormula) {
  const int64_t T = 4, I = 8, G = 4;
  for (int64_t H : {128, 72}) {
    const auto w = testing::sine_wave(G * H * I, 0.7f, 0.1f, 0.3f), r = testing::sine_wave(G * H * H, 1.3f, 0.2f, 0.1f),
               b = testing::sine_wave(2 * G * H, 0.9f, 0.3f, 0.2f);
    const std::string name = "lstm_forward_" + std::to_string(H);
    CompiledModel m = forward_layer("LSTM", G, H, I, w, r, b, {}, name);
    for (int64_t B : {16, 5, 2}) {
      const auto x = testing::sine_wave(T * B * I, 0.37f, 0.5f);
      expect_one_and_two_threads_match(m, T, B, I, H, x, testing::reference_lstm({T, B, I, H, 1}, x, w, r, b), name);
    }
  }
}

// Layers started from given (random, non-zero) states: the kernel writes
// only step 0's rows from them, so a state it skipped or a row it read
// unwritten shows in the outputs
// (tests/references/recurrent/make_initial_state_references.py).
struct StartedLayer {
  std::string name;
  std::vector<std::string> inputs;  // in the model's order: x, h0[, c0]
};
void PrintTo(const StartedLayer &l, std::ostream *os) { *os << l.name; }

class RecurrentTemplateFromStates : public ::testing::TestWithParam<StartedLayer> {};

// The layer's output at both reference shapes (BASE.k.NAME.npy for each input) against PyTorch's.
void expect_started_layer_matches(const Compiled &c, const std::string &base, const StartedLayer &layer) {
  Executor exec(c.model.plan, c.model.dir);
  for (int k = 1; k <= 2; ++k) {
    const std::string ref = base + "." + std::to_string(k);
    std::vector<TensorData> in;
    for (const auto &n : layer.inputs) in.push_back(read_npy(ref + "." + n + ".npy"));
    auto out = exec.run(in);
    testing::expect_close(out[0], read_npy(ref + ".output.npy"), layer.name + " at shape set " + std::to_string(k));
  }
}

TEST_P(RecurrentTemplateFromStates, GivenInitialStatesMatchPyTorchAtBatchOneAndSix) {
  const std::string base = testing::references_dir() + "/recurrent/" + GetParam().name;
  Compiled c = compile_on_host(base + ".onnx");
  int recurrent = 0;
  for (const auto &s : c.schedules) recurrent += s == "recurrent";
  EXPECT_EQ(recurrent, 1) << "the layer's kernel must get the recurrent template";
  expect_started_layer_matches(c, base, GetParam());
}

// The same layers as onednn.recurrence steps: the step copies the given
// states into its own and writes Y from them.
TEST_P(RecurrentTemplateFromStates, GivenInitialStatesMatchPyTorchAsOnednnRecurrenceSteps) {
  const std::string base = testing::references_dir() + "/recurrent/" + GetParam().name;
  Compiled c = compile_for(base + ".onnx", {"onednn", "host"});
  int steps = 0;
  for (const PlanStep &s : c.model.plan.steps) steps += s.extern_call == "onednn.recurrence";
  EXPECT_EQ(steps, 1) << "the layer's recurrence must be an onednn.recurrence step";
  install_backend_runtimes();
  expect_started_layer_matches(c, base, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Layers, RecurrentTemplateFromStates,
                         ::testing::Values(StartedLayer{"lstm_h64_state", {"x", "h0", "c0"}},
                                           StartedLayer{"gru_small_state", {"x", "h0"}}),
                         [](const ::testing::TestParamInfo<StartedLayer> &i) { return i.param.name; });

}  // namespace
}  // namespace disco
