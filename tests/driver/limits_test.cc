// Sizes and the memory limit (issue #23, limits and messages): hostile dims in
// an initializer, a .npy header, a --shape flag or a small model's shape
// computation give one message naming the value, its shape and the limit,
// before anything is allocated, never std:: or Halide text, and never a hang.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "driver/session.h"
#include "frontend/checked_size.h"
#include "frontend/graph_builder.h"
#include "frontend/onnx_importer.h"
#include "lowering/constant_folding.h"
#include "lowering/infer_context.h"
#include "onnx/onnx_pb.h"
#include "runtime/npy.h"
#include "tests/support/command.h"
#include "tests/support/error_message.h"
#include "tests/support/onnx_protos.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::error_message;

constexpr int64_t kTwo40 = int64_t(1) << 40;

// No text of the standard library's or Halide's exceptions.
void expect_clean(const std::string &msg) {
  for (const char *bad : {"bad_alloc", "stoll", "max_size", "std::", "unbounded way", "evaluates to", "Internal"})
    EXPECT_EQ(msg.find(bad), std::string::npos) << "'" << bad << "' in: " << msg;
}

void expect_has(const std::string &msg, const std::vector<std::string> &parts) {
  ASSERT_FALSE(msg.empty()) << "no error";
  for (const auto &p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  expect_clean(msg);
}

CompileOptions limited(int64_t max_memory) {
  CompileOptions o;
  o.use_cache = false;
  o.max_memory = max_memory;
  return o;
}

std::string temp_dir() { return testing::make_temp_dir("limits-test"); }

// ---- the size helper ---------------------------------------------------------

TEST(CheckedSize, ProductsThatOverflowAreRefusedNamingWhatIsSized) {
  EXPECT_EQ(checked_elements({2, 3, 4}, "t"), 24);
  EXPECT_EQ(checked_bytes({2, 3, 4}, DType::F32, "t"), 96);
  EXPECT_EQ(checked_elements({}, "t"), 1);
  // 2^31 * 2^31 * 4 is 2^64, which wrapped to 0.
  expect_has(error_message([] { checked_elements({int64_t(1) << 31, int64_t(1) << 31, 4}, "tensor 'w'"); }),
             {"tensor 'w'", "[2147483648, 2147483648, 4]", "more than 2^63 elements"});
  // 2^61 elements fit, their bytes as float32 do not.
  expect_has(error_message([] { checked_bytes({int64_t(1) << 61}, DType::F32, "tensor 'w'"); }),
             {"tensor 'w'", "more than 2^63 bytes"});
  expect_has(error_message([] { checked_elements({3, -1}, "input 'x'"); }), {"input 'x'", "negative dim 1 (-1)"});
}

TEST(CheckedSize, CountsThatDecideSomethingTreatAnOverflowAsTooMany) {
  EXPECT_EQ(element_count({2, 3, 4}), 24);
  EXPECT_EQ(element_count({}), 1);
  EXPECT_EQ(element_count({0, int64_t(1) << 40}), 0);
  EXPECT_FALSE(element_count({int64_t(1) << 32, int64_t(1) << 32}));  // 2^64 wrapped to 0
  EXPECT_FALSE(element_count({3, -1}));
  EXPECT_EQ(tensor_bytes({int64_t(1) << 32, int64_t(1) << 32}, DType::I64), std::nullopt);
  // TensorData's count no longer wraps: a shape set by hand fails naming the tensor.
  TensorData t(DType::F32, {2});
  EXPECT_EQ(t.num_elements(), 2);
  t.shape = {int64_t(1) << 32, int64_t(1) << 32};
  expect_has(error_message([&] { (void)t.num_elements(); }),
             {"a float32 tensor of shape [4294967296, 4294967296] has more than 2^63 elements"});
}

TEST(CheckedSize, PartsOfAShapeWithAZeroDimMayNotOverflow) {
  // No elements, so the whole passes; the dims after the 0 multiply past 2^63.
  const std::vector<int64_t> shape = {0, int64_t(1) << 31, int64_t(1) << 31, int64_t(1) << 31};
  EXPECT_EQ(checked_elements(shape, "x"), 0);
  EXPECT_EQ(checked_dims_product(shape, 1, 3, "x"), int64_t(1) << 62);
  EXPECT_EQ(checked_dims_product(shape, 2, 2, "x"), 1);
  expect_has(error_message([&] { checked_dims_product(shape, 1, 4, "TopK's input"); }),
             {"TopK's input of shape [0, 2147483648, 2147483648, 2147483648]: the product of its dims 1 to 3"});
}

TEST(CheckedSize, AKernelsBufferHoldsAtMost2To31Minus1Elements) {
  check_kernel_buffer_elements("value 'y'", {INT32_MAX});
  check_kernel_buffer_elements("value 'y'", {0, int64_t(1) << 40});
  expect_has(error_message([] { check_kernel_buffer_elements("value 'y'", {32768, 65536, 1}); }),
             {"value 'y' of shape [32768, 65536, 1] has 2147483648 elements, above the 2147483647 that a kernel's "
              "buffer can hold"});
  expect_has(error_message([] { check_kernel_buffer_elements("value 'y'", {int64_t(1) << 32, int64_t(1) << 32}); }),
             {"value 'y'", "more than 2^63 elements"});
}

TEST(CheckedSize, ByteSizesReadAndPrintInBinaryUnits) {
  EXPECT_EQ(bytes_text(300), "300 bytes");
  EXPECT_EQ(bytes_text(int64_t(16) << 40), "16 TiB");
  EXPECT_EQ(bytes_text(int64_t(3) << 29), "1.5 GiB");
  EXPECT_EQ(parse_byte_size("8G"), int64_t(8) << 30);
  EXPECT_EQ(parse_byte_size("512M"), int64_t(512) << 20);
  EXPECT_EQ(parse_byte_size("64K"), int64_t(64) << 10);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576);
  for (const char *bad : {"", "G", "-1", "0", "8X", "1.5G", "99999999999999999999", "9999999999T"})
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
  EXPECT_FALSE(parse_count("99999999999999999999"));
  EXPECT_EQ(parse_count("9223372036854775807"), INT64_MAX);
}

