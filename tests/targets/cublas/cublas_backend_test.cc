// The cuBLAS backend (targets/cublas/): which nodes its rules take, at which
// shapes, and why they decline the rest; how a row-major MatMul or Gemm maps
// onto cuBLAS's column-major call (checked against a scalar column-major GEMM
// that follows cuBLAS's documented semantics, so no GPU is needed); the host
// epilogue; the clear error (never an abort) when no GPU is there, in the
// library and through `disco run`; and, where a GPU exists, the numbers
// against a plain scalar matmul and PyTorch's references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "driver/backend_registry.h"
#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"
#include "runtime/extern_kernel.h"
#include "runtime/npy.h"
#include "driver/compile_model.h"
#include "targets/cublas/cublas_backend.h"
#include "targets/cublas/cublas_kernels.h"
#include "targets/cublas/cuda_api.h"
#include "tests/support/command.h"
#include "tests/support/jit_eval.h"
#include "tests/support/model_files.h"
#include "tests/support/model_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // f32, ramp, sym, count_steps, expect_close

// ---- helpers ----------------------------------------------------------------

testing::Partitioned partition_for_cublas(Graph g) { return testing::partition_for(std::move(g), {"cublas", "host"}); }

CompileOptions cublas_options() {
  CompileOptions o;
  o.backends = {"cublas", "host"};
  o.use_cache = false;
  return o;
}

// Whether this machine has a usable GPU; `why` says what is missing.
bool gpu_available(std::string *why) {
  try {
    CudaDevice::shared();
    return true;
  } catch (const Error &e) {
    *why = e.what();
    return false;
  }
}

// A plain row-major batched matmul in double: Y[..., M, N] = op(A) op(B).
// Batch dims: B 2-D (shared), A 2-D (shared), or equal.
TensorData scalar_matmul(const TensorData &a, const TensorData &b, bool ta, bool tb, double alpha) {
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const int64_t M = ta ? a.shape[ra - 1] : a.shape[ra - 2], K = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t N = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  std::vector<int64_t> batch_shape(ra > 2 ? a.shape.begin() : b.shape.begin(),
                                   ra > 2 ? a.shape.end() - 2 : b.shape.end() - 2);
  int64_t batch = 1;
  for (int64_t d : batch_shape) batch *= d;
  std::vector<int64_t> ys = batch_shape;
  ys.push_back(M);
  ys.push_back(N);
  TensorData y(DType::F32, ys);
  const float *pa = a.as<float>(), *pb = b.as<float>();
  for (int64_t i = 0; i < batch; ++i) {
    const float *ai = pa + (ra > 2 ? i * M * K : 0), *bi = pb + (rb > 2 ? i * K * N : 0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += double(ta ? ai[k * M + m] : ai[m * K + k]) * (tb ? bi[n * K + k] : bi[k * N + n]);
        y.mutable_as<float>()[(i * M + m) * N + n] = static_cast<float>(alpha * s);
      }
  }
  return y;
}

// cuBLAS's column-major (strided batched) SGEMM, as its documentation defines it:
// C(i, j) = alpha * sum_l op(A)(i, l) op(B)(l, j), element (r, c) of X at X[r + c * ldx].
void column_major_sgemm(const CublasGemmArgs &g, float alpha, const float *first, const float *second, float *c) {
  auto at = [](const float *x, int op, int ld, int r, int col) { return op ? x[col + r * ld] : x[r + col * ld]; };
  for (int b = 0; b < g.batch; ++b)
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) {
        double s = 0;
        for (int l = 0; l < g.k; ++l)
          s += double(at(first + b * g.stride_first, g.op_first, g.ld_first, i, l)) *
               at(second + b * g.stride_second, g.op_second, g.ld_second, l, j);
        c[b * g.stride_c + i + j * g.ldc] = static_cast<float>(alpha * s);
      }
}

// x [b, s, 8] -> MatMul(W [8, 16]) -> Add(bias [16]) -> Relu -> y [b, s, 16]
Graph linear_relu_graph() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), sym("s"), 8});
  auto mm = b.op("MatMul", {x, b.constant("w", f32({8, 16}, 0.125f, 1))});
  b.output(b.op("Relu", {b.op("Add", {mm, b.constant("bias", f32({16}, 0.5f, 3))})}));
  return b.build();
}

