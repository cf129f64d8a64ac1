// numpy arrays to and from disco's TensorData, for Model.run.
//
// Inputs: a C-contiguous, aligned, native-endian array is lent to disco as is
// (TensorData::borrow; "aligned" is numpy's: to the element size, which is
// all kernels need); any other array is first made contiguous by numpy (one
// copy). Outputs: each numpy array views the TensorData's storage and
// keeps it alive, so nothing is copied on the way out either.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "frontend/dtype.h"
#include "frontend/tensor_data.h"
#include "runtime/shape_binder.h"

namespace disco::python {

namespace py = pybind11;

// The numpy dtype of a disco dtype. bfloat16 has none: its tensors are uint16
// arrays of the bit patterns.
py::dtype numpy_dtype(DType t);
// "float32", ...; "bfloat16" for bfloat16 (what Model.inputs shows).
std::string dtype_text(DType t);
// nullopt for numpy dtypes disco has no counterpart of (complex, object, ...).
std::optional<DType> disco_dtype(const py::dtype &d);

struct InputTensor {
  TensorData tensor;
  bool copied = false;  // whether the array had to be copied to be read
};

// `value` is the array given for input `spec`: a numpy array, something with
// __array__ (a CPU torch tensor), or a list or number (made an array of the
// input's dtype). A dtype or shape that does not match is left for the
// session's checks, which name the input and dim. Needs the GIL.
InputTensor input_tensor(py::handle value, const InputSpec &spec);

// An array over `t`'s storage (no copy); it keeps the storage alive.
py::array numpy_array(const TensorData &t);

}  // namespace disco::python