TEST(CheckedSize, TheLimitMessageNamesTheValueItsShapeAndTheLimit) {
  MemoryLimit limit{int64_t(120) << 30, "DISCO_MAX_MEMORY"};
  limit.check("value 'small'", {1024, 1024}, DType::F32);  // 4 MiB: fine
  expect_has(error_message([&] { limit.check("value 'Add_1_out0'", {1 << 20, 1 << 20, 4}, DType::F32); }),
             {"value 'Add_1_out0' of shape [1048576, 1048576, 4] needs 16 TiB, above the memory limit of 120 GiB "
              "(DISCO_MAX_MEMORY)"});
  // An option wins; without one the default is positive (the machine's memory or the variable).
  EXPECT_EQ(memory_limit(12345).bytes, 12345);
  EXPECT_GT(memory_limit().bytes, 0);
}

// ---- initializers --------------------------------------------------------------

onnx::ModelProto model_with_initializer(const std::vector<int64_t> &dims, const std::string &raw) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"4"});
  auto *w = testing::add_initializer(g, "w", onnx::TensorProto::FLOAT, dims);
  if (!raw.empty()) w->set_raw_data(raw);
  testing::add_node(g, "Add", {"x", "w"}, {"y"}, "add");
  g->add_output()->set_name("y");
  return m;
}

TEST(Limits, AnInitializerWhoseSizeWrapsToZeroIsRefused) {
  // [2^31, 2^31, 4] float32 was reported as needing 0 bytes.
  std::string msg = error_message(
      [] { load_onnx_bytes(model_with_initializer({int64_t(1) << 31, int64_t(1) << 31, 4}, "").SerializeAsString(), "/tmp", "m"); });
  expect_has(msg, {"initializer tensor 'w'", "[2147483648, 2147483648, 4]", "more than 2^63"});
}

TEST(Limits, AnInitializerWithTooLittleDataIsRefusedBeforeAllocating) {
  // [2^62 + 1, 4] float32 with 16 bytes: the wrapped product matched the 16 bytes.
  std::string msg = error_message([] {
    load_onnx_bytes(model_with_initializer({(int64_t(1) << 62) + 1, 4}, std::string(16, '\0')).SerializeAsString(),
                    "/tmp", "m");
  });
  expect_has(msg, {"initializer tensor 'w'", "[4611686018427387905, 4]"});
  // A dim of 2^40 and no data: refused by its data count, not std::bad_alloc.
  msg = error_message([] { load_onnx_bytes(model_with_initializer({kTwo40}, "").SerializeAsString(), "/tmp", "m"); });
  expect_has(msg, {"initializer tensor 'w' has 0 elements, its shape [1099511627776] needs 1099511627776 elements"});
  // 2^40 float32 with 16 bytes of raw data.
  msg = error_message(
      [] { load_onnx_bytes(model_with_initializer({kTwo40}, std::string(16, '\0')).SerializeAsString(), "/tmp", "m"); });
  expect_has(msg, {"initializer tensor 'w' has 16 bytes of raw data, its shape [1099511627776] needs 4398046511104 bytes"});
  // The same header with its data loads.
  Graph g = load_onnx_bytes(model_with_initializer({4}, std::string(16, '\0')).SerializeAsString(), "/tmp", "m");
  EXPECT_EQ(g.value(g.find_value("w")).constant->shape, std::vector<int64_t>{4});
}