// ---- (a) rules and partitions -----------------------------------------------

TEST(CublasRules, TakeAMatMulWithItsConstantBiasAndRelu) {
  auto p = partition_for_cublas(linear_relu_graph());
  ASSERT_EQ(p.partition.regions.size(), 1u) << p.notes();
  const Region &r = p.partition.regions[0];
  EXPECT_EQ(r.backend, "cublas");
  ASSERT_EQ(r.units.size(), 1u);
  EXPECT_EQ(r.units[0].nodes.size(), 3u) << "MatMul, Add and Relu form one unit";
  EXPECT_EQ(r.symbols, (std::vector<std::string>{"b", "s"}));
  CompiledModel m = compile_graph(linear_relu_graph(), "linear_relu", "", cublas_options());
  ASSERT_EQ(m.plan.steps.size(), 1u);
  const PlanStep &s = m.plan.steps[0];
  EXPECT_EQ(s.extern_call, "cublas.matmul");
  EXPECT_EQ(s.params.at("epilogue"), "add:1,relu");
  EXPECT_EQ(s.inputs.size(), 3u) << "x, the weights, the bias";
}

TEST(CublasRules, TakeBatchedMatMulsWhoseBatchDimsAreProvablyEqual) {
  GraphBuilder b;
  auto q = b.input("q", DType::F32, {sym("b"), 4, sym("s"), 8});
  auto k = b.input("k", DType::F32, {sym("b"), 4, 8, sym("s")});
  b.output(b.op("MatMul", {q, k}));
  auto p = partition_for_cublas(b.build());
  EXPECT_EQ(p.backend_of("MatMul"), "cublas") << p.notes();
  // The call at run time: batch 2*4, Y [2, 4, 5, 5] from Q [2, 4, 5, 8] K [2, 4, 8, 5].
  CublasGemmArgs g = plan_cublas_gemm(false, false, false, {2, 4, 5, 8}, {2, 4, 8, 5}, {2, 4, 5, 5}, "t");
  EXPECT_EQ(g.batch, 8);
  EXPECT_EQ(g.m, 5);
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 8);
  EXPECT_EQ(g.stride_first, 40);
  EXPECT_EQ(g.stride_second, 40);
  EXPECT_EQ(g.stride_c, 25);
}

TEST(CublasRules, TakeGemmWithItsCAsAScaledAdd) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("batch"), 6});
  auto y = b.op("Gemm", {x, b.constant("w", f32({4, 6}, 0.25f, 0)), b.constant("c", f32({4}, 1.0f, 2))},
                {{"transB", attr_int(1)}, {"beta", attr_float(0.5f)}, {"alpha", attr_float(2.0f)}});
  b.output(b.op("Relu", {y}));
  Graph g = b.build();
  auto p = partition_for_cublas(g);
  EXPECT_EQ(p.backend_of("Gemm"), "cublas") << p.notes();
  EXPECT_EQ(p.backend_of("Relu"), "cublas");
  CompiledModel m = compile_graph(std::move(g), "gemm_relu", "", cublas_options());
  ASSERT_EQ(m.plan.steps.size(), 1u);
  EXPECT_EQ(m.plan.steps[0].params.at("epilogue"), "add:0.5,relu");
  // The constant B [4, 6] with transB is transposed at compile time (lowering/weight_layout.h).
  EXPECT_EQ(m.plan.steps[0].params.at("trans_b"), "0");
  EXPECT_EQ(std::stod(m.plan.steps[0].params.at("alpha")), 2.0);
}

struct Decline {
  const char *what;
  Graph graph;
  const char *reason;
};

