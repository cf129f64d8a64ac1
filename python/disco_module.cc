// disco's Python module (imported as disco._disco; python/disco/__init__.py
// re-exports it): compile(), Model and Error. Everything Python-specific
// lives here and in numpy_tensors.h; the Model itself is python/model.h.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <new>
#include <optional>

#include "frontend/errors.h"
#include "python/model.h"
#include "python/numpy_tensors.h"
#include "tools/cli_args.h"

namespace py = pybind11;

namespace disco::python {

namespace {

// A dim as Python shows it: an int for a constant, the symbolic dim's text otherwise.
py::object dim_object(const Dim &d) {
  if (d.is_const()) return py::int_(d.as_const());
  return py::str(d.str());
}

py::object info_object(const ValueInfo &v) {
  // Never released: a static py::object would be released after the interpreter is gone.
  static py::handle tensor_info = py::object(py::module_::import("disco").attr("TensorInfo")).release();
  if (!v.known) return tensor_info(v.name, py::none(), py::none());
  py::list dims;
  for (const Dim &d : v.shape) dims.append(dim_object(d));
  return tensor_info(v.name, dtype_text(v.dtype), py::tuple(dims));
}

// "onednn,host" or ["onednn", "host"].
std::vector<std::string> backend_list(const py::object &targets) {
  if (targets.is_none()) return {};
  if (py::isinstance<py::str>(targets)) return parse_backend_list(targets.cast<std::string>());
  auto names = targets.cast<std::vector<std::string>>();
  for (const auto &n : names)
    if (n.empty()) fail("targets: a backend name is empty");
  return names;
}

// {"x": (2, 128, 768)} or {"x": "2x128x768"}.
std::map<std::string, std::vector<int64_t>> static_shapes(const py::object &shapes) {
  std::map<std::string, std::vector<int64_t>> out;
  if (shapes.is_none()) return out;
  for (auto [k, v] : shapes.cast<py::dict>()) {
    const auto name = k.cast<std::string>();
    if (py::isinstance<py::str>(v)) {
      out[name] = parse_shape(v.cast<std::string>(), "static " + name);
      continue;
    }
    for (py::handle d : v) {
      const auto dim = d.cast<int64_t>();
      if (dim < 0) fail("static ", name, ": dim ", out[name].size(), " is ", dim, ", below 0");
      out[name].push_back(dim);
    }
  }
  return out;
}

// A Model and what Python reads of its last run.
struct PyModel {
  std::unique_ptr<Model> model;
  std::mutex mu;
  std::vector<std::string> last_copied;  // inputs the last run to finish had to copy
};

std::shared_ptr<PyModel> compile(const py::object &source, const std::optional<std::string> &name,
                                  const std::string &target, const py::object &targets,
                                  const std::map<std::string, int64_t> &hints, const py::object &static_,
                                  int threads, bool cache, int compile_jobs, int64_t max_memory,
                                  const py::object &progress) {
  ModelOptions opts;
  opts.target = target;
  opts.backends = backend_list(targets);
  opts.hints = hints;
  opts.static_shapes = static_shapes(static_);
  opts.threads = threads;
  opts.use_cache = cache;
  opts.compile_jobs = compile_jobs;
  opts.max_memory = max_memory;
  // The callback's first exception (KeyboardInterrupt included), raised once
  // the compile is over: unwinding through the compile would leave its kernel
  // processes unwaited for.
  auto raised = std::make_shared<std::optional<py::error_already_set>>();
  if (!progress.is_none()) {
    // The compile copies its options without the GIL: the callable is shared
    // through a shared_ptr, whose copies need no GIL, and let go with it.
    std::shared_ptr<py::object> callable(new py::object(progress), [](py::object *o) {
      if (!Py_IsInitialized()) return;
      py::gil_scoped_acquire gil;
      delete o;
    });
    opts.progress = [callable, raised](const std::string &line) {
      py::gil_scoped_acquire gil;  // called while the GIL is released (below)
      if (raised->has_value()) return;
      try {
        (*callable)(line);
      } catch (py::error_already_set &e) {
        *raised = std::move(e);
      }
    };
  }
  auto m = std::make_shared<PyModel>();
  if (py::isinstance<py::bytes>(source) || py::isinstance<py::bytearray>(source) ||
      py::isinstance<py::memoryview>(source)) {
    std::string bytes = py::module_::import("builtins").attr("bytes")(source).cast<std::string>();
    const std::string model_name = name.value_or("model");
    py::gil_scoped_release unlocked;
    m->model = Model::from_bytes(std::move(bytes), model_name, std::move(opts));
  } else {
    const auto path = py::module_::import("os").attr("fspath")(source).cast<std::string>();
    if (name) fail("compile: `name` is for a model given as bytes; a file's name is its stem");
    py::gil_scoped_release unlocked;
    m->model = Model::from_file(path, std::move(opts));
  }
  if (raised->has_value()) throw std::move(**raised);
  return m;
}

// Model.run(*arrays, **arrays): positional in input order, or by name.
py::dict run(PyModel &pm, const py::args &args, const py::kwargs &kwargs) {
  Model &m = *pm.model;
  const std::vector<InputSpec> &specs = m.inputs();
  if (args.size() > specs.size())
    fail("model '", m.name(), "' takes ", specs.size(), " inputs, got ", args.size(), " positional arrays");
  std::vector<py::handle> given(specs.size());
  for (size_t i = 0; i < args.size(); ++i) given[i] = args[i];
  for (auto [k, v] : kwargs) {
    const auto n = k.cast<std::string>();
    size_t i = 0;
    while (i < specs.size() && specs[i].name != n) ++i;
    if (i == specs.size()) fail("model has no input named '", n, "'");
    if (given[i]) fail("input '", n, "' is given both by position and by name");
    given[i] = v;
  }
  std::vector<TensorData> inputs;
  std::vector<std::string> copied;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!given[i]) fail("input '", specs[i].name, "' ", shape_str(specs[i].shape), " is not given");
    InputTensor in = input_tensor(given[i], specs[i]);
    if (in.copied) copied.push_back(specs[i].name);
    inputs.push_back(std::move(in.tensor));
  }
  std::vector<TensorData> outputs;
  {
    py::gil_scoped_release unlocked;
    outputs = m.run(inputs);
    std::lock_guard<std::mutex> lock(pm.mu);
    pm.last_copied = copied;
  }
  py::dict out;
  const std::vector<std::string> &names = m.output_names();
  for (size_t i = 0; i < outputs.size(); ++i) out[py::str(names.at(i))] = numpy_array(outputs[i]);
  return out;
}