TEST(Limits, ExternalDataMustHoldTheInitializerBeforeItIsAllocated) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/w.bin", std::ios::binary) << std::string(16, '\0');
  for (int64_t n : {int64_t(4), kTwo40}) {
    onnx::ModelProto m = model_with_initializer({n}, "");
    auto *w = m.mutable_graph()->mutable_initializer(0);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *e = w->add_external_data();
    e->set_key("location");
    e->set_value("w.bin");
    std::string msg = error_message([&] { load_onnx_bytes(m.SerializeAsString(), dir, "m"); });
    if (n == 4) {
      EXPECT_EQ(msg, "");  // 16 bytes: four floats
    } else {
      expect_has(msg, {"initializer tensor 'w' of shape [1099511627776] needs 4 TiB from offset 0 of external data "
                       "file 'w.bin', which has 16 bytes"});
    }
  }
}

// ---- .npy files ------------------------------------------------------------------

// A .npy file of this header text and `data_bytes` zero bytes of data.
std::string write_raw_npy(const std::string &dir, const std::string &shape, size_t data_bytes) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string path = dir + "/x.npy";
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char hl[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(hl, 2);
  f << header << std::string(data_bytes, '\0');
  return path;
}

TEST(Limits, ANpyHeaderCannotAskForMoreThanTheFileHolds) {
  const std::string dir = temp_dir();
  std::string path = write_raw_npy(dir, "(2097152, 1024, 768)", 64);
  expect_has(error_message([&] { read_npy(path); }),
             {path, "is truncated", "[2097152, 1024, 768]", "needs 6 TiB", "the file has 64 bytes"});
  path = write_raw_npy(dir, "(-1, 768)", 64);
  expect_has(error_message([&] { read_npy(path); }), {path, "shape dim 0 is '-1'", "not a non-negative integer"});
  path = write_raw_npy(dir, "(99999999999999999999,)", 64);
  expect_has(error_message([&] { read_npy(path); }), {path, "shape dim 0 is '99999999999999999999'"});
  path = write_raw_npy(dir, "(4294967296, 4294967296)", 64);
  expect_has(error_message([&] { read_npy(path); }), {path, "[4294967296, 4294967296]", "more than 2^63"});
  // A well-formed file above the limit is refused before its data is read.
  path = write_raw_npy(dir, "(1024, 512)", 1024 * 512 * 4);
  expect_has(error_message([&] { read_npy(path, MemoryLimit{1 << 20, "a test"}); }),
             {path, "of shape [1024, 512] needs 2 MiB, above the memory limit of 1 MiB (a test)"});
  EXPECT_EQ(read_npy(path).shape, (std::vector<int64_t>{1024, 512}));
}

