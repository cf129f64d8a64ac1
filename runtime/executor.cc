#include "runtime/executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <list>

#include "HalideRuntime.h"
#include "frontend/errors.h"
#include "runtime/child_executor.h"
#include "runtime/extern_kernel.h"
#include "runtime/halide_block_cache.h"
#include "runtime/host_ops.h"
#include "runtime/loop_runner.h"
#include "runtime/mapped_file.h"
#include "runtime/openmp_par_for.h"

namespace disco {

namespace {

thread_local std::string g_halide_error;

void capture_halide_error(void *, const char *msg) {
  g_halide_error += msg;
  while (!g_halide_error.empty() && g_halide_error.back() == '\n') g_halide_error.pop_back();
}

// A kernel's failure in disco's words where it is a size Halide refused:
// every buffer passed to a kernel is checked before the call
// (check_fits_kernel), so this is a stage the kernel holds whole inside it
// (a Softmax's row of 2^29 float32 is 2 GiB), which Halide sizes in bytes
// (code -5; -6 counts elements), above its 2^31-1 without large_buffers.
// Otherwise the code and Halide's text.
std::string kernel_failure(const PlanStep &step, int rc, const std::string &halide_text) {
  const std::string where = "kernel " + step.kernel + " (" + step.label + ")";
  const char *unit = rc == halide_error_code_buffer_allocation_too_large  ? "bytes"
                     : rc == halide_error_code_buffer_extents_too_large ? "elements"
                                                                         : nullptr;
  if (!unit) return where + " failed with code " + std::to_string(rc) + (halide_text.empty() ? "" : ": " + halide_text);
  // "Total allocation for buffer f3 is 2147483648, which exceeds ...": the size, not the internal name.
  std::string size;
  if (const size_t at = halide_text.find(" is "); at != std::string::npos)
    for (size_t i = at + 4; i < halide_text.size() && halide_text[i] >= '0' && halide_text[i] <= '9'; ++i)
      size += halide_text[i];
  return where + " needs a buffer of " + (size.empty() ? "more than 2147483647" : size) + " " + unit +
         " inside it, above the " + std::to_string(kMaxKernelBufferElements) + " " + unit +
         " that a kernel's buffer can hold";
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

// Adds the time until it goes out of scope to *ms (when not null).
class StepTimer {
 public:
  explicit StepTimer(double *ms) : ms_(ms), t0_(ms ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~StepTimer() {
    if (ms_) *ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double *ms_;
  std::chrono::steady_clock::time_point t0_;
};

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
      // Only a buffer with no elements (a 0 dim outside the product) has
      // strides past 2^63; a kernel never reads its strides.
      if (__builtin_mul_overflow(stride, shape[shape.size() - 1 - i], &stride)) stride = 0;
    }
    buf = halide_buffer_t{};
    buf.host = static_cast<uint8_t *>(data ? data : empty_storage);
    buf.type = runtime_type(t);
    buf.dimensions = static_cast<int32_t>(shape.size());
    buf.dim = dims.data();
  }
};

}  // namespace

struct RunScratch {
  std::vector<RuntimeBuffer> bufs;
  std::vector<std::vector<int64_t>> buf_shapes;
  std::vector<char> ready;
  std::vector<int64_t> shape;  // a buffer's shape as it is evaluated
  // Per step: an extern call's tensors, a kernel's symbol values and arguments.
  std::vector<std::vector<ExternTensor>> ins, outs;
  std::vector<std::vector<int32_t>> sym_values;
  std::vector<std::vector<void *>> args;
};

class KernelLibrary {
 public:
  explicit KernelLibrary(const std::string &path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    DISCO_CHECK(handle_, "cannot load kernel library '", path, "': ", dlerror());
    using SetHandler = void (*)(void (*)(void *, const char *));
    if (auto set = reinterpret_cast<SetHandler>(dlsym(handle_, "halide_set_error_handler"))) set(capture_halide_error);
    using SetParFor = halide_do_par_for_t (*)(halide_do_par_for_t);
    if (auto set = reinterpret_cast<SetParFor>(dlsym(handle_, "halide_set_custom_do_par_for"))) set(openmp_do_par_for);
    // Large stages' memory kept between calls (halide_block_cache.h); both or neither.
    using SetMalloc = halide_malloc_t (*)(halide_malloc_t);
    using SetFree = halide_free_t (*)(halide_free_t);
    auto set_malloc = reinterpret_cast<SetMalloc>(dlsym(handle_, "halide_set_custom_malloc"));
    auto set_free = reinterpret_cast<SetFree>(dlsym(handle_, "halide_set_custom_free"));
    if (set_malloc && set_free) {
      set_malloc(halide_block_malloc);
      set_free(halide_block_free);
    }
    cuda_ = dlsym(handle_, "halide_cuda_device_interface") != nullptr;
    if (dlsym(handle_, "halide_opencl_device_interface") || cuda_) {
      copy_to_host_ = reinterpret_cast<BufferFn>(dlsym(handle_, "halide_copy_to_host"));
      device_free_ = reinterpret_cast<BufferFn>(dlsym(handle_, "halide_device_free"));
    }
  }
  ~KernelLibrary() {
    if (handle_) dlclose(handle_);
  }
  void *symbol(const std::string &name) const {
    void *p = dlsym(handle_, name.c_str());
    DISCO_CHECK(p, "kernel library has no symbol '", name, "'");
    return p;
  }
  // GPU kernels leave their outputs on the device; the runtime's copies and
  // frees are looked up once (absent from libraries without a GPU runtime).
  bool has_device() const { return copy_to_host_ && device_free_; }
  // Without a CUDA driver Halide's message lists every missing function: say it once, plainly.
  void check_cuda_driver() const {
    if (!cuda_) return;
    static const bool present = [] {
      void *h = dlopen("libcuda.so", RTLD_LAZY);
      if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
      return h != nullptr;
    }();
    DISCO_CHECK(present, "no usable GPU: this model's kernels run with CUDA, and the CUDA driver (libcuda.so) "
                         "cannot be loaded");
  }
  void copy_to_host(halide_buffer_t *b) const {
    if (!b->device_dirty()) return;
    const int rc = copy_to_host_(nullptr, b);
    DISCO_CHECK(rc == 0, "copying a buffer from the GPU failed with code ", rc, ": ", g_halide_error);
  }
  void device_free(halide_buffer_t *b) const {
    if (b->device) device_free_(nullptr, b);
  }
  void set_num_threads(int n) {
    using SetThreads = int (*)(int);
    if (auto f = reinterpret_cast<SetThreads>(dlsym(handle_, "halide_set_num_threads"))) f(n);
  }

