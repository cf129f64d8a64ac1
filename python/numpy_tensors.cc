#include "python/numpy_tensors.h"

#include <cstring>

#include "frontend/errors.h"

namespace disco::python {

py::dtype numpy_dtype(DType t) {
  DISCO_CHECK(t != DType::Undefined, "a tensor of undefined dtype has no numpy dtype");
  return py::dtype(t == DType::BF16 ? std::string("uint16") : std::string(dtype_name(t)));
}

std::string dtype_text(DType t) { return dtype_name(t); }

std::optional<DType> disco_dtype(const py::dtype &d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'b' && size == 1) return DType::Bool;
  if (kind == 'f') {
    if (size == 2) return DType::F16;
    if (size == 4) return DType::F32;
    if (size == 8) return DType::F64;
  }
  if (kind == 'i') {
    if (size == 1) return DType::I8;
    if (size == 2) return DType::I16;
    if (size == 4) return DType::I32;
    if (size == 8) return DType::I64;
  }
  if (kind == 'u') {
    if (size == 1) return DType::U8;
    if (size == 2) return DType::U16;
    if (size == 4) return DType::U32;
    if (size == 8) return DType::U64;
  }
  return std::nullopt;
}

namespace {

// Never released: a static py::object would be released after the interpreter is gone.
py::handle numpy() {
  static py::handle np = py::module_::import("numpy").release();
  return np;
}

// Whether disco can read the array's buffer as it is.
bool readable_in_place(const py::array &a) {
  const int flags = a.flags();
  using Api = py::detail::npy_api;
  return (flags & Api::NPY_ARRAY_C_CONTIGUOUS_) && (flags & Api::NPY_ARRAY_ALIGNED_) &&
         a.dtype().attr("isnative").cast<bool>();
}

}  // namespace

InputTensor input_tensor(py::handle value, const InputSpec &spec) {
  py::array array;
  if (py::isinstance<py::array>(value)) {
    array = py::reinterpret_borrow<py::array>(value);
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value) || py::isinstance<py::bool_>(value) ||
             py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    // Python numbers have no dtype of their own to check: take the input's.
    array = numpy().attr("asarray")(value, numpy_dtype(spec.dtype));
  } else {
    array = numpy().attr("asarray")(value);  // __array__: a CPU torch tensor shares its memory
  }
  std::optional<DType> dtype = disco_dtype(array.dtype());
  if (!dtype)
    fail("input '", spec.name, "' is a numpy array of dtype ", py::str(array.dtype()).cast<std::string>(),
         ", which disco has no dtype for (the model takes ", dtype_text(spec.dtype), ")");
  if (*dtype == DType::U16 && spec.dtype == DType::BF16) dtype = DType::BF16;  // bit patterns, see numpy_dtype

  InputTensor in;
  if (!readable_in_place(array)) {
    array = numpy().attr("ascontiguousarray")(array, array.dtype().attr("newbyteorder")("="));
    in.copied = true;
  }
  const std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  // TensorData::borrow: the array's buffer as it is. The storage holds a
  // reference to the array until the last TensorData over it is gone, which
  // may be on a thread without the GIL (a run releases it).
  PyObject *ref = array.inc_ref().ptr();
  std::shared_ptr<void> owner(ref, [](void *p) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone, and the array with it
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject *>(p));
  });
  in.tensor = TensorData::borrow(*dtype, shape, const_cast<void *>(array.data()), std::move(owner));
  return in;
}

py::array numpy_array(const TensorData &t) {
  const py::dtype dtype = numpy_dtype(t.dtype);
  if (t.num_bytes() == 0) return py::array(dtype, t.shape);
  auto *keep = new std::shared_ptr<AlignedBytes>(t.bytes);
  py::capsule owner(keep, [](void *p) { delete static_cast<std::shared_ptr<AlignedBytes> *>(p); });
  return py::array(dtype, t.shape, {}, t.bytes->data(), owner);
}

}  // namespace disco::python