TEST(Limits, TheFuzzersNpyReproducersGiveOneLine) {
  // fuzz/regressions/: a header whose shape needs more than the file, and a shape item that is no number.
  const std::string dir = std::string(DISCO_SOURCE_DIR) + "/fuzz/regressions/";
  expect_has(error_message([&] { read_npy(dir + "npy-huge-shape-allocates.npy"); }),
             {"npy-huge-shape-allocates.npy", "shape dim 1 is '2222222222222222222/2 2?6'"});
  const std::string msg = error_message([&] { read_npy(dir + "npy-shape-item-not-a-number.npy"); });
  expect_has(msg, {"npy-shape-item-not-a-number.npy", "shape dim 3 is '?"});
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// ---- shapes computed by the model ------------------------------------------------

Graph range_add_graph(int64_t limit) {
  GraphBuilder b;
  auto start = b.constant("start", testing::i64({}, {0}));
  auto stop = b.constant("stop", testing::i64({}, {limit}));
  auto step = b.constant("step", testing::i64({}, {1}));
  auto r = b.op("Range", {start, stop, step});
  b.output(b.op("Add", {r, r}));
  return b.build();
}

TEST(Limits, ConstantFoldingLeavesALargeRangeToItsKernel) {
  // Range(0, 2^40, 1) was folded: 8 TiB filled at compile time (past 60 s, at 12-17 GB).
  for (int64_t limit : {int64_t(1000), kMaxFoldedElements, kMaxFoldedElements + 1, kTwo40}) {
    Graph g = range_add_graph(limit);
    ShapeStore store;
    infer_shapes(g, store);
    const Value &r = g.value(g.nodes[0].outputs[0]);
    ASSERT_TRUE(r.shape);
    ASSERT_TRUE(store.canonical((*r.shape)[0]).is_const());
    EXPECT_EQ(store.canonical((*r.shape)[0]).as_const(), limit);
    EXPECT_EQ(r.constant.has_value(), limit <= kMaxFoldedElements) << "Range of " << limit;
    if (limit == 1000) {
      EXPECT_EQ(r.constant->int_at(999), 999);
    }
  }
}

TEST(Limits, ARangeLeftToItsKernelGivesTheSameValues) {
  // 70000 elements: above the fold bound, so a kernel computes Range and the Add.
  Session s(range_add_graph(70000), "range", "", limited(0));
  auto out = s.run({});
  ASSERT_EQ(out[0].shape, std::vector<int64_t>{70000});
  ASSERT_EQ(out[0].dtype, DType::I64);
  for (int64_t i = 0; i < 70000; ++i) ASSERT_EQ(out[0].as<int64_t>()[i], 2 * i) << i;
}

TEST(Limits, AFloatRangeAboveTheFoldBoundIsRefused) {
  // Float Ranges are only folded; 2^23 float32 are 32 MiB, above kMaxFoldedBytes.
  GraphBuilder b;
  auto start = b.constant("start", TensorData::scalar_f32(0));
  auto stop = b.constant("stop", TensorData::scalar_f32(8388608));
  auto step = b.constant("step", TensorData::scalar_f32(1));
  b.output(b.op("Range", {start, stop, step}));
  Graph g = b.build();
  ShapeStore store;
  expect_has(error_message([&] { infer_shapes(g, store); }),
             {"Range", "a float Range of 8388608 elements is above the constant-folding bound of 16 MiB"});
}

TEST(Limits, ARangeOfTwoToThe40IsRefusedAtCompileTime) {
  std::string msg = error_message([] { Session(range_add_graph(kTwo40), "range", "", limited(int64_t(1) << 30)); });
  expect_has(msg, {"(Range)", "of shape [1099511627776] needs 8 TiB", "above the memory limit of 1 GiB"});
  // Without an option the limit is the machine's memory (or DISCO_MAX_MEMORY): still refused.
  msg = error_message([] { Session(range_add_graph(kTwo40), "range", "", limited(0)); });
  expect_has(msg, {"(Range)", "[1099511627776]", "above the memory limit of"});
}

TEST(Limits, ConstantOfShapeAboveTheLimitNamesTheValue) {
  // ConstantOfShape [2^20, 2^20, 4] into an Add gave Halide's "may be accessed in an unbounded way".
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {4});
  auto shape = b.constant("shape", testing::i64({3}, {1 << 20, 1 << 20, 4}));
  auto c = b.op("ConstantOfShape", {shape});
  b.output(b.op("Add", {c, x}));
  std::string msg = error_message([&] { Session(b.build(), "cos", "", limited(int64_t(120) << 30)); });
  expect_has(msg, {"(ConstantOfShape)", "of shape [1048576, 1048576, 4] needs 16 TiB",
                   "above the memory limit of 120 GiB"});
}

TEST(Limits, ExpandToTwoToThe40NamesTheValue) {
  // Expand to 2^40 gave "buffer 'y' dim 0 = 1099511627776 evaluates to 1099511627776".
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1});
  auto shape = b.constant("shape", testing::i64({1}, {kTwo40}));
  b.output(b.op("Expand", {x, shape}));
  std::string msg = error_message([&] { Session(b.build(), "expand", "", limited(int64_t(1) << 30)); });
  expect_has(msg, {"(Expand)", "of shape [1099511627776] needs 4 TiB", "above the memory limit of 1 GiB"});
}

