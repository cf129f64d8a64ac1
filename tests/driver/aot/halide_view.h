// A dense row-major Halide view of an array for the AOT harnesses (Halide's dim
// 0 is the last ONNX dim). Include it after an AOT library's header, which
// gives halide_buffer_t.
#pragma once
#include <cstdint>
#include <vector>

struct View {
  halide_buffer_t buf{};
  std::vector<halide_dimension_t> dims;
  View(void *host, const std::vector<int64_t> &shape, uint8_t code, uint8_t bits) {
    dims.resize(shape.size());
    int32_t stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      dims[i].min = 0;
      dims[i].extent = static_cast<int32_t>(shape[shape.size() - 1 - i]);
      dims[i].stride = stride;
      dims[i].flags = 0;
      stride *= dims[i].extent;
    }
    buf.host = static_cast<uint8_t *>(host);
    buf.type.code = code;
    buf.type.bits = bits;
    buf.type.lanes = 1;
    buf.dimensions = static_cast<int32_t>(shape.size());
    buf.dim = dims.data();
  }
};
