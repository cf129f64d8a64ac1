// Fuzzes the compiler's front half on any bytes as an ONNX model: import
// (frontend/onnx_importer.h), shape inference with constant folding
// (lowering/infer_context.h), the graph rewrites and weight layout that
// compile_model runs next, then partitioning for the host backend
// (targets/partitioner.h). It stops before code generation: JIT-compiling
// Halide takes seconds per model, too slow for fuzzing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/onnx_importer.h"
#include "fuzz/fuzz_guard.h"
#include "lowering/graph_rewrites.h"
#include "lowering/infer_context.h"
#include "lowering/shape_store.h"
#include "lowering/weight_layout.h"
#include "targets/host/host_backend.h"
#include "targets/partitioner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // External data is looked up in an empty folder of our own.
  static const std::string base = [] {
    const std::string p = disco_fuzz::scratch_path("x");
    return p.substr(0, p.rfind('/'));
  }();
  static const auto host = disco::make_host_backend();
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  disco_fuzz::guard([&] {
    disco::Graph g = disco::load_onnx_bytes(bytes, base, "fuzz.onnx");
    disco::ShapeStore store;
    disco::infer_shapes(g, store);
    disco::rewrite_graph(g);
    disco::transpose_constant_weights(g);
    (void)disco::partition_graph(g, store, {host.get()});
  });
  return 0;
}