TEST(Limits, AWideDimUnderTheLimitIsRefusedNamingTheDim) {
  // 2^31 bools are 2 GiB: under a 4 GiB limit, but a kernel's dims are 32-bit.
  GraphBuilder b;
  auto x = b.input("x", DType::Bool, {1});
  auto shape = b.constant("shape", testing::i64({1}, {int64_t(1) << 31}));
  b.output(b.op("Expand", {x, shape}));
  std::string msg = error_message([&] { Session(b.build(), "wide", "", limited(int64_t(4) << 30)); });
  expect_has(msg, {"(Expand)", "dim 0 is 2147483648, above the 2147483647"});
}

Graph constant_of_shape_add(std::vector<int64_t> dims) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1});
  auto shape = b.constant("shape", testing::i64({static_cast<int64_t>(dims.size())}, dims));
  auto c = b.op("ConstantOfShape", {shape});
  b.output(b.op("Add", {c, x}));
  return b.build();
}

TEST(Limits, AValueAboveAKernelsBufferIsRefusedAtCompileTimeNamingIt) {
  // 2^31 float32 are 8 GiB, under this 64 GiB limit, and each dim fits 32 bits; Halide's
  // bounds inference refused the Add's buffer: "may be accessed in an unbounded way in dimension 2".
  std::string msg = error_message([] { Session(constant_of_shape_add({32768, 65536, 1}), "cos", "", limited(int64_t(64) << 30)); });
  expect_has(msg, {"(ConstantOfShape)) of shape [32768, 65536, 1] has 2147483648 elements, above the 2147483647 that "
                   "a kernel's buffer can hold"});
  EXPECT_EQ(msg.find("Halide"), std::string::npos) << msg;
  // One element fewer compiles (it is not run: 8 GiB).
  EXPECT_EQ(error_message([] { Session(constant_of_shape_add({32767, 65537, 1}), "cos", "", limited(int64_t(64) << 30)); }), "");
}

// A bool tensor of `shape` over reserved address space: nothing is touched
// unless the run reads it, so a test can hand a run 2 GiB it never allocates.
TensorData reserved_bool_tensor(const std::vector<int64_t> &shape) {
  const auto bytes = static_cast<size_t>(checked_bytes(shape, DType::Bool, "reserved"));
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  std::shared_ptr<void> owner(p, [bytes](void *q) { munmap(q, bytes); });
  return TensorData::borrow(DType::Bool, shape, p, owner);
}

TEST(Limits, ARunRefusesAKernelInputAbove2To31ElementsBeforeAllocating) {
  // Not on bool [2, 1024, 1048576] (2 GiB) gave "kernel ... failed with code -5: Total allocation
  // for buffer in_x is 2147483648, which exceeds the maximum size of 2147483647".
  GraphBuilder b;
  auto x = b.input("x", DType::Bool, {Dim::symbol("a"), Dim::symbol("b"), Dim::symbol("c")});
  b.output(b.op("Not", {x}));
  Session s(b.build(), "not", "", limited(int64_t(64) << 30));
  TensorData small(DType::Bool, {2, 3, 4});
  EXPECT_EQ(s.run({small})[0].shape, (std::vector<int64_t>{2, 3, 4}));
  std::string msg = error_message([&] { s.run({reserved_bool_tensor({2, 1024, 1048576})}); });
  expect_has(msg, {"input 'x' of shape [2, 1024, 1048576] has 2147483648 elements, above the 2147483647 that a "
                   "kernel's buffer can hold"});
  EXPECT_EQ(msg.find("Total allocation"), std::string::npos) << msg;
}

TEST(Limits, ARunRefusesAKernelOutputAbove2To31ElementsBeforeAllocatingIt) {
  // [65536, 1] + [1, 32768]: small inputs, an output of 2^31 float32 (8 GiB, under the limit).
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), 1});
  auto y = b.input("y", DType::F32, {1, Dim::symbol("m")});
  b.output(b.op("Add", {x, y}));
  Session s(b.build(), "outer_add", "", limited(int64_t(64) << 30));
  EXPECT_EQ(s.run({testing::random_f32({3, 1}, 1), testing::random_f32({1, 5}, 2)})[0].shape,
            (std::vector<int64_t>{3, 5}));
  std::string msg =
      error_message([&] { s.run({testing::random_f32({65536, 1}, 1), testing::random_f32({1, 32768}, 2)}); });
  expect_has(msg, {"value '", "of shape [65536, 32768] has 2147483648 elements, above the 2147483647 that a "
                   "kernel's buffer can hold"});
}