 private:
  using BufferFn = int (*)(void *, halide_buffer_t *);
  void *handle_ = nullptr;
  BufferFn copy_to_host_ = nullptr, device_free_ = nullptr;
  bool cuda_ = false;
};

// Device buffers live for one run: freed on every exit, errors included.
struct DeviceBufferScope {
  const KernelLibrary *lib;
  std::vector<RuntimeBuffer> *bufs;
  ~DeviceBufferScope() {
    if (lib && lib->has_device())
      for (auto &b : *bufs) lib->device_free(&b.buf);
  }
};

Executor::Executor(Plan plan, const std::string &dir, bool allow_child) : plan_(std::move(plan)), dir_(dir) {
  if (allow_child && plan_needs_child_process(plan_, dir)) {
    child_ = std::make_unique<ChildExecutor>(plan_, dir);
    return;
  }
  if (!plan_.library.empty()) lib_ = std::make_shared<KernelLibrary>(dir + "/" + plan_.library);
  if (!plan_.constants.empty()) constants_ = std::make_shared<MappedFile>(dir + "/" + plan_.constants);
  init();
}

Executor::Executor(const Executor &from, CloneTag)
    : plan_(from.plan_), dir_(from.dir_), lib_(from.lib_), constants_(from.constants_), limit_(from.limit_) {
  if (from.child_)
    child_ = std::make_unique<ChildExecutor>(plan_, dir_);
  else
    init();
  if (from.threads_ > 0) set_num_threads(from.threads_);
  if (from.profiling_) set_profiling(true);
}

std::unique_ptr<Executor> Executor::clone() const { return std::unique_ptr<Executor>(new Executor(*this, CloneTag{})); }

void Executor::init() {
  for (const auto &b : plan_.buffers) {
    if (b.kind != PlanBuffer::Constant) continue;
    std::vector<int64_t> shape;
    for (const auto &d : b.shape) {
      DISCO_CHECK(d.is_const(), "constant '", b.name, "' has a symbolic shape");
      shape.push_back(d.as_const());
    }
    const int64_t n = checked_bytes(shape, b.dtype, "constant '" + b.name + "'");
    const int64_t file_bytes = constants_ ? static_cast<int64_t>(constants_->size()) : 0;
    DISCO_CHECK(b.offset >= 0 && n <= file_bytes - b.offset, "constant '", b.name,
                "' lies outside the constants file");
  }
  for (const auto &s : plan_.steps) {
    kernels_.push_back(nullptr);
    externs_.emplace_back();
    loops_.emplace_back();
    if (s.host_op == "Loop") {
      loops_.back() = std::make_unique<LoopRunner>(s, dir_);
    } else if (!s.host_op.empty()) {
      DISCO_CHECK(find_host_op(s.host_op), "this runtime has no host op '", s.host_op, "'");
    } else if (!s.extern_call.empty()) {
      const ExternKernelFactory *make = ExternKernelRegistry::global().find(s.extern_call);
      DISCO_CHECK(make, "step ", s.label, " calls '", s.extern_call,
                  "', which no backend linked into this program provides");
      externs_.back() = (*make)(s);
    } else {
      DISCO_CHECK(lib_, "plan '", plan_.name, "' has kernels but no kernel library");
      kernels_.back() = reinterpret_cast<int (*)(void **)>(lib_->symbol(s.kernel + "_argv"));
    }
  }
  kernel_buffer_ = kernel_buffers(plan_);
  kernel_input_.assign(plan_.inputs.size(), false);
  for (size_t i = 0; i < plan_.inputs.size() && i < plan_.input_buffers.size(); ++i) {
    const int b = plan_.input_buffers[i];
    kernel_input_[i] = b >= 0 && static_cast<size_t>(b) < kernel_buffer_.size() && kernel_buffer_[b];
  }
  auto table = std::make_shared<SymbolTable>();
  binder_ = ShapeBinder(plan_.inputs, plan_.checks, *table);
  for (const auto &b : plan_.buffers) buffer_shapes_.push_back(compile_shape(b.shape, *table));
  for (const auto &s : plan_.steps) {
    step_symbols_.push_back(compile_shape(s.symbols, *table));
  }
  symbols_ = BoundSymbols(std::move(table));
  temps_.resize(plan_.buffers.size());
  lifetimes_ = temp_lifetimes(plan_);
  shared_ = shared_buffers(plan_);
  scratch_ = std::make_unique<RunScratch>();
  scratch_->bufs.resize(plan_.buffers.size());
  scratch_->buf_shapes.resize(plan_.buffers.size());
  scratch_->ins.resize(plan_.steps.size());
  scratch_->outs.resize(plan_.steps.size());
  scratch_->sym_values.resize(plan_.steps.size());
  scratch_->args.resize(plan_.steps.size());
  // Constants have constant shapes (checked above): evaluated once, not per run.
  for (size_t i = 0; i < plan_.buffers.size(); ++i)
    if (plan_.buffers[i].kind == PlanBuffer::Constant) scratch_->buf_shapes[i] = eval_shape(plan_.buffers[i].shape, {});
}

int64_t Executor::checked_buffer_bytes(int id, const std::vector<int64_t> &shape) const {
  const PlanBuffer &b = plan_.buffers[id];
  // The fast path allocates nothing; the message is built only on failure.
  const std::optional<int64_t> bytes = buffer_bytes(b, shape);
  if (!bytes || *bytes > limit_.bytes)
    limit_.check("value '" + b.name + "'", allocated_shape(b, shape), b.dtype);  // fails
  return *bytes;
}

template <typename What>
void Executor::check_fits_kernel(const std::vector<int64_t> &shape, What what) const {
  const std::optional<int64_t> n = element_count(shape);
  if (!n || *n > kMaxKernelBufferElements) check_kernel_buffer_elements(what(), shape);  // fails
}

bool Executor::plan_arena() {
  std::vector<int64_t> bytes(plan_.buffers.size(), 0);
  std::vector<int64_t> shape;
  for (const auto &l : lifetimes_) {
    shape.clear();
    for (const SlotDim &d : buffer_shapes_[l.buffer]) {
      if (!d.bound_in(symbols_)) return false;  // bound by a host op during the run
      shape.push_back(std::max<int64_t>(d.eval(symbols_), 0));
    }
    bytes[l.buffer] = checked_buffer_bytes(l.buffer, shape);
  }
  if (bytes != arena_bytes_) {
    const ArenaLayout layout = place_buffers(lifetimes_, bytes, plan_.buffers.size());
    if (layout.size > limit_.bytes)
      fail("model '", plan_.name, "': its intermediate values need ", bytes_text(layout.size),
           " at once, above the memory limit of ", bytes_text(limit_.bytes), " (", limit_.source, ")");
    layout_ = layout;
    arena_bytes_ = bytes;
    if (arena_.size() < static_cast<size_t>(layout_.size)) arena_.resize(layout_.size);
  }
  return true;
}

Executor::~Executor() = default;

const SymbolValues &Executor::last_symbols() const {
  if (!child_) last_symbols_ = symbols_.to_map();
  return last_symbols_;
}

void Executor::set_num_threads(int n) {
  threads_ = n;
  if (child_) return child_->set_num_threads(n);
  set_openmp_par_for_threads(n);
  if (lib_) lib_->set_num_threads(n);
  for (auto &e : externs_)
    if (e) e->set_num_threads(n);
  for (auto &l : loops_)
    if (l) l->set_num_threads(n);
}

void Executor::set_profiling(bool on) {
  profiling_ = on;
  step_ms_.assign(plan_.steps.size(), 0.0);
  if (child_) child_->set_profiling(on);
}

std::vector<Executor::StepTime> Executor::profile() const {
  if (child_) return child_->profile();
  std::vector<StepTime> out;
  for (size_t s = 0; s < step_ms_.size(); ++s) {
    const PlanStep &st = plan_.steps[s];
    std::string what = !st.kernel.empty() ? st.kernel : !st.extern_call.empty() ? st.extern_call : st.host_op;
    out.push_back({what + " (" + st.label + ")", step_ms_[s]});
  }
  return out;
}

std::vector<TensorData> Executor::run(const std::vector<TensorData> &inputs) {
  std::vector<TensorData> outputs;
  run(inputs, outputs);
  return outputs;
}

void Executor::run(const std::vector<TensorData> &inputs, std::vector<TensorData> &outputs) {
  // An output whose memory an input shares (a caller that feeds a state back,
  // `in[h] = out[h_out]`, then reuses `out`) gets fresh memory: the kernels
  // may write the output before they have read all of the input.
  for (TensorData &o : outputs) {
    const uint8_t *ob = o.data();
    for (const TensorData &in : inputs)
      if (o.num_bytes() > 0 && in.num_bytes() > 0 && ob < in.data() + in.num_bytes() && in.data() < ob + o.num_bytes()) {
        o = TensorData();
        break;
      }
  }
  if (child_) return child_->run(inputs, outputs, &last_symbols_);
  DISCO_CHECK(inputs.size() == plan_.inputs.size(), "model '", plan_.name, "' takes ", plan_.inputs.size(),
              " inputs, got ", inputs.size());
  RunScratch &sc = *scratch_;
  symbols_.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    // A tensor whose bytes do not cover its shape would let kernels read past them.
    const TensorData &t = inputs[i];
    const std::optional<int64_t> need = tensor_bytes(t.shape, t.dtype);
    if (!need || *need != static_cast<int64_t>(t.num_bytes())) {
      const std::string what = "input '" + plan_.inputs[i].name + "'";
      fail(what, " of shape ", dims_text(t.shape), " holds ", t.num_bytes(), " bytes, its shape needs ",
           checked_bytes(t.shape, t.dtype, what));
    }
    binder_.bind_input(i, t.shape, t.dtype, symbols_);
    // Before anything is allocated: Halide's own check would refuse it in the kernel, in its words.
    if (kernel_input_[i]) check_fits_kernel(t.shape, [&] { return "input '" + plan_.inputs[i].name + "'"; });
  }
  binder_.verify_checks(symbols_);
  // Shapes repeat from run to run: the arena's sizes are evaluated once per set of symbols.
  if (arena_symbols_ != symbols_.values()) {
    arena_active_ = plan_arena();
    arena_symbols_ = symbols_.values();
  }