TEST(CublasRules, DeclineWhatCublasCannotRunAndTheHostTakesIt) {
  std::vector<Decline> cases;
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F64, {sym("n"), 4});
    b.output(b.op("MatMul", {x, b.input("w", DType::F64, {4, 3})}));
    cases.push_back({"float64", b.build(), "only float32 is supported; 'x' is float64"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4});
    b.output(b.op("MatMul", {x, b.constant("v", f32({4}, 1.0f, 0))}));
    cases.push_back({"1-D B", b.build(), "1-D operands are left to the next backend"});
  }
  {
    GraphBuilder b;  // [b, 1, s, 8] x [b, 4, 8, 5]: A's dim 1 broadcasts
    auto x = b.input("x", DType::F32, {sym("b"), 1, sym("s"), 8});
    b.output(b.op("MatMul", {x, b.input("w", DType::F32, {sym("b"), 4, 8, 5})}));
    cases.push_back({"broadcast batch", b.build(), "batch dim 1 of A and B may differ"});
  }
  {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("s"), 8, 8});
    b.output(b.op("MatMul", {x, b.input("w", DType::F32, {2, sym("s"), 8, 5})}));
    cases.push_back({"ranks differ", b.build(), "A and B have different ranks"});
  }
  for (auto &c : cases) {
    auto p = partition_for_cublas(std::move(c.graph));
    EXPECT_EQ(p.backend_of("MatMul"), "host") << c.what;
    EXPECT_TRUE(p.has_note(std::string("cublas declines MatMul_0 (MatMul): ") + c.reason))
        << c.what << ": expected '" << c.reason << "', notes:\n"
        << p.notes();
  }
}

TEST(CublasRules, AreOptInAndTakeEveryMatMulOfBertLayer) {
  EXPECT_EQ(CompileOptions().backends, (std::vector<std::string>{"onednn", "host"})) << "cublas is not a default";
  const std::string path = testing::find_model("bert_layer");
  if (path.empty()) GTEST_SKIP() << "bert_layer.onnx is not in ../shared/models";
  auto p = testing::partition_for(load_model_source(path).graph, {"cublas", "host"});
  int matmuls = 0;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op_type != "MatMul") continue;
    ++matmuls;
    EXPECT_EQ(p.partition.regions.at(p.partition.region_of[n]).backend, "cublas") << p.graph.nodes[n].name;
  }
  EXPECT_EQ(matmuls, 8) << "Q, K, V, the two attention products, the output projection, two feed-forward";
}

// ---- (b) the column-major mapping and the epilogue, without a GPU --------------

struct GemmCase {
  bool gemm, ta, tb;
  std::vector<int64_t> a, b;
};

TEST(CublasKernels, ColumnMajorCallMatchesARowMajorScalarMatmul) {
  const std::vector<GemmCase> cases = {
      {false, false, false, {3, 5}, {5, 4}},           {false, false, false, {2, 3, 5}, {5, 4}},
      {false, false, false, {2, 3, 3, 5}, {2, 3, 5, 7}}, {false, false, false, {3, 5}, {2, 5, 4}},
      {true, false, false, {3, 5}, {5, 4}},            {true, true, false, {5, 3}, {5, 4}},
      {true, false, true, {3, 5}, {4, 5}},             {true, true, true, {5, 3}, {4, 5}},
      {false, false, false, {1, 1}, {1, 9}},
  };
  int index = 0;
  for (const GemmCase &c : cases) {
    const std::string what = "case " + std::to_string(index++);
    TensorData a = f32(c.a, 0.25f, 1), b = f32(c.b, 0.125f, 4);
    TensorData want = scalar_matmul(a, b, c.ta, c.tb, 1.5);
    const CublasGemmArgs g = plan_cublas_gemm(c.gemm, c.ta, c.tb, a.shape, b.shape, want.shape, what);
    TensorData got(DType::F32, want.shape);
    column_major_sgemm(g, 1.5f, b.as<float>(), a.as<float>(), got.mutable_as<float>());
    expect_close(got, want, what);
  }
}

TEST(CublasKernels, RejectShapesThatDoNotFitNamingTheStep) {
  testing::expect_error_naming([] { plan_cublas_gemm(false, false, false, {3, 5}, {4, 2}, {3, 2}, "stepX"); },
                               "stepX", "K = 5");
  testing::expect_error_naming([] { plan_cublas_gemm(false, false, false, {3, 5}, {5, 2}, {3, 3}, "stepX"); },
                               "stepX", "gives [3,2]");
  testing::expect_error_naming(
      [] { plan_cublas_gemm(false, false, false, {2, 3, 5}, {3, 5, 2}, {2, 3, 2}, "stepX"); }, "stepX",
      "cuBLAS does not broadcast");
  testing::expect_error_naming([] { parse_epilogue("add:1,gelu", "stepX"); }, "stepX", "gelu");
}