TEST(Limits, ALargeIntegerInitializerFeedingAnAddCompilesAndRuns) {
  // 2^20 int64 (8 MiB) + 1: shape inference read every element as a symbolic dim
  // (known_values' dims_value), minutes of compile; now the Add is left to its kernel.
  constexpr int64_t n = int64_t(1) << 20;
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = i * 3 - 7;
  auto graph = [&] {
    GraphBuilder b;
    auto c = b.constant("c", testing::i64({n}, values));
    b.output(b.op("Add", {c, b.constant("one", testing::i64({}, {1}))}));
    return b.build();
  };
  // Shape inference gives the sum no value as dims, and does not fold it (above kMaxFoldedElements).
  Graph g = graph();
  ShapeStore store;
  infer_shapes(g, store);
  const Value &sum = g.value(g.outputs[0]);
  EXPECT_FALSE(sum.sym_value.has_value());
  EXPECT_FALSE(sum.constant.has_value());
  Session s(graph(), "big_add", "", limited(0));
  auto out = s.run({});
  ASSERT_EQ(out[0].shape, std::vector<int64_t>{n});
  ASSERT_EQ(out[0].dtype, DType::I64);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[0].as<int64_t>()[i], i * 3 - 6) << i;
}

TEST(Limits, AMelWeightMatrixAboveTheFoldBoundIsRefusedNamingTheNode) {
  // MelWeightMatrix is made at compile time and has no kernel; 2^20 mel bins by 2^19 + 1 DFT bins
  // were 4 TiB of doubles to fill.
  auto mel = [](int64_t mel_bins, int64_t dft_length) {
    GraphBuilder b;
    auto m = b.op("MelWeightMatrix", {b.constant("bins", testing::i64({}, {mel_bins})),
                                      b.constant("dft", testing::i64({}, {dft_length})),
                                      b.constant("rate", testing::i64({}, {16000})),
                                      b.constant("lo", testing::f32({}, {0.0f})),
                                      b.constant("hi", testing::f32({}, {8000.0f}))});
    b.output(b.op("Relu", {m}));
    return b.build();
  };
  std::string msg = error_message([&] {
    Graph g = mel(int64_t(1) << 20, int64_t(1) << 20);
    ShapeStore store;
    infer_shapes(g, store);
  });
  expect_has(msg, {"MelWeightMatrix", "its matrix of 524289 x 1048576", "more than 16 MiB",
                   "the bound on constants made at compile time"});
  // A count that overflows 64 bits is refused the same way.
  msg = error_message([&] {
    Graph g = mel(kTwo40 * 1024, kTwo40);
    ShapeStore store;
    infer_shapes(g, store);
  });
  expect_has(msg, {"MelWeightMatrix", "more than 16 MiB"});
  // 257 x 64 (an ordinary one) is still made.
  Graph g = mel(64, 512);
  ShapeStore store;
  infer_shapes(g, store);
  const Value &m = g.value(g.nodes[0].outputs[0]);
  ASSERT_TRUE(m.constant.has_value());
  EXPECT_EQ(m.constant->shape, (std::vector<int64_t>{257, 64}));
}

// ---- the executor, before each allocation ----------------------------------------

Graph relu_add_graph() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), Dim::symbol("m")});
  auto r = b.op("Relu", {x});
  auto s = b.op("Sin", {r});
  b.output(b.op("Add", {s, x}));
  return b.build();
}

TEST(Limits, ARunChecksEachBufferAgainstTheLimitBeforeAllocatingIt) {
  Session s(relu_add_graph(), "relu_add", "", limited(3 << 20));  // 3 MiB
  // 512 x 1024 float32 is 2 MiB a value: runs, and gives x + sin(relu(x)).
  TensorData x = testing::random_f32({512, 1024}, 7);
  auto out = s.run({x});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{512, 1024}));
  for (int64_t i = 0; i < x.num_elements(); i += 4099) {
    const float v = x.as<float>()[i];
    EXPECT_NEAR(out[0].as<float>()[i], v + std::sin(std::max(v, 0.0f)), 1e-5) << i;
  }
  // 1024 x 1024 float32 is 4 MiB a value: refused naming a value, its shape and the limit.
  std::string msg = error_message([&] { s.run({testing::random_f32({1024, 1024}, 7)}); });
  expect_has(msg, {"value '", "of shape [1024, 1024] needs 4 MiB, above the memory limit of 3 MiB"});
}