  if (lib_) lib_->check_cuda_driver();
  std::vector<RuntimeBuffer> &bufs = sc.bufs;
  const DeviceBufferScope device_scope{lib_.get(), &bufs};
  const bool device = lib_ && lib_->has_device();
  // Host memory written outside GPU kernels must reach the device before a GPU kernel reads it.
  auto mark_host_written = [&](int b) {
    if (device && b >= 0) bufs[b].buf.set_host_dirty(true);
  };
  auto need_on_host = [&](int b) {
    if (device && b >= 0) lib_->copy_to_host(&bufs[b].buf);
  };
  std::vector<std::vector<int64_t>> &buf_shapes = sc.buf_shapes;
  std::vector<char> &ready = sc.ready;
  ready.assign(plan_.buffers.size(), false);
  outputs.resize(plan_.output_buffers.size());
  for (size_t i = 0; i < plan_.buffers.size(); ++i) {
    const PlanBuffer &b = plan_.buffers[i];
    if (b.kind == PlanBuffer::Constant) {
      bufs[i].set(constants_ ? constants_->data() + b.offset : nullptr, b.dtype, buf_shapes[i]);
      mark_host_written(static_cast<int>(i));
      ready[i] = true;
      continue;
    }
    if (b.kind != PlanBuffer::Input) continue;
    const TensorData &t = inputs.at(b.io_index);
    buf_shapes[i] = t.shape;
    bufs[i].set(const_cast<uint8_t *>(t.data()), b.dtype, t.shape);
    mark_host_written(static_cast<int>(i));
    ready[i] = true;
  }
  // Sizes are evaluated when a buffer is first written: host ops bind symbols on the way.
  auto allocate = [&](int id, const std::vector<int64_t> &shape) -> uint8_t * {
    const PlanBuffer &b = plan_.buffers[id];
    // Before anything is allocated: the memory limit, then the kernels' 32-bit dims.
    const auto bytes = static_cast<size_t>(checked_buffer_bytes(id, shape));
    for (size_t d = 0; d < shape.size(); ++d)
      DISCO_CHECK(shape[d] < (int64_t(1) << 31), "value '", b.name, "' of shape ", dims_text(shape), ": dim ", d,
                  " (", b.shape[d].str(), ") is ", shape[d], ", above the 2147483647 that a kernel's buffer dim can hold");
    if (kernel_buffer_[id]) check_fits_kernel(shape, [&] { return "value '" + b.name + "'"; });
    buf_shapes[id] = shape;
    ready[id] = true;
    if (b.kind == PlanBuffer::Output) {
      TensorData &o = outputs.at(b.io_index);
      if (o.dtype != b.dtype || o.shape != shape) o = TensorData(b.dtype, shape);
      bufs[id].set(outputs[b.io_index].mutable_data(), b.dtype, shape);
      return outputs[b.io_index].mutable_data();
    }
    if (arena_active_ && layout_.offset[shared_[id]] >= 0) {
      uint8_t *at = arena_.data() + layout_.offset[shared_[id]];
      bufs[id].set(at, b.dtype, shape);
      return at;
    }
    if (temps_[id].size() < bytes) temps_[id].resize(bytes);
    bufs[id].set(temps_[id].data(), b.dtype, shape);
    return temps_[id].data();
  };
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep &step = plan_.steps[s];
    StepTimer timer(profiling_ ? &step_ms_[s] : nullptr);
    for (int b : step.inputs) DISCO_CHECK(b < 0 || ready[b], "internal: step ", step.kernel, " reads an unwritten buffer");
    if (!step.host_op.empty()) {
      for (int b : step.inputs) need_on_host(b);
      run_host_step(step, bufs, buf_shapes, allocate);
      for (int b : step.outputs) mark_host_written(b);
      continue;
    }
    bool any_elements = step.outputs.empty();
    for (int b : step.outputs) {
      eval_shape_into(buffer_shapes_[b], symbols_, sc.shape);
      allocate(b, sc.shape);
      any_elements = any_elements || std::find(buf_shapes[b].begin(), buf_shapes[b].end(), 0) == buf_shapes[b].end();
    }
    if (!any_elements) continue;  // nothing to compute, and empty inputs must not be bounds-checked
    if (externs_[s]) {
      for (int b : step.inputs) need_on_host(b);
      for (int b : step.outputs) mark_host_written(b);
      std::vector<ExternTensor> &ins = sc.ins[s], &outs = sc.outs[s];
      ins.resize(step.inputs.size());
      outs.resize(step.outputs.size());
      auto describe = [&](ExternTensor &t, int b, bool constant) {
        t.data = bufs[b].buf.host;
        t.dtype = plan_.buffers[b].dtype;
        t.shape = buf_shapes[b];
        t.constant = constant;
      };
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        const int b = step.inputs[i];
        if (b < 0)
          ins[i] = ExternTensor{};
        else
          describe(ins[i], b, plan_.buffers[b].kind == PlanBuffer::Constant);
      }
      for (size_t i = 0; i < step.outputs.size(); ++i) describe(outs[i], step.outputs[i], false);
      externs_[s]->run(ExternCall{ins, outs, symbols_});
      continue;
    }
    std::vector<int32_t> &sym_values = sc.sym_values[s];
    sym_values.clear();
    for (const SlotDim &arg : step_symbols_[s]) sym_values.push_back(static_cast<int32_t>(arg.eval(symbols_)));
    std::vector<void *> &args = sc.args[s];
    args.clear();
    // An input with no elements may still have its element 0 read, by a
    // clamped read whose value a select drops (a Concat of an empty part, as
    // torchvision's paste_masks pads with zeros(y0, w), y0 = 0 for a box at the
    // top). Halide's bounds check refuses that read, so such an input gets a
    // stand-in of zeros whose empty dims have extent 1.
    std::list<AlignedBytes> standin_bytes;
    std::list<RuntimeBuffer> standins;
    for (int b : step.inputs) {
      halide_buffer_t *in = &bufs[b].buf;
      if (std::find(buf_shapes[b].begin(), buf_shapes[b].end(), 0) != buf_shapes[b].end()) {
        std::vector<int64_t> shape = buf_shapes[b];
        for (auto &d : shape) d = std::max<int64_t>(d, 1);
        // Its other dims may make it large: [0, 65536, 65536] stands in as [1, 65536, 65536].
        check_fits_kernel(shape, [&] { return "the stand-in for the empty value '" + plan_.buffers[b].name + "'"; });
        const int64_t bytes = checked_buffer_bytes(b, shape);
        standin_bytes.emplace_back(static_cast<size_t>(bytes));
        standins.emplace_back();
        standins.back().set(standin_bytes.back().data(), plan_.buffers[b].dtype, shape);
        if (device) standins.back().buf.set_host_dirty(true);
        in = &standins.back().buf;
      }
      args.push_back(in);
    }
    for (auto &v : sym_values) args.push_back(&v);
    for (int b : step.outputs) args.push_back(&bufs[b].buf);
    g_halide_error.clear();
    int rc = kernels_[s](args.data());
    if (rc != 0) fail(kernel_failure(step, rc, g_halide_error));
  }
  for (int b : plan_.output_buffers) need_on_host(b);
}

