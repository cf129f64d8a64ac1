// The VART glue: VART's dummy runner (libvart-dummy-runner.so), created with
// vart::Runner::create_runner_with_attrs from the DPU subgraph of an emitted
// .xmodel, reports input and output tensors with the region's shapes (NHWC)
// and dtypes, and runs the tensor plumbing (it writes no outputs). The runner
// library is picked by the attrs key `lib` or by the subgraph's `runner`
// attribute.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "driver/backend_registry.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/extern_kernel.h"
#include "driver/compile_model.h"
#include "targets/vitis_ai/vart_runner.h"
#include "tests/support/tensors.h"
#if DISCO_VITIS_AI_XIR
#include <xir/graph/graph.hpp>
#include <xir/graph/subgraph.hpp>
#endif

namespace disco {
namespace {

#if DISCO_VITIS_AI_XIR

using vitis_ai::VartRegionRunner;
using testing::Shape64;

constexpr const char *kDummy = "libvart-dummy-runner.so";

// The dummy runner gives its tensors a batch of $DUMMY_RUNNER_BATCH_SIZE
// (3 unless set), read once per process: set it before the first runner.
const bool kBatchOne = (setenv("DUMMY_RUNNER_BATCH_SIZE", "1", 1), true);

// x [1, 3, 10, 12] -> Conv 3x3 pad 1 (8 channels) + Relu -> MaxPool 2x2 s2 -> y [1, 8, 5, 6].
std::string emit_small_region() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 3, 10, 12});
  const int64_t n = 8 * 3 * 9;
  auto w = b.constant("w", testing::f32({8, 3, 3, 3}, testing::ramp(n, 0.05f, 1)));
  auto c = b.op("Conv", {x, w}, {{"pads", attr_ints({1, 1, 1, 1})}});
  b.output(b.op("MaxPool", {b.op("Relu", {c})}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}));
  CompileOptions o;
  o.backends = {"vitis_ai", "host"};
  o.use_cache = false;
  CompiledModel m = compile_graph(b.build(), "small", "", o);
  for (const auto &s : m.plan.steps)
    if (s.extern_call == "vitis_ai.region") return m.dir + "/" + param_str(s, "xmodel");
  ADD_FAILURE() << "no vitis_ai region";
  return "";
}

void expect_region_tensors(VartRegionRunner &r) {
  const auto in = r.inputs(), out = r.outputs();
  ASSERT_EQ(in.size(), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(in[0].shape, (Shape64{1, 10, 12, 3})) << "x in NHWC";
  EXPECT_EQ(out[0].shape, (Shape64{1, 5, 6, 8})) << "y in NHWC";
  // The uncompiled graph's edges are float tensors (data, and the last fix op's output).
  EXPECT_EQ(in[0].dtype, "FLOAT32");
  EXPECT_EQ(out[0].dtype, "FLOAT32");
}

TEST(VitisAiVart, DummyRunnerFromTheAttrsLibKeySeesTheRegionsTensors) {
  const std::string xmodel = emit_small_region();
  ASSERT_TRUE(std::filesystem::exists(xmodel)) << xmodel;
  VartRegionRunner r(xmodel, kDummy);
  expect_region_tensors(r);
  std::vector<float> x(1 * 10 * 12 * 3, 0.5f), y(1 * 5 * 6 * 8, -1.0f);
  r.run({x.data()}, {y.data()});  // the dummy runner accepts the buffers and returns status 0
}

TEST(VitisAiVart, DummyRunnerFromTheSubgraphRunnerAttribute) {
  const std::string xmodel = emit_small_region();
  std::unique_ptr<xir::Graph> g = xir::Graph::deserialize(xmodel);
  int dpu = 0;
  for (xir::Subgraph *s : g->get_root_subgraph()->children_topological_sort())
    if (s->get_attr<std::string>("device") == "DPU") {
      s->set_attr<std::map<std::string, std::string>>("runner", {{"run", kDummy}});
      ++dpu;
    }
  ASSERT_EQ(dpu, 1) << "one DPU subgraph per region";
  const std::string patched = xmodel + ".dummy.xmodel";
  g->serialize(patched);
  VartRegionRunner r(patched, "");
  expect_region_tensors(r);
}

TEST(VitisAiVart, AMissingRunnerLibraryIsAnErrorNotAnAbort) {
  const std::string xmodel = emit_small_region();
  try {
    VartRegionRunner r(xmodel, "libvart-no-such-runner.so");
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("libvart-no-such-runner.so"), std::string::npos) << e.what();
  }
}

// With a "compiled" model installed ($DISCO_VITIS_AI_DPU_DIR) and the runner
// library overridden ($DISCO_VITIS_AI_RUNNER), the plan step runs the region
// through VART: the dummy runner writes nothing, so the outputs are the zeros
// of the buffers the glue hands it, where the reference executor gives
// non-zero values.
TEST(VitisAiVart, ThePlanStepRunsThroughVartWhenACompiledModelIsInstalled) {
  const std::string xmodel = emit_small_region();
  const std::string dir = std::filesystem::path(xmodel).parent_path().string();
  install_backend_runtimes();
  const Plan plan = Plan::load(dir + "/plan.txt");
  TensorData x = testing::f32({1, 3, 10, 12}, testing::ramp(360, 0.1f, 2));
  {
    Executor reference(plan, dir);
    const TensorData y = reference.run({x})[0];
    double sum = 0;
    for (int64_t i = 0; i < y.num_elements(); ++i) sum += std::fabs(y.as<float>()[i]);
    EXPECT_GT(sum, 0.0) << "the reference executor's output";
  }
  setenv("DISCO_VITIS_AI_DPU_DIR", dir.c_str(), 1);
  setenv("DISCO_VITIS_AI_RUNNER", kDummy, 1);
  Executor dpu(plan, dir);
  unsetenv("DISCO_VITIS_AI_DPU_DIR");
  unsetenv("DISCO_VITIS_AI_RUNNER");
  const TensorData y = dpu.run({x})[0];
  ASSERT_EQ(y.shape, (Shape64{1, 8, 5, 6}));
  for (int64_t i = 0; i < y.num_elements(); ++i) ASSERT_EQ(y.as<float>()[i], 0.0f) << "element " << i;
}

#else

TEST(VitisAiVart, SkippedWithoutLibvart) {
  GTEST_SKIP() << "disco was configured without libxir/libvart (apt-get install libxir-dev libvart-dev libunilog-dev)";
}

#endif

}  // namespace
}  // namespace disco
