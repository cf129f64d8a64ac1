#include "runtime/executor.h"

#include <dlfcn.h>

#include <cstring>

#include "HalideRuntime.h"
#include "frontend/errors.h"

namespace disco {

namespace {

thread_local std::string g_halide_error;

void capture_halide_error(void *, const char *msg) {
  g_halide_error += msg;
  while (!g_halide_error.empty() && g_halide_error.back() == '\n') g_halide_error.pop_back();
}

halide_type_t runtime_type(DType t) {
  switch (t) {
    case DType::F32: return {halide_type_float, 32, 1};
    case DType::F16: return {halide_type_float, 16, 1};
    case DType::F64: return {halide_type_float, 64, 1};
    case DType::BF16: return {halide_type_bfloat, 16, 1};
    case DType::I8: return {halide_type_int, 8, 1};
    case DType::I16: return {halide_type_int, 16, 1};
    case DType::I32: return {halide_type_int, 32, 1};
    case DType::I64: return {halide_type_int, 64, 1};
    case DType::U8: return {halide_type_uint, 8, 1};
    case DType::U16: return {halide_type_uint, 16, 1};
    case DType::U32: return {halide_type_uint, 32, 1};
    case DType::U64: return {halide_type_uint, 64, 1};
    case DType::Bool: return {halide_type_uint, 1, 1};
    default: fail("no runtime type for dtype ", dtype_name(t));
  }
}

struct RuntimeBuffer {
  halide_buffer_t buf{};
  std::vector<halide_dimension_t> dims;
  void set(void *data, DType t, const std::vector<int64_t> &shape) {
    static uint8_t empty_storage[64];
    dims.assign(shape.size(), halide_dimension_t{});
    int64_t stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      auto &d = dims[i];
      d.min = 0;
      d.extent = static_cast<int32_t>(shape[shape.size() - 1 - i]);
      d.stride = static_cast<int32_t>(stride);
      stride *= shape[shape.size() - 1 - i];
    }
    buf = halide_buffer_t{};
    buf.host = static_cast<uint8_t *>(data ? data : empty_storage);
    buf.type = runtime_type(t);
    buf.dimensions = static_cast<int32_t>(shape.size());
    buf.dim = dims.data();
  }
};

}  // namespace

class KernelLibrary {
 public:
  explicit KernelLibrary(const std::string &path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    DISCO_CHECK(handle_, "cannot load kernel library '", path, "': ", dlerror());
    using SetHandler = void (*)(void (*)(void *, const char *));
    if (auto set = reinterpret_cast<SetHandler>(dlsym(handle_, "halide_set_error_handler"))) set(capture_halide_error);
  }
  ~KernelLibrary() {
    if (handle_) dlclose(handle_);
  }
  void *symbol(const std::string &name) const {
    void *p = dlsym(handle_, name.c_str());
    DISCO_CHECK(p, "kernel library has no symbol '", name, "'");
    return p;
  }
  void set_num_threads(int n) {
    using SetThreads = int (*)(int);
    if (auto f = reinterpret_cast<SetThreads>(dlsym(handle_, "halide_set_num_threads"))) f(n);
  }

 private:
  void *handle_ = nullptr;
};

Executor::Executor(Plan plan, const std::string &library_path)
    : plan_(std::move(plan)), lib_(std::make_unique<KernelLibrary>(library_path)) {
  for (const auto &s : plan_.steps)
    kernels_.push_back(reinterpret_cast<int (*)(void **)>(lib_->symbol(s.kernel + "_argv")));
  temps_.resize(plan_.buffers.size());
}

Executor::~Executor() = default;

void Executor::set_num_threads(int n) { lib_->set_num_threads(n); }

std::vector<TensorData> Executor::run(const std::vector<TensorData> &inputs) {
  DISCO_CHECK(inputs.size() == plan_.inputs.size(), "model '", plan_.name, "' takes ", plan_.inputs.size(),
              " inputs, got ", inputs.size());
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DType> dtypes;
  for (const auto &t : inputs) {
    shapes.push_back(t.shape);
    dtypes.push_back(t.dtype);
  }
  symbols_ = bind_symbols(plan_.inputs, shapes, dtypes, plan_.checks);

  std::vector<RuntimeBuffer> bufs(plan_.buffers.size());
  std::vector<TensorData> outputs(plan_.output_buffers.size());
  for (size_t i = 0; i < plan_.buffers.size(); ++i) {
    const PlanBuffer &b = plan_.buffers[i];
    std::vector<int64_t> shape = eval_shape(b.shape, symbols_);
    for (size_t d = 0; d < shape.size(); ++d)
      DISCO_CHECK(shape[d] >= 0 && shape[d] < (int64_t(1) << 31), "buffer '", b.name, "' dim ", d, " = ",
                  b.shape[d].str(), " evaluates to ", shape[d]);
    switch (b.kind) {
      case PlanBuffer::Input: {
        const TensorData &t = inputs.at(b.io_index);
        DISCO_CHECK(t.shape == shape, "internal: input '", b.name, "' shape disagrees with the plan");
        bufs[i].set(const_cast<uint8_t *>(t.data()), b.dtype, shape);
        break;
      }
      case PlanBuffer::Output: {
        TensorData &t = outputs.at(b.io_index);
        t = TensorData(b.dtype, shape);
        bufs[i].set(t.mutable_data(), b.dtype, shape);
        break;
      }
      case PlanBuffer::Temp: {
        int64_t n = 1;
        for (auto d : shape) n *= d;
        size_t bytes = static_cast<size_t>(n) * dtype_size(b.dtype);
        if (temps_[i].size() < bytes) temps_[i].resize(bytes);
        bufs[i].set(temps_[i].data(), b.dtype, shape);
        break;
      }
    }
  }
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep &step = plan_.steps[s];
    std::vector<int32_t> sym_values;
    for (const auto &sym : step.symbols) sym_values.push_back(static_cast<int32_t>(symbols_.at(sym)));
    std::vector<void *> args;
    for (int b : step.inputs) args.push_back(&bufs[b].buf);
    for (auto &v : sym_values) args.push_back(&v);
    for (int b : step.outputs) args.push_back(&bufs[b].buf);
    g_halide_error.clear();
    int rc = kernels_[s](args.data());
    if (rc != 0)
      fail("kernel ", step.kernel, " (", step.label, ") failed with code ", rc,
           g_halide_error.empty() ? "" : ": " + g_halide_error);
  }
  return outputs;
}

}  // namespace disco