TEST(Limits, AnInputWhoseBytesDoNotCoverItsShapeIsRefused) {
  Session s(relu_add_graph(), "relu_add", "", limited(0));
  TensorData x = testing::random_f32({2, 3}, 7);
  x.shape = {4, 3};  // 6 floats of storage for 12
  expect_has(error_message([&] { s.run({x}); }), {"input 'x' of shape [4, 3] holds 24 bytes, its shape needs 48"});
}

// ---- the command line ---------------------------------------------------------------

testing::CommandResult disco_cli(const std::string &args) {
  return testing::run_command(std::string(DISCO_BINARY) + " " + args);
}

std::string write_model(const onnx::ModelProto &m) {
  const std::string path = temp_dir() + "/m.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

onnx::ModelProto add_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"a", "b", "768"});
  testing::add_node(g, "Relu", {"x"}, {"y"}, "relu");
  g->add_output()->set_name("y");
  return m;
}

TEST(LimitsCli, AShapeDimAbove2To63IsAUsageErrorNamingTheFlagAndDim) {
  auto r = disco_cli("run " + write_model(add_model()) + " --shape x=99999999999999999999x1x768");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_has(r.output, {"--shape x", "dim 0 is 99999999999999999999, above 2^63-1"});
}

TEST(LimitsCli, A48GiBRandomInputIsRefusedBeforeItIsMade) {
  // The variable is set for the child process only; 4096 x 4096 x 768 float32 is 48 GiB.
  auto r = testing::run_command("DISCO_MAX_MEMORY=8G " + std::string(DISCO_BINARY) + " run " +
                                write_model(add_model()) + " --no-cache --shape x=4096x4096x768");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_has(r.output, {"disco: error: input 'x' of shape [4096, 4096, 768] needs 48 GiB, above the memory "
                        "limit of 8 GiB (DISCO_MAX_MEMORY)"});
  r = testing::run_command("DISCO_MAX_MEMORY=lots " + std::string(DISCO_BINARY) + " run " +
                           write_model(add_model()) + " --no-cache --shape x=1x1x768");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_has(r.output, {"DISCO_MAX_MEMORY='lots' is not a size in bytes"});
}

TEST(LimitsCli, MaxMemoryFlagSetsTheLimitOfRunAndInspect) {
  const std::string model = write_model(add_model());
  // 64 x 64 x 768 float32 is 12 MiB: refused under --max-memory 8M, naming the option as the limit's source.
  auto r = disco_cli("run " + model + " --no-cache --max-memory 8M --shape x=64x64x768");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_has(r.output, {"input 'x' of shape [64, 64, 768] needs 12 MiB, above the memory limit of 8 MiB (set by the "
                        "max_memory option)"});
  // The flag wins over DISCO_MAX_MEMORY; 16M lets it run.
  r = testing::run_command("DISCO_MAX_MEMORY=1K " + std::string(DISCO_BINARY) + " run " + model +
                           " --no-cache --max-memory 16M --shape x=64x64x768");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = disco_cli("run " + model + " --no-cache --max-memory lots --shape x=1x1x768");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_has(r.output, {"--max-memory", "'lots'"});
  // inspect lists the values a run would refuse: ConstantOfShape [1024, 1024, 4] float32 is 16 MiB.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  auto *shape = testing::add_initializer(g, "shape", onnx::TensorProto::INT64, {3});
  for (int64_t d : {1024, 1024, 4}) shape->add_int64_data(d);
  testing::add_node(g, "ConstantOfShape", {"shape"}, {"y"}, "cos");
  g->add_output()->set_name("y");
  const std::string cos = write_model(m);
  r = disco_cli("inspect " + cos + " --max-memory 1M");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_has(r.output, {"above a limit (a run refuses these):\n  value 'y' of shape [1024, 1024, 4] needs 16 "
                        "MiB, above the memory limit of 1 MiB (set by the max_memory option)"});
  r = disco_cli("inspect " + cos + " --max-memory 1G");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("above a limit"), std::string::npos) << r.output;
  EXPECT_EQ(disco_cli("inspect " + cos + " --max-memory 0").exit_code, 2);
}