TEST(CublasKernels, EpilogueAddsBroadcastOperandsThenRectifies) {
  TensorData y = f32({2, 3, 4}, 0.5f, 0), row = f32({4}, 1.0f, 5), col = f32({3, 1}, 0.25f, 2);
  TensorData want = y;
  float *w = want.mutable_as<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        float &v = w[(i * 3 + j) * 4 + k];
        v = v + 0.5f * row.as<float>()[k] + col.as<float>()[j];
        v = v < 0 ? 0 : v;
      }
  ExternTensor ty{y.mutable_data(), DType::F32, y.shape, false};
  ExternTensor trow{row.mutable_data(), DType::F32, row.shape, true}, tcol{col.mutable_data(), DType::F32, col.shape};
  apply_epilogue(parse_epilogue("add:0.5,add:1,relu", "t"), {&trow, &tcol}, ty, "t");
  expect_close(y, want, "bias row, column and relu");
  ExternTensor bad{col.mutable_data(), DType::F32, {5}, false};
  testing::expect_error_naming([&] { apply_epilogue(parse_epilogue("add:1", "t"), {&bad}, ty, "stepY"); }, "stepY",
                               "does not broadcast");
}

// ---- (c) without a GPU: a clear error, never an abort ----------------------------

TEST(CublasRuntime, AMissingDriverIsAnErrorNamingTheLibrary) {
  try {
    CudaDevice dev(CudaLibraryPaths{"/nonexistent/libcuda.so.1", {}});
    FAIL() << "a driver that does not exist was loaded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot load the CUDA driver library /nonexistent/libcuda.so.1"),
              std::string::npos)
        << e.what();
  }
}

TEST(CublasRuntime, TheToolkitStubDriverIsAnErrorNotACrash) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (FILE *f = std::fopen(stub.c_str(), "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  }
  try {
    CudaDevice dev(CudaLibraryPaths{stub, {}});
    FAIL() << "the stub driver gave a device";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)"), std::string::npos)
        << e.what();
  }
}

TEST(CublasRuntime, RunningWithoutAGpuFailsWithTheStepAndTheReason) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU: the numerics tests run instead";
  CompiledModel m = compile_graph(linear_relu_graph(), "linear_relu", "", cublas_options());
  install_backend_runtimes();
  Executor exec(m.plan, m.dir);
  TensorData x = f32({2, 3, 8}, 0.25f, 0);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second run fails the same way
    try {
      exec.run({x});
      FAIL() << "ran without a GPU";
    } catch (const Error &e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("step MatMul_0 Add_1 Relu_2 (cublas.matmul): cuda: "), std::string::npos) << msg;
      EXPECT_EQ(msg, why.empty() ? msg : "step MatMul_0 Add_1 Relu_2 (cublas.matmul): " + why);
    }
  }
}

using testing::CommandResult;
using testing::run_command;

std::string temp_dir() { return testing::make_temp_dir("cublas-test"); }

TEST(CublasRuntime, DiscoRunWithoutAGpuExitsOneWithTheMessage) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU";
  const std::string path = testing::find_model("mlp");
  if (path.empty()) GTEST_SKIP() << "mlp.onnx is not in ../shared/models";
  const std::string cache = temp_dir();
  CommandResult r = run_command("DISCO_CACHE_DIR=" + cache + " " + DISCO_BINARY + " run " + path +
                                " --targets cublas,host --shape x=3x256");
  std::system(("rm -rf " + cache).c_str());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("disco: error: step /fc1/Gemm (cublas.matmul): cuda: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Aborted"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

#ifdef DISCO_GPU_CHECK_RUNNER
// benchmarks/gpu_check.sh reads the runner's first line and exit status to tell "no GPU" apart.
TEST(CublasRuntime, GpuCheckRunnerWithoutAGpuSaysNoGpuAndExitsThree) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU";
  CompiledModel m = compile_graph(linear_relu_graph(), "linear_relu", "", cublas_options());
  const std::string dir = temp_dir();
  write_npy(dir + "/in.npy", f32({2, 3, 8}, 0.25f, 0));
  write_npy(dir + "/ref.npy", f32({2, 3, 16}, 0.25f, 0));
  CommandResult r = run_command(std::string(DISCO_GPU_CHECK_RUNNER) + " " + m.dir + " " + dir + "/in.npy " + dir +
                                "/ref.npy");
  std::system(("rm -rf " + dir).c_str());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output, "no-gpu\t" + why + "\n");
}
#endif

