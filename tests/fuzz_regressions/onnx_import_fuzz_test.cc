// ONNX models that fuzz/fuzz_onnx_import found crashing import or shape
// inference. Each must be a disco::Error naming the node and input at fault.
#include <gtest/gtest.h>

#include <string>

#include <cstdint>

#include "frontend/dim.h"
#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "frontend/onnx_importer.h"
#include "lowering/infer_context.h"
#include "lowering/shape_store.h"

namespace disco {
namespace {

// Import and shape inference of a reproducer; the disco::Error's message, or "".
std::string infer_error(const std::string &name) {
  const std::string path = DISCO_SOURCE_DIR "/fuzz/regressions/" + name;
  try {
    Graph g = load_onnx_bytes(read_file(path), DISCO_SOURCE_DIR "/fuzz/regressions", path);
    ShapeStore store;
    infer_shapes(g, store);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// A DFT whose input is a scalar: shape().back() of an empty shape (UBSan:
// "applying non-zero offset to null pointer"), then a read of garbage.
TEST(OnnxImportFuzz, ADftOfAScalarIsAnErrorNotAnOutOfBoundsRead) {
  const std::string msg = infer_error("onnx-dft-scalar-input.onnx");
  EXPECT_NE(msg.find("DFT"), std::string::npos) << msg;
  EXPECT_NE(msg.find("it is a scalar"), std::string::npos) << msg;
}

// Scan with num_scan_inputs = 0: ins.at(states) threw std::out_of_range.
TEST(OnnxImportFuzz, AScanWithoutScanInputsIsADiscoError) {
  for (const char *name : {"onnx-scan-without-scan-input.onnx", "onnx-scan-without-scan-input-2.onnx"}) {
    const std::string msg = infer_error(name);
    EXPECT_NE(msg.find("Scan needs a scan input"), std::string::npos) << name << ": " << msg;
  }
}

// An If without inputs: n.inputs.at(0) threw std::out_of_range.
TEST(OnnxImportFuzz, AnIfWithoutItsConditionIsADiscoError) {
  const std::string msg = infer_error("onnx-if-without-inputs.onnx");
  EXPECT_NE(msg.find("the condition (input 0) is missing"), std::string::npos) << msg;
}

// A Scan whose body has fewer outputs than its states and scan outputs:
// a heap-buffer-overflow (ASan) reading the inlined body's outputs.
TEST(OnnxImportFuzz, AScanBodyWithTooFewOutputsIsADiscoError) {
  const std::string msg = infer_error("onnx-scan-body-too-few-outputs.onnx");
  EXPECT_NE(msg.find("scan outputs need"), std::string::npos) << msg;
}

// The checks above leave well-formed control flow alone: the ONNX node
// tests' Scan and Loop models infer (test_loop11's trip count, an input, makes
// it a run-time disco::Loop); test_if stops, as before, only because its
// condition is an input known at run time.
TEST(OnnxImportFuzz, WellFormedControlFlowStillInfers) {
  const std::string node = "/usr/share/libonnx-testdata/data/node/";
  for (const char *t : {"test_if", "test_scan_sum", "test_scan9_sum", "test_loop11"}) {
    const std::string path = node + t + "/model.onnx";
    try {
      Graph g = load_onnx_file(path);
      ShapeStore store;
      infer_shapes(g, store);
    } catch (const Error &e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("must be known at compile time") != std::string::npos &&
                  std::string(t).find("scan") == std::string::npos) << t << ": " << msg;
    }
  }
}

// A Reshape whose dims multiply past 2^63: signed overflow in Dim's
// operator* (UBSan), then a nonsense shape.
TEST(OnnxImportFuzz, AReshapeWhoseDimsOverflowIsADiscoError) {
  const std::string msg = infer_error("onnx-reshape-dim-product-overflows.onnx");
  EXPECT_NE(msg.find("overflows 64 bits"), std::string::npos) << msg;
}

// An If whose condition is computed from an int64 input of shape [2^32, 2^32]:
// its element count, to see whether compiling the input's values in pays,
// overflowed (UBSan: "4294967296 * 4294967296") and wrapped to 0, few enough
// to compile in. It is many: the condition is bound at run time.
TEST(OnnxImportFuzz, AnIfConditionFromAnInputOf2To64ElementsIsBoundAtRunTime) {
  const std::string name = "onnx-if-condition-of-2-to-64-elements.onnx";
  const std::string path = DISCO_SOURCE_DIR "/fuzz/regressions/" + name;
  Graph g = load_onnx_bytes(read_file(path), DISCO_SOURCE_DIR "/fuzz/regressions", path);
  ShapeStore store;
  infer_shapes(g, store);
  int selects = 0;
  for (const Node &n : g.nodes)
    if (n.domain == "disco" && n.op_type == "IfSelect") {
      ++selects;
      ASSERT_TRUE(n.attrs.count("bind_at_run_time"));
      EXPECT_EQ(n.attrs.at("bind_at_run_time").i, 1) << "the condition's input was taken as few values";
    }
  EXPECT_EQ(selects, 1);
}

TEST(OnnxImportFuzz, DimArithmeticChecksItsCoefficients) {
  const Dim n = Dim::symbol("n");
  EXPECT_THROW(Dim(15) * Dim(INT64_MAX), Error);
  EXPECT_THROW(n * Dim(INT64_MAX) + n, Error);            // coefficients merged in from_terms
  EXPECT_THROW(Dim(0) - n * Dim(INT64_MIN), Error);       // -INT64_MIN
  EXPECT_EQ((n * Dim(INT64_MAX / 2) + n * Dim(INT64_MAX / 2)).str(), (n * Dim(INT64_MAX - 1)).str());
}

}  // namespace
}  // namespace disco