TEST(LimitsCli, NpyInputsWithHostileShapesGiveOneLine) {
  const std::string dir = temp_dir(), model = write_model(add_model());
  for (const auto &[shape, expected] : std::vector<std::pair<std::string, std::string>>{
           {"(-1, 1, 768)", "shape dim 0 is '-1'"},
           {"(2097152, 1024, 768)", "shape [2097152, 1024, 768] needs 6 TiB of data"}}) {
    auto r = disco_cli("run " + model + " --no-cache --input x=" + write_raw_npy(dir, shape, 64));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    expect_has(r.output, {"disco: error: '" + dir + "/x.npy", expected});
  }
}

TEST(LimitsCli, CompileAndRunRefuseAValueAboveAKernelsBufferNamingIt) {
  // ConstantOfShape [2^15, 2^16, 1] -> Add: 8 GiB, under the limit; both commands gave
  // "Halide could not compile kernel ...: Error: Buffer add_out0 may be accessed in an unbounded way".
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"1"});
  auto *shape = testing::add_initializer(g, "shape", onnx::TensorProto::INT64, {3});
  for (int64_t d : {32768, 65536, 1}) shape->add_int64_data(d);
  testing::add_node(g, "ConstantOfShape", {"shape"}, {"c"}, "cos");
  testing::add_node(g, "Add", {"c", "x"}, {"y"}, "add");
  g->add_output()->set_name("y");
  const std::string model = write_model(m), env = "DISCO_MAX_MEMORY=64G " + std::string(DISCO_BINARY);
  const std::string expected = "disco: error: value 'c' (output of node 'cos' (ConstantOfShape)) of shape [32768, "
                               "65536, 1] has 2147483648 elements, above the 2147483647 that a kernel's buffer can hold";
  for (const std::string &cmd : {" run " + model + " --no-cache --shape x=1",
                                 " compile " + model + " -o " + temp_dir() + "/cos"}) {
    auto r = testing::run_command(env + cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.output;
    expect_has(r.output, {expected});
    EXPECT_EQ(r.output.find("Halide"), std::string::npos) << r.output;
  }
  // inspect lists it among what a run refuses.
  auto r = testing::run_command(env + " inspect " + model);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_has(r.output, {"above a limit (a run refuses these):\n  value 'c' of shape [32768, 65536, 1] has 2147483648 "
                        "elements, above the 2147483647 that a kernel's buffer can hold"});
}

TEST(LimitsCli, ARandomInputAboveAKernelsBufferIsRefusedBeforeItIsMade) {
  // Not on --shape x=2x1024x1048576 (bool, 2 GiB) gave Halide's "Total allocation for buffer in_x
  // is 2147483648, which exceeds the maximum size of 2147483647" after 24 s and 4 GB.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  testing::add_input(g, "x", {"a", "b", "c"})->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  testing::add_node(g, "Not", {"x"}, {"y"}, "not");
  g->add_output()->set_name("y");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = testing::run_command("DISCO_MAX_MEMORY=64G " + std::string(DISCO_BINARY) + " run " + write_model(m) +
                                " --no-cache --shape x=2x1024x1048576");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_has(r.output, {"disco: error: input 'x' of shape [2, 1024, 1048576] has 2147483648 elements, above the "
                        "2147483647 that a kernel's buffer can hold"});
  EXPECT_EQ(r.output.find("Total allocation"), std::string::npos) << r.output;
  // Refused before 2 GiB of random data is made (24 s before); the compile is most of this.
  EXPECT_LT(seconds, 20) << r.output;
}

TEST(LimitsCli, InspectOfARangeOfTwoToThe40FinishesAndRunRefusesIt) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto *g = m.mutable_graph();
  g->set_name("g");
  for (const auto &[name, v] : std::vector<std::pair<std::string, int64_t>>{{"start", 0}, {"stop", kTwo40}, {"step", 1}})
    testing::add_initializer(g, name, onnx::TensorProto::INT64, {})->add_int64_data(v);
  testing::add_node(g, "Range", {"start", "stop", "step"}, {"r"}, "range");
  testing::add_node(g, "Add", {"r", "r"}, {"y"}, "add");
  g->add_output()->set_name("y");
  const std::string model = write_model(m);
  auto r = disco_cli("inspect " + model);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("r: int64 [1099511627776]"), std::string::npos) << r.output;
  r = testing::run_command("DISCO_MAX_MEMORY=1G " + std::string(DISCO_BINARY) + " run " + model + " --no-cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_has(r.output, {"value 'r' (output of node 'range' (Range)) of shape [1099511627776] needs 8 TiB, above the "
                        "memory limit of 1 GiB (DISCO_MAX_MEMORY)"});
}

}  // namespace
}  // namespace disco
