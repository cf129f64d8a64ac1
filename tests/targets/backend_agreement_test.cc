// Backends agree (issue #21): the same model gives the same numbers whichever
// backend runs it, within a stated tolerance.
//
// - Every math function that a dot's epilogue can apply (so that oneDNN, the
//   panel product, the host's Halide kernels and OpenCL each compute it their
//   own way) at row counts that reach each product path (1 row: inner product;
//   24: the panel product on AVX-512 machines; 300: oneDNN's matmul) is
//   checked against a double-precision reference computed here, within
//   kEpilogueTol: the float32 dot's rounding plus a few ulp of the function.
//   Two backends within it of the reference agree with each other within
//   twice it.
// - Every benchmark model run by each available backend agrees with the host
//   backend within the CLI's default --expect tolerance (rtol 1e-4, atol 1e-5);
//   the model tests check each against PyTorch.
//
// OpenCL runs on PoCL in a disco-exec child process (PoCL's LLVM cannot share
// a process with Halide's); it is skipped with a message where PoCL is absent.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "frontend/tensor_compare.h"
#include "runtime/npy.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/opencl_device.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::random_f32;
using testing::sym;

// |got - want| <= atol + rtol * |want| for the epilogue models: K = 64 products
// of |x| < 1 and |w| < 1/8 round to within ~5e-7 in float32, and the math
// library's functions are within 4 ulp (lowering/math_library.h).
constexpr double kEpilogueRtol = 2e-6, kEpilogueAtol = 2e-6;

struct BackendChoice {
  std::string name;
  CompileOptions opts;
};

// host, onednn,host and (with PoCL) OpenCL.
std::vector<BackendChoice> backends() {
  std::vector<BackendChoice> out;
  CompileOptions host;
  host.backends = {"host"};
  out.push_back({"host", host});
  CompileOptions onednn;
  onednn.backends = {"onednn", "host"};
  out.push_back({"onednn,host", onednn});
  if (testing::has_pocl_device()) {
    CompileOptions ocl;
    ocl.target = "opencl";
    select_gpu_target(ocl, /*backends_given=*/false);
    out.push_back({"opencl", ocl});
  }
  return out;
}

// An activation after MatMul + bias, with its double-precision definition.
struct Epilogue {
  std::string name;
  int opset;
  std::function<std::string(GraphBuilder &, const std::string &)> build;
  std::function<double(double)> exact;
};

void PrintTo(const Epilogue &e, std::ostream *os) { *os << e.name; }

double gelu_erf(double z) { return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0))); }
double gelu_tanh(double z) {
  return 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
}

std::string scalar(GraphBuilder &b, const std::string &name, float v) { return b.constant(name, testing::f32({}, {v})); }

std::vector<Epilogue> epilogues() {
  auto unary = [](const std::string &op, Attributes a = {}) {
    return [op, a](GraphBuilder &b, const std::string &z) { return b.op(op, {z}, a); };
  };
  return {
      {"Tanh", 17, unary("Tanh"), [](double z) { return std::tanh(z); }},
      {"Sigmoid", 17, unary("Sigmoid"), [](double z) { return 1 / (1 + std::exp(-z)); }},
      {"Erf", 17, unary("Erf"), [](double z) { return std::erf(z); }},
      {"Exp", 17, unary("Exp"), [](double z) { return std::exp(z); }},
      {"Softplus", 17, unary("Softplus"), [](double z) { return std::log1p(std::exp(z)); }},
      {"Elu", 17, unary("Elu"), [](double z) { return z > 0 ? z : std::expm1(z); }},
      {"GeluErfNode", 20, unary("Gelu"), gelu_erf},
      {"GeluTanhNode", 20, unary("Gelu", {{"approximate", attr_string("tanh")}}), gelu_tanh},
      // PyTorch's export of nn.GELU() before opset 20: x * 0.5 * (1 + erf(x / sqrt 2)).
      {"GeluErfDecomposed", 17,
       [](GraphBuilder &b, const std::string &z) {
         auto e = b.op("Erf", {b.op("Div", {z, scalar(b, "sqrt2", 1.4142135f)})});
         auto one_plus = b.op("Add", {e, scalar(b, "one", 1.0f)});
         return b.op("Mul", {b.op("Mul", {z, one_plus}), scalar(b, "half", 0.5f)});
       },
       gelu_erf},
  };
}