template <typename Bufs, typename Shapes, typename Alloc>
void Executor::run_host_step(const PlanStep &step, Bufs &bufs, Shapes &shapes, Alloc &allocate) {
  std::vector<TensorData> copies(step.inputs.size());
  std::vector<const TensorData *> ins(step.inputs.size(), nullptr);
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const int b = step.inputs[i];
    if (b < 0) continue;  // an omitted optional input
    copies[i] = TensorData(plan_.buffers[b].dtype, shapes[b]);
    if (copies[i].num_bytes() > 0) std::memcpy(copies[i].mutable_data(), bufs[b].buf.host, copies[i].num_bytes());
    ins[i] = &copies[i];
  }
  const size_t index = static_cast<size_t>(&step - plan_.steps.data());
  // A run-time Loop with no iteration gives each scan output the dims its
  // buffer has as far as they are bound now (the others 0).
  auto empty_scan = [&](size_t scan) {
    std::vector<int64_t> shape;
    const size_t o = static_cast<size_t>(step.host_attrs.at("carried")) + scan;
    if (o >= step.outputs.size() || step.outputs[o] < 0) return std::vector<int64_t>{0};
    for (const SlotDim &d : buffer_shapes_[step.outputs[o]]) shape.push_back(d.bound_in(symbols_) ? d.eval(symbols_) : 0);
    return shape;
  };
  std::vector<TensorData> outs = loops_[index] ? loops_[index]->run(ins, empty_scan)
                                               : find_host_op(step.host_op)(ins, step.host_attrs);
  DISCO_CHECK(outs.size() >= step.outputs.size(), "host op ", step.host_op, " gave too few outputs");
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const int b = step.outputs[i];
    if (b < 0) continue;  // an output no one reads
    const PlanBuffer &pb = plan_.buffers[b];
    DISCO_CHECK(outs[i].shape.size() == pb.shape.size(), "host op ", step.host_op, " output ", i, " has the wrong rank");
    for (size_t d = 0; d < pb.shape.size(); ++d) {
      const SlotDim &dim = buffer_shapes_[b][d];
      if (const int slot = dim.symbol_slot(); slot >= 0 && !symbols_.has(slot)) symbols_.set(slot, outs[i].shape[d]);
      DISCO_CHECK(dim.eval(symbols_) == outs[i].shape[d], "host op ", step.host_op, " (", step.label, ") output ", i,
                  " dim ", d, " is ", outs[i].shape[d], ", the plan says ", pb.shape[d].str());
    }
    uint8_t *dst = allocate(b, outs[i].shape);
    // An empty output (TopK with K = 0 from the data) may have no storage at
    // all: memcpy's pointers must not be null even for 0 bytes.
    if (outs[i].num_bytes() > 0) std::memcpy(dst, outs[i].data(), outs[i].num_bytes());
  }
}

}  // namespace disco
