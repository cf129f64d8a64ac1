// Reads and writes NumPy .npy files (C order; float16/32/64, int8-64,
// uint8-64, bool). Errors name the file and what is wrong with it.
#pragma once
#include <string>

#include "frontend/tensor_data.h"

namespace disco {

TensorData read_npy(const std::string &path);
void write_npy(const std::string &path, const TensorData &t);

}  // namespace disco
