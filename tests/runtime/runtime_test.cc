// The runtime's pieces without a compiler: plan files round-trip, the symbol
// binder reports mismatches by input and dim, .npy files round-trip, and
// linking the runtime leaves OpenMP's settings as the environment has them.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"
#include "runtime/memory_plan.h"
#include "runtime/npy.h"
#include "runtime/plan.h"
#include "runtime/shape_binder.h"

namespace disco {
namespace {

const Dim b = Dim::symbol("batch"), s = Dim::symbol("seq len"), h = Dim::symbol("H");

TEST(PlanFile, DimsRoundTripExactly) {
  for (const Dim &d : {Dim(0), Dim(-3), b * s * 768 + 1, floor_div(h - 1, Dim(2)) + 1, min(b, s) * max(h, b + 2),
                       floor_mod(b * 3 + 1, Dim(4))})
    EXPECT_EQ(parse_dim(serialize_dim(d)), d) << d.str();
}

TEST(PlanFile, PlansRoundTrip) {
  Plan p;
  p.name = "m";
  p.library = "kernels.so";
  p.inputs = {{"x", DType::F32, {b, s, 768}}};
  p.output_names = {"y"};
  p.checks = {{RuntimeCheck::Equal, s, Dim(768), "node 'n' (Op): a message with spaces"}};
  p.buffers = {{PlanBuffer::Input, "x", DType::F32, {b, s, 768}, 0}, {PlanBuffer::Output, "y", DType::F16, {b * s}, 0}};
  PlanStep kernel, host;
  kernel.kernel = "m_k0";
  kernel.label = "loop: a b";
  kernel.inputs = {0};
  kernel.symbols = {Dim::symbol("batch"), Dim::symbol("seq len"), floor_div(s + 1, 2) * b};  // an extent too
  kernel.outputs = {1};
  host.kernel = "m_k1";
  host.host_op = "Unique";
  host.host_attrs = {{"axis", -1}, {"sorted", 1}};
  host.inputs = {1, -1};
  host.outputs = {-1, 1};
  p.steps = {kernel, host};
  p.input_buffers = {0};
  p.output_buffers = {1};
  std::string path = std::string(::testing::TempDir()) + "/plan.txt";
  p.save(path);
  Plan q = Plan::load(path);
  EXPECT_EQ(q.inputs[0].shape, p.inputs[0].shape);
  EXPECT_EQ(q.checks[0].message, p.checks[0].message);
  EXPECT_EQ(q.buffers[1].dtype, DType::F16);
  EXPECT_EQ(q.buffers[1].shape[0], b * s);
  EXPECT_EQ(q.steps[0].symbols, p.steps[0].symbols);
  EXPECT_EQ(q.steps[0].label, "loop: a b");
  EXPECT_TRUE(q.steps[0].host_op.empty());
  EXPECT_EQ(q.steps[1].host_op, "Unique");
  EXPECT_EQ(q.steps[1].host_attrs, host.host_attrs);
  EXPECT_EQ(q.steps[1].inputs, host.inputs);
  EXPECT_EQ(q.steps[1].outputs, host.outputs);
  EXPECT_EQ(q.output_buffers, p.output_buffers);
}

// A buffer whose channels a oneDNN layout pads (PlanBuffer::channel_multiple):
// allocated with dim 1 rounded up, the shape itself unchanged, and the
// multiple kept by the plan file.
TEST(PlanFile, PaddedChannelsRoundUpTheAllocationAndRoundTrip) {
  PlanBuffer t{PlanBuffer::Temp, "t", DType::F32, {b, Dim(24), h, h}, -1};
  EXPECT_EQ(buffer_bytes(t, {2, 24, 5, 5}), 2 * 24 * 25 * 4);
  t.channel_multiple = 16;
  EXPECT_EQ(allocated_shape(t, {2, 24, 5, 5}), (std::vector<int64_t>{2, 32, 5, 5}));
  EXPECT_EQ(buffer_bytes(t, {2, 24, 5, 5}), 2 * 32 * 25 * 4);
  EXPECT_EQ(buffer_bytes(t, {2, 32, 5, 5}), 2 * 32 * 25 * 4);
  EXPECT_EQ(buffer_bytes(t, {0, 24, 5, 5}), 0);
  EXPECT_EQ(buffer_bytes(t, {1, INT64_MAX - 3, 1, 1}), std::nullopt) << "rounding up overflows: no size";
  EXPECT_EQ(allocated_channels(t, 24), 32);
  EXPECT_EQ(allocated_channels(t, 16), 16);
  EXPECT_EQ(allocated_channels(t, INT64_MAX - 3), INT64_MAX) << "saturates";
  Plan p;
  p.name = "m";
  p.buffers = {t};
  std::string path = std::string(::testing::TempDir()) + "/padded_plan.txt";
  p.save(path);
  EXPECT_EQ(Plan::load(path).buffers[0].channel_multiple, 16);
}

std::string bind_error(const std::vector<InputSpec> &specs, const std::vector<std::vector<int64_t>> &shapes,
                       const std::vector<RuntimeCheck> &checks = {}) {
  std::vector<DType> dtypes(specs.size(), DType::F32);
  try {
    bind_symbols(specs, shapes, dtypes, checks);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(StepParams, OptionalFlagsAndPositionsReadAbsentAsNone) {
  disco::PlanStep step;
  step.label = "Conv_3";
  step.params = {{"on", "1"}, {"off", "0"}, {"two", "0,2"}, {"none", ""}, {"bad", "1,x"}, {"negative", "0,-1"}};
  EXPECT_TRUE(disco::param_flag(step, "on"));
  EXPECT_FALSE(disco::param_flag(step, "off"));
  EXPECT_FALSE(disco::param_flag(step, "absent"));
  EXPECT_EQ(disco::param_positions(step, "two"), (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(disco::param_positions(step, "none").empty());
  EXPECT_TRUE(disco::param_positions(step, "absent").empty());
  EXPECT_THROW(disco::param_positions(step, "bad"), disco::Error);
  // A negative position (a huge one as size_t) names the step, the key and the position.
  try {
    disco::param_positions(step, "negative");
    ADD_FAILURE() << "a negative position was accepted";
  } catch (const disco::Error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Conv_3"), std::string::npos) << what;
    EXPECT_NE(what.find("negative"), std::string::npos) << what;
    EXPECT_NE(what.find("-1"), std::string::npos) << what;
  }
}

TEST(ShapeBinder, BindsSymbolsFromTheirFirstUse) {
  SymbolValues v = bind_symbols({{"x", DType::F32, {b, s, 768}}}, {{3, 20, 768}}, {DType::F32}, {});
  EXPECT_EQ(v.at("batch"), 3);
  EXPECT_EQ(v.at("seq len"), 20);
}

TEST(ShapeBinder, AFixedDimThatDiffersNamesTheInputAndDim) {
  EXPECT_EQ(bind_error({{"x", DType::F32, {b, s, 768}}}, {{3, 20, 767}}),
            "input 'x' dim 2 is 767, expected 768 (fixed by the model)");
}

TEST(ShapeBinder, ASharedSymbolMustAgreeAcrossInputs) {
  std::string e = bind_error({{"a", DType::F32, {b}}, {"c", DType::F32, {b}}}, {{3}, {4}});
  EXPECT_NE(e.find("input 'c' dim 0 is 4, expected 3 (symbol 'batch', the same as input 'a' dim 0)"),
            std::string::npos)
      << e;
}

TEST(ShapeBinder, RankAndCheckViolationsAreReported) {
  EXPECT_NE(bind_error({{"x", DType::F32, {b, 4}}}, {{3}}).find("rank 1"), std::string::npos);
  std::string e = bind_error({{"x", DType::F32, {b, h}}}, {{3, 5}},
                             {{RuntimeCheck::Divisible, h, Dim(2), "node 'r' (Reshape): H must be even"}});
  EXPECT_NE(e.find("node 'r' (Reshape): H must be even"), std::string::npos) << e;
  EXPECT_NE(e.find("H = 5"), std::string::npos) << e;
}

TEST(ShapeBinder, WrongDtypeIsNamed) {
  try {
    bind_symbols({{"x", DType::F32, {b}}}, {{3}}, {DType::I32}, {});
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "input 'x' has dtype int32, expected float32");
  }
}

TEST(ShapeBinder, EachBindingStartsFromNothing) {
  // "n" stands for a symbol that a host op binds mid-run: its check waits for
  // it, and a value left from an earlier run must not stand in for it.
  const Dim n = Dim::symbol("n");
  auto table = std::make_shared<SymbolTable>();
  const ShapeBinder binder({{"a", DType::F32, {b}}, {"c", DType::F32, {b}}},
                           {{RuntimeCheck::AtLeast, b, n, "node 'k' (TopK): k at most the length"}}, *table);
  BoundSymbols v(table);
  binder.bind({{3}, {3}}, {DType::F32, DType::F32}, v);
  EXPECT_EQ(v.to_map(), (SymbolValues{{"batch", 3}}));
  v.set(*table->find("n"), 9);
  EXPECT_THROW(binder.verify_checks(v), Error);
  binder.bind({{4}, {4}}, {DType::F32, DType::F32}, v);
  EXPECT_EQ(v.to_map(), (SymbolValues{{"batch", 4}}));
}

TEST(OpenmpWaitPolicy, TheRuntimeLeavesTheEnvironmentAlone) {
  // This program links the runtime but not tools/openmp_short_spin.cc: OpenMP
  // keeps libgomp's own default, and the environment is as it came.
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
    GTEST_SKIP() << "the environment chooses OpenMP's wait policy";
  ::testing::internal::CaptureStderr();
  omp_display_env(1);
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(text.find("GOMP_SPINCOUNT = '"), std::string::npos) << text;
  EXPECT_EQ(text.find("GOMP_SPINCOUNT = '30000'"), std::string::npos) << text;
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
}

TEST(Npy, RoundTripsEveryDtype) {
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8,
                  DType::U16, DType::U32, DType::U64, DType::Bool}) {
    TensorData x(t, {2, 3});
    for (size_t i = 0; i < x.num_bytes(); ++i)
      x.mutable_data()[i] = static_cast<uint8_t>(t == DType::Bool ? i % 2 : i * 7);
    std::string path = std::string(::testing::TempDir()) + "/x.npy";
    write_npy(path, x);
    TensorData y = read_npy(path);
    EXPECT_EQ(y.dtype, t);
    EXPECT_EQ(y.shape, x.shape);
    EXPECT_EQ(*y.bytes, *x.bytes) << dtype_name(t);
  }
}

// numpy writes a Fortran-contiguous array (a transposed view) in Fortran
// order: element (i, j, k) of a [2, 3, 4] array at i + 2j + 6k. It reads back
// in C order.
TEST(Npy, AFortranOrderArrayReadsInCOrder) {
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::vector<float> data(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) data[i + 2 * j + 6 * k] = static_cast<float>(12 * i + 4 * j + k);
  const std::string path = std::string(::testing::TempDir()) + "/fortran.npy";
  std::ofstream f(path, std::ios::binary);
  const uint16_t hlen = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.write(reinterpret_cast<const char *>(&hlen), 2);
  f << header;
  f.write(reinterpret_cast<const char *>(data.data()), 24 * sizeof(float));
  f.close();
  TensorData y = read_npy(path);
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3, 4}));
  for (int c = 0; c < 24; ++c) EXPECT_EQ(y.as<float>()[c], static_cast<float>(c)) << "element " << c;
}

