#include "tests/support/tensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "frontend/errors.h"

namespace disco::testing {

namespace {

// `values` must fill the shape; the copy never runs past the tensor.
template <typename T>
TensorData filled(DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  TensorData t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.num_elements()), values.size()) << "values do not fill the shape";
  size_t n = std::min(values.size(), static_cast<size_t>(t.num_elements()));
  std::copy(values.begin(), values.begin() + n, t.mutable_as<T>());
  return t;
}

}  // namespace

TensorData f32(std::vector<int64_t> shape, std::vector<float> values) {
  return filled(DType::F32, std::move(shape), values);
}

TensorData f64(std::vector<int64_t> shape, std::vector<double> values) {
  return filled(DType::F64, std::move(shape), values);
}

std::vector<float> sine_wave(int64_t n, float scale, float shift, float amp) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = amp * std::sin(scale * static_cast<float>(i) + shift);
  return v;
}

TensorData f32(std::vector<int64_t> shape, float scale, int offset) {
  const int64_t n = numel(shape);
  return f32(std::move(shape), ramp(n, scale, offset));
}

TensorData random_f32(std::vector<int64_t> shape, uint32_t seed, float scale) {
  TensorData t(DType::F32, std::move(shape));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.mutable_as<float>()[i] = scale * (static_cast<float>(s >> 8) / 16777216.0f * 2 - 1);
  }
  return t;
}

TensorData i64(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return TensorData::from_int64(values, std::move(shape));
}

TensorData i32(std::vector<int64_t> shape, std::vector<int32_t> values) {
  return filled(DType::I32, std::move(shape), values);
}

TensorData boolean(std::vector<int64_t> shape, std::vector<uint8_t> values) {
  return filled(DType::Bool, std::move(shape), values);
}

TensorData iota_f32(std::vector<int64_t> shape, float start) {
  TensorData t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_as<float>()[i] = start + static_cast<float>(i);
  return t;
}

std::vector<double> floats(const TensorData &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.float_at(i));
  return v;
}

std::vector<float> ramp(int64_t n, float scale, int offset) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + offset) % 13 - 6) * scale;
  return v;
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

void expect_error_naming(const std::function<void()> &f, const std::string &node, const std::string &also) {
  try {
    f();
    FAIL() << "expected an error naming " << node;
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(node), std::string::npos) << msg;
    if (!also.empty()) {
      EXPECT_NE(msg.find(also), std::string::npos) << msg;
    }
  }
}

}  // namespace disco::testing
