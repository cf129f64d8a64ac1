// Scalar inputs given on the command line (`disco run --value rate=16000`):
// the text converted to a rank-0 tensor of the input's dtype, so that a mode
// flag, a sample rate or a temperature needs no .npy file.
#pragma once
#include <string>

#include "frontend/tensor_data.h"

namespace disco {

// `text` as a scalar of `dtype`: a float for float dtypes, an integer in the
// dtype's range for integer ones, true/false/1/0 for bool. Throws UsageError
// naming `option` (e.g. "--value rate") and the dtype.
TensorData parse_scalar_value(const std::string &text, DType dtype, const std::string &option);

}  // namespace disco
