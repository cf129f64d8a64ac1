// Reads and writes NumPy .npy files (C order; float16/32/64, int8-64,
// uint8-64, bool). Errors name the file and what is wrong with it; a shape
// whose data the file lacks, or above `limit`, is refused before allocating.
#pragma once
#include <string>

#include "frontend/checked_size.h"
#include "frontend/tensor_data.h"

namespace disco {

TensorData read_npy(const std::string &path, const MemoryLimit &limit = memory_limit());
void write_npy(const std::string &path, const TensorData &t);

}  // namespace disco
