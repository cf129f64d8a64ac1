// Test support: the small tensors, attributes and error checks that the op
// tests share. Test files bring them in with `using namespace testing;`.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "frontend/attributes.h"
#include "frontend/dim.h"
#include "frontend/tensor_data.h"

namespace disco::testing {

// A float32 tensor of `shape` holding `values`; a count that does not fill
// the shape fails the test.
TensorData f32(std::vector<int64_t> shape, std::vector<float> values);
// A float64 tensor of `shape` holding `values` (a double-precision
// reference, compared without rounding it to float32).
TensorData f64(std::vector<int64_t> shape, std::vector<double> values);
// A float32 tensor of `shape` holding ramp(numel(shape), scale, offset).
TensorData f32(std::vector<int64_t> shape, float scale, int offset);
// amp * sin(scale * i + shift) for i in [0, n), in float: smooth, non-zero
// weights and inputs (the recurrent tests').
std::vector<float> sine_wave(int64_t n, float scale, float shift, float amp = 1.0f);
// A float32 tensor of `shape` holding pseudo-random values in [-scale, scale),
// the same for the same `seed` (a linear congruential generator).
TensorData random_f32(std::vector<int64_t> shape, uint32_t seed, float scale = 1.0f);

// The extremes of int64, as ONNX models write "to the end" in Slice bounds.
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int64_t>::min();

// A shape or an index list of int64 (ONNX's shape tensors).
using Shape64 = std::vector<int64_t>;

TensorData i64(std::vector<int64_t> shape, std::vector<int64_t> values);
TensorData i32(std::vector<int64_t> shape, std::vector<int32_t> values);
TensorData boolean(std::vector<int64_t> shape, std::vector<uint8_t> values);
// A float32 tensor holding start, start + 1, start + 2, ... in row-major order.
TensorData iota_f32(std::vector<int64_t> shape, float start = 0);

// Every element as a double, whatever the dtype.
std::vector<double> floats(const TensorData &t);

// Deterministic values with a few distinct magnitudes and signs:
// ((i * 7 + offset) % 13 - 6) * scale. Tests compute their references from
// the same values, so any data will do as long as it is not symmetric.
std::vector<float> ramp(int64_t n, float scale = 0.25f, int offset = 0);

// The element count of a shape.
int64_t numel(const std::vector<int64_t> &shape);

// Runs `f` and expects a disco::Error whose message names `node` and, when
// given, also contains `also`.
void expect_error_naming(const std::function<void()> &f, const std::string &node, const std::string &also = "");

inline Dim sym(const char *name) { return Dim::symbol(name); }

// Node attributes for GraphBuilder::op, e.g. attrs({{"axis", attr_int(1)}}).
inline Attributes attrs(std::initializer_list<std::pair<const std::string, Attribute>> a) { return Attributes(a); }

}  // namespace disco::testing