TEST(Npy, TruncatedFileIsAnError) {
  TensorData x(DType::F32, {100});
  std::string path = std::string(::testing::TempDir()) + "/t.npy";
  write_npy(path, x);
  std::FILE *f = std::fopen(path.c_str(), "r+");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  ASSERT_EQ(truncate(path.c_str(), 200), 0);
  EXPECT_THROW(read_npy(path), Error);
}

}  // namespace
}  // namespace disco

namespace disco {
namespace {

// Three steps: t0 = f(in); t1 = g(t0); out = h(t1, t2 = k(in)) ... written as a plan's buffers and steps.
Plan chain_plan() {
  Plan p;
  auto buf = [&](PlanBuffer::Kind k) {
    p.buffers.push_back({k, "b" + std::to_string(p.buffers.size()), DType::F32, {Dim(4)}, -1});
    return static_cast<int>(p.buffers.size()) - 1;
  };
  const int in = buf(PlanBuffer::Input), t0 = buf(PlanBuffer::Temp), t1 = buf(PlanBuffer::Temp),
            t2 = buf(PlanBuffer::Temp), out = buf(PlanBuffer::Output);
  p.steps.push_back({"k0", "", {}, "", {}, "", {in}, {}, {t0}});
  p.steps.push_back({"k1", "", {}, "", {}, "", {t0}, {}, {t1}});
  p.steps.push_back({"k2", "", {}, "", {}, "", {t1}, {}, {t2}});
  p.steps.push_back({"k3", "", {}, "", {}, "", {t2, t1}, {}, {out}});
  return p;
}

TEST(TensorStorage, EveryTensorStartsOnACacheLine) {
  // Kernels load and store 64-byte vectors; malloc alone gives 16 bytes.
  std::vector<TensorData> keep;  // alive together, so the allocator cannot hand one block back
  for (int64_t n = 1; n <= 300; ++n) {
    keep.emplace_back(DType::U8, std::vector<int64_t>{n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(keep.back().data()) % 64, 0u) << n << " bytes";
  }
  TensorData grown(DType::F32, {3});
  grown.bytes->resize(4099);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(grown.data()) % 64, 0u);
}

TEST(MemoryPlan, LifetimesSpanFromTheWritingStepToTheLastReader) {
  auto l = temp_lifetimes(chain_plan());
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].buffer, 1);
  EXPECT_EQ(l[0].first, 0);
  EXPECT_EQ(l[0].last, 1);
  EXPECT_EQ(l[1].buffer, 2);
  EXPECT_EQ(l[1].last, 3) << "t1 is read by the last step";
  EXPECT_EQ(l[2].first, 2);
}

