// convnet and convnet_bn through `--targets vitis_ai,host`: every Conv is in
// a vitis_ai region, and the int8 model (the numbers a DPU gives) agrees with
// the float model, run by the host and oneDNN backends, on 200 random
// inputs: the top-1 class on at least 95% of them, the logits within 5%
// relative L2 error. It also stays within 5% of PyTorch's reference output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime/npy.h"
#include "targets/partitioner.h"
#include "driver/session.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/partitioned.h"

namespace disco {
namespace {

double relative_l2(const TensorData &got, const TensorData &want) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double d = double(got.as<float>()[i]) - want.as<float>()[i];
    num += d * d, den += double(want.as<float>()[i]) * want.as<float>()[i];
  }
  return std::sqrt(num / den);
}

int argmax_row(const TensorData &t, int64_t row) {
  const int64_t n = t.shape[1];
  const float *p = t.as<float>() + row * n;
  return static_cast<int>(std::max_element(p, p + n) - p);
}

void check_model(const std::string &name) {
  SCOPED_TRACE(name);
  const std::string path = testing::find_model(name);
  if (path.empty()) GTEST_SKIP() << name << ".onnx is neither in ../shared/models nor in examples/models";

  testing::Partitioned p = testing::partition_for(load_model_source(path).graph, {"vitis_ai", "host"}, {});
  int convs = 0;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op_type != "Conv") continue;
    ++convs;
    EXPECT_EQ(p.partition.regions.at(p.partition.region_of[n]).backend, "vitis_ai") << p.graph.nodes[n].name;
  }
  EXPECT_EQ(convs, 9);

  CompileOptions vitis, fp32;
  vitis.backends = {"vitis_ai", "host"};
  fp32.backends = {"onednn", "host"};
  Session q = Session::from_onnx(path, vitis);
  Session f = Session::from_onnx(path, fp32);
  int regions = 0;
  for (const auto &s : q.last_compile().plan.steps) regions += s.extern_call == "vitis_ai.region";
  EXPECT_GE(regions, 1) << "no region fell back to the host";

  // 200 inputs of N(0, 1) noise, as one batch, at 16x16 (the model takes any H, W).
  const int64_t batch = 200;
  TensorData x(DType::F32, {batch, 3, 16, 16});
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_as<float>()[i] = normal(rng);
  const TensorData got = q.run({x})[0], want = f.run({x})[0];
  ASSERT_EQ(got.shape, want.shape);
  int agree = 0;
  for (int64_t r = 0; r < batch; ++r) agree += argmax_row(got, r) == argmax_row(want, r);
  const double err = relative_l2(got, want);
  std::printf("%s: top-1 agreement %d/%lld, relative L2 error of the logits %.4f\n", name.c_str(), agree,
              static_cast<long long>(batch), err);
  EXPECT_GE(agree, 190) << "top-1 agreement under 95%";
  EXPECT_LE(err, 0.05);

  if (const std::string shared = testing::shared_models_dir(); !shared.empty()) {
    const std::string base = shared + "/" + testing::reference_name(name);
    const TensorData ref_out = read_npy(base + ".output.npy");
    const double ref_err = relative_l2(q.run({read_npy(base + ".input.npy")})[0], ref_out);
    std::printf("%s: relative L2 error against PyTorch at the reference shape %.4f\n", name.c_str(), ref_err);
    EXPECT_LE(ref_err, 0.05);
  }
}

// Both models in one process: the int8 executor's pipelines are JIT-compiled once.
TEST(VitisAiModels, EveryConvIsInAVitisRegionAndInt8AgreesWithFloatOnConvnetAndConvnetBn) {
  check_model("convnet");
  check_model("convnet_bn");
}

}  // namespace
}  // namespace disco