// ---- (d) on a GPU: the numbers -------------------------------------------------------

TEST(CublasGpu, KernelMatchesAScalarMatmulWithBiasAndRelu) {
  std::string why;
  if (!gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  install_cublas_runtime();
  const ExternKernelFactory *make = ExternKernelRegistry::global().find("cublas.matmul");
  ASSERT_NE(make, nullptr);
  const std::vector<GemmCase> cases = {
      {false, false, false, {2, 7, 64}, {64, 33}},          {false, false, false, {2, 3, 17, 9}, {2, 3, 9, 17}},
      {false, false, false, {5, 9}, {3, 9, 6}},             {true, false, true, {8, 300}, {129, 300}},
      {true, true, false, {300, 8}, {300, 129}},            {false, false, false, {1, 1}, {1, 1}},
  };
  int index = 0;
  for (const GemmCase &c : cases) {
    const std::string what = "case " + std::to_string(index++);
    TensorData a = f32(c.a, 0.25f, 1), b = f32(c.b, 0.125f, 4);
    TensorData want = scalar_matmul(a, b, c.ta, c.tb, 1.0);
    const int64_t n = want.shape.back();
    TensorData bias = f32({n}, 0.5f, 2);
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      float &v = want.mutable_as<float>()[i];
      v = std::max(v + bias.as<float>()[i % n], 0.0f);
    }
    PlanStep step;
    step.extern_call = "cublas.matmul";
    step.label = what;
    step.params = {{"gemm", c.gemm ? "1" : "0"}, {"trans_a", c.ta ? "1" : "0"}, {"trans_b", c.tb ? "1" : "0"},
                   {"alpha", "1"},               {"epilogue", "add:1,relu"}};
    auto kernel = (*make)(step);
    TensorData got(DType::F32, want.shape);
    std::vector<ExternTensor> ins{{a.mutable_data(), DType::F32, a.shape, false},
                                  {b.mutable_data(), DType::F32, b.shape, true},
                                  {bias.mutable_data(), DType::F32, bias.shape, true}};
    std::vector<ExternTensor> outs{{got.mutable_data(), DType::F32, got.shape, false}};
    for (int run = 0; run < 2; ++run) {  // the second run reads the resident weights
      kernel->run(ExternCall{ins, outs, SymbolValues{}});
      expect_close(got, want, what + " run " + std::to_string(run), 1e-4, 1e-4);
    }
  }
}

TEST(CublasGpu, ModelsMatchPyTorchAtThreeShapes) {
  std::string why;
  if (!gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  int ran = 0;
  for (const char *model : {"mlp", "bert_layer", "bert_small4"}) {
    const std::string path = testing::find_model(model);
    if (path.empty()) continue;
    CompiledModel m = compile_onnx(path, cublas_options());
    EXPECT_GT(count_steps(m.plan, "cublas.matmul"), 0) << model;
    install_backend_runtimes();
    Executor exec(m.plan, m.dir);
    for (int k = 1; k <= 3; ++k) {
      const std::string base = testing::references_dir() + "/" + model + "." + std::to_string(k);
      auto out = exec.run({read_npy(base + ".input.npy")});
      expect_close(out[0], read_npy(base + ".output.npy"), std::string(model) + " at shape set " + std::to_string(k),
                   1e-3, 1e-4);
    }
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no model of ../shared/models found";
}

}  // namespace
}  // namespace disco