TEST(MemoryPlan, BuffersAliveTogetherNeverOverlapAndDeadOnesLendTheirBytes) {
  Plan p = chain_plan();
  auto l = temp_lifetimes(p);
  std::vector<int64_t> bytes = {0, 1000, 100, 100, 0};
  ArenaLayout a = place_buffers(l, bytes, p.buffers.size());
  EXPECT_EQ(a.offset[0], -1) << "inputs are not in the arena";
  EXPECT_EQ(a.offset[4], -1) << "outputs are not in the arena";
  // t0 (steps 0-1) and t2 (steps 2-3) never live together: t2 reuses t0's bytes.
  EXPECT_EQ(a.offset[3], a.offset[1]);
  // t1 (steps 1-3) overlaps both in time, so not in space.
  auto disjoint = [&](int x, int y) {
    return a.offset[x] + bytes[x] <= a.offset[y] || a.offset[y] + bytes[y] <= a.offset[x];
  };
  EXPECT_TRUE(disjoint(1, 2));
  EXPECT_TRUE(disjoint(2, 3));
  for (int b : {1, 2, 3}) EXPECT_EQ(a.offset[b] % 64, 0) << "aligned for vector loads";
  EXPECT_LE(a.size, 1024 + 128) << "two live buffers at most";
}