py::dict export_library(PyModel &pm, const py::object &out_dir, const std::string &name) {
  const auto dir = py::module_::import("os").attr("fspath")(out_dir).cast<std::string>();
  aot::AotResult r;
  {
    py::gil_scoped_release unlocked;
    r = pm.model->export_library(dir, name);
  }
  py::dict out;
  out["archive"] = r.archive;
  out["header"] = r.header;
  out["pkg_config"] = r.pkg_config;
  out["files"] = r.files;
  out["kernels"] = r.kernels;
  return out;
}

}  // namespace

}  // namespace disco::python

PYBIND11_MODULE(_disco, m) {
  using namespace disco::python;
  m.doc() = "disco's native module; import disco instead";

  // disco.Error: a ValueError carrying the message the CLI prints after "disco: error: ".
  // Never released, as the module holds it for the process's life.
  static PyObject *error = py::exception<disco::Error>(m, "Error", PyExc_ValueError).release().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::builtin_exception &) {
      throw;  // pybind11's own (TypeError, ...): its translator raises them
    } catch (const py::error_already_set &) {
      throw;  // a Python exception from a callback: raised as it was
    } catch (const std::bad_alloc &) {
      throw;  // MemoryError
    } catch (const std::exception &e) {
      // disco::Error, UsageError (a malformed shape or backend list) and the
      // standard library's errors, as the CLI reports them all.
      PyErr_SetString(error, e.what());
    }
  });

  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model", "A compiled model: disco.compile() makes one.")
      .def_property_readonly("name", [](PyModel &pm) { return pm.model->name(); })
      .def_property_readonly(
          "inputs",
          [](PyModel &pm) {
            py::list out;
            for (const ValueInfo &v : pm.model->input_info()) out.append(info_object(v));
            return out;
          },
          "Each input's name, numpy dtype name and dims (ints, or the symbolic dims' text).")
      .def_property_readonly(
          "outputs",
          [](PyModel &pm) {
            std::vector<ValueInfo> infos;
            {
              py::gil_scoped_release unlocked;  // the session's lock; a run may hold it
              infos = pm.model->output_info();
            }
            py::list out;
            for (const ValueInfo &v : infos) out.append(info_object(v));
            return out;
          },
          "Each output's name, dtype and dims (None for both while the model compiles at its first run).")
      .def_property_readonly("compiles", [](PyModel &pm) { return pm.model->compiles(); },
                             "Fresh compiles this model has run (cache hits do not count).")
      .def_property_readonly(
          "last_run_copied",
          [](PyModel &pm) {
            std::lock_guard<std::mutex> lock(pm.mu);
            return pm.last_copied;
          },
          "The inputs the last run had to copy (not C-contiguous, unaligned, or of another byte order); "
          "the others were read in place.")
      .def("run", &run,
           "run(*arrays, **arrays) -> dict of output name to numpy array. Arrays are given in input order or "
           "by name; C-contiguous arrays are read in place, and the GIL is released while the model runs.")
      .def("__call__", &run)
      .def("export", &export_library, py::arg("outdir"), py::arg("name"),
           "Writes OUTDIR/NAME.a and OUTDIR/NAME.h as `disco compile MODEL -o OUTDIR/NAME` does; returns their paths.");

  m.def("compile", &compile, py::arg("model"), py::kw_only(), py::arg("name") = py::none(),
        py::arg("target") = "host", py::arg("targets") = py::none(),
        py::arg("hints") = std::map<std::string, int64_t>{}, py::arg("static") = py::none(), py::arg("threads") = 0,
        py::arg("cache") = true, py::arg("compile_jobs") = 0, py::arg("max_memory") = 0,
        py::arg("progress") = py::none(),
        "Compiles an ONNX model (a path, or the file's bytes) with its symbolic dims; see disco.compile.");
}