class EpilogueAgreement : public ::testing::TestWithParam<Epilogue> {};

TEST_P(EpilogueAgreement, EveryBackendIsWithinTheToleranceOfDoublePrecisionAtEveryProductPath) {
  const Epilogue &ep = GetParam();
  constexpr int64_t K = 64, N = 48;
  const TensorData w = random_f32({K, N}, 7, 0.125f), bias = random_f32({N}, 8, 0.25f);
  GraphBuilder b(ep.opset);
  auto x = b.input("x", DType::F32, {sym("rows"), K});
  auto z = b.op("Add", {b.op("MatMul", {x, b.constant("w", w)}), b.constant("b", bias)});
  b.output(ep.build(b, z));
  const Graph g = b.build();

  const float *wv = w.as<float>(), *bv = bias.as<float>();
  for (const auto &be : backends()) {
    Session s(g, "agree_" + ep.name, "", be.opts);
    for (int64_t rows : {1, 24, 300}) {
      const TensorData tx = random_f32({rows, K}, 100 + static_cast<uint32_t>(rows));
      const TensorData y = s.run({tx})[0];
      ASSERT_EQ(y.shape, (std::vector<int64_t>{rows, N}));
      const float *xv = tx.as<float>(), *yv = y.as<float>();
      double worst = 0;
      int64_t worst_at = 0;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = bv[j];
          for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(xv[i * K + k]) * wv[k * N + j];
          const double want = ep.exact(acc), got = yv[i * N + j];
          const double r = std::abs(got - want) / (kEpilogueAtol + kEpilogueRtol * std::abs(want));
          if (!(r <= worst)) worst = r, worst_at = i * N + j;  // NaN counts as worst
        }
      EXPECT_LE(worst, 1.0) << ep.name << " on " << be.name << " at " << rows << " rows: element " << worst_at
                            << " is " << worst << "x the tolerance (rtol " << kEpilogueRtol << ", atol "
                            << kEpilogueAtol << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Functions, EpilogueAgreement, ::testing::ValuesIn(epilogues()),
                         [](const ::testing::TestParamInfo<Epilogue> &i) { return i.param.name; });

class ModelAgreement : public ::testing::TestWithParam<std::string> {};

// oneDNN against the host at these shapes is onednn_models_test's (with
// PyTorch's numbers too); this one adds the backends that test leaves out.
TEST_P(ModelAgreement, EveryOtherBackendAgreesWithTheHostAtTheReferenceShapes) {
  const std::string name = GetParam();
  const std::string path = testing::find_model(name);
  if (path.empty()) GTEST_SKIP() << name << ".onnx is neither in ../shared/models nor in examples/models";
  auto choices = backends();
  choices.erase(std::remove_if(choices.begin(), choices.end(), [](const BackendChoice &c) { return c.name == "onednn,host"; }),
                choices.end());
  if (choices.size() < 2) GTEST_SKIP() << "PoCL is not installed: no OpenCL device to compare with the host";
  std::vector<Session> sessions;
  for (const auto &be : choices) sessions.push_back(Session::from_onnx(path, be.opts));
  const std::string ref = testing::reference_name(name);
  for (int k = 1; k <= 3; ++k) {
    const TensorData x = read_npy(testing::references_dir() + "/" + ref + "." + std::to_string(k) + ".input.npy");
    const TensorData host = sessions[0].run({x})[0];
    for (size_t b = 1; b < sessions.size(); ++b) {
      const TensorData got = sessions[b].run({x})[0];
      testing::expect_close(got, host, name + " set " + std::to_string(k) + ": " + choices[b].name + " against host");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelAgreement, ::testing::ValuesIn(testing::benchmark_models()));

}  // namespace
}  // namespace disco