// in -> t0 -> t1; t2 = step(t1, t0) naming t0 (input 1) as the bytes its output may take.
Plan residual_plan() {
  Plan p;
  auto buf = [&](PlanBuffer::Kind k) {
    p.buffers.push_back({k, "b" + std::to_string(p.buffers.size()), DType::F32, {Dim::symbol("n"), Dim(8)}, -1});
    return static_cast<int>(p.buffers.size()) - 1;
  };
  const int in = buf(PlanBuffer::Input), t0 = buf(PlanBuffer::Temp), t1 = buf(PlanBuffer::Temp),
            t2 = buf(PlanBuffer::Temp), out = buf(PlanBuffer::Output);
  p.steps.push_back({"k0", "", {}, "", {}, "", {in}, {}, {t0}});
  p.steps.push_back({"k1", "", {}, "", {}, "", {t0}, {}, {t1}});
  p.steps.push_back({"k2", "", {}, "", {{kOutputReusesInput, "1"}}, "", {t1, t0}, {}, {t2}});
  p.steps.push_back({"k3", "", {}, "", {}, "", {t2}, {}, {out}});
  return p;
}

TEST(MemoryPlan, AResultTakesTheBytesOfAResidualThatDiesAtItsStep) {
  const Plan p = residual_plan();
  const std::vector<int> shared = shared_buffers(p);
  EXPECT_EQ(shared, (std::vector<int>{0, 1, 2, 1, 4})) << "t2 takes t0's bytes";
  // One lifetime for the two, from t0's write to t2's last read; t1 apart.
  const auto l = temp_lifetimes(p);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].buffer, 1);
  EXPECT_EQ(l[0].first, 0);
  EXPECT_EQ(l[0].last, 3);
  EXPECT_EQ(l[1].buffer, 2);
  const ArenaLayout a = place_buffers(l, {0, 32, 32, 32, 0}, p.buffers.size());
  EXPECT_NE(a.offset[1], a.offset[2]);
  EXPECT_EQ(a.offset[3], -1) << "t2 has no placement of its own: the executor reads t0's";
}

TEST(MemoryPlan, AResidualReadLaterOrTwiceOrShapedOtherwiseKeepsItsBytes) {
  auto unshared = [](const Plan &p, const std::string &what) {
    const std::vector<int> shared = shared_buffers(p);
    for (size_t b = 0; b < shared.size(); ++b) EXPECT_EQ(shared[b], static_cast<int>(b)) << what << ": buffer " << b;
  };
  Plan later = residual_plan();
  later.steps[3].inputs.push_back(1);  // t0 read after the step
  unshared(later, "read by a later step");
  Plan twice = residual_plan();
  twice.steps[2].inputs = {1, 1};  // t0 also as the step's other input
  unshared(twice, "read twice by the step");
  Plan shaped = residual_plan();
  shaped.buffers[3].shape = {Dim::symbol("n"), Dim(16)};
  unshared(shaped, "another shape");
  Plan padded = residual_plan();
  padded.buffers[1].channel_multiple = 16;
  unshared(padded, "channels padded on one side only");
  Plan input = residual_plan();
  input.steps[2].inputs = {2, 0};  // the model's input, not a temporary
  unshared(input, "a model input");
  for (const char *bad : {"", "2", "-1", "x", "99999"}) {
    Plan p = residual_plan();
    p.steps[2].params[kOutputReusesInput] = bad;
    unshared(p, std::string("param '") + bad + "'");
  }
}

}  // namespace
}  // namespace disco
