// What the oneDNN kernels share: the CPU engine, errors that name the step,
// the epilogue turned into oneDNN post-ops, the thread count, and constant
// weights reordered once and shared between cache entries that want the
// same layout (and, through onednn_weights.h, with every other step and
// session in the process that packs the same bytes the same way). Used by
// onednn_matmul.cc and onednn_conv.cc only.
#pragma once
#include <memory>
#include <ostream>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/errors.h"
#include "targets/onednn/onednn_kernels.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_post_ops.h"

namespace disco {

// Below this many flops a primitive runs on one thread (a few microseconds of
// work), and a copy below this many elements (1 MiB, about 50 us). OpenMP's
// threads spin briefly between regions (runtime/openmp_wait_policy.h), so a
// second thread costs little to bring in: at 4e6, mlp at batch 1 (two
// weight-bound products of 5e5 flops each) ran in 0.045 ms on two threads
// instead of 0.025 ms.
constexpr double kSerialFlops = 2e5;
constexpr int64_t kSerialCopyElements = int64_t{1} << 18;

dnnl::engine &onednn_engine();
dnnl::memory::dims plain_strides(const dnnl::memory::dims &dims);
dnnl::memory::desc plain_desc(const dnnl::memory::dims &dims);

// The epilogue of one run: BatchNorm expanded into Mul and Add, and every
// operand padded with leading 1s to the rank of the result.
struct Epilogue {
  std::vector<OnednnPostOp> ops;
  std::vector<PostOpOperand> operands;
  std::vector<int> inputs;  // per operand: the step input it is, or -1 for one computed here (BatchNorm's, scalars)
  // The post-ops, each binary one reading an operand of the layout given in
  // `operand_descs`. Operand `bias` (read by the first post-op, an Add) may
  // go to the primitive's bias instead, and the Add of operand `sum` may
  // become a sum post-op over a destination that already holds that operand
  // (-1: neither). `args[i]` is the execution argument of operand i, 0 for
  // the bias and the summed one.
  struct Lowered {
    dnnl::post_ops ops;
    std::vector<int> args;
  };
  Lowered lower(const std::vector<dnnl::memory::desc> &operand_descs, int bias, int sum) const;
};

class OnednnStep : public OnednnKernel {
 public:
  explicit OnednnStep(const PlanStep &step);
  void set_num_threads(int n) override;
  int64_t primitives_created() const override { return created_; }
  std::string implementation() const override { return impl_; }

 protected:
  template <typename... Args>
  [[noreturn]] void error(const Args &...args) const {
    fail("step ", label_, " (", call_, "): ", args...);
  }
  template <typename... Args>
  void check(bool ok, const Args &...args) const {
    if (!ok) error(args...);
  }
  // Input i, which must be present (an omitted one has no dtype; an empty one may have no data) and float32.
  const ExternTensor &input(const ExternCall &call, size_t i, const char *what) const;
  // The epilogue for a result of shape `dst`, its operands read from input `first` on.
  Epilogue epilogue(const ExternCall &call, size_t first, const std::vector<int64_t> &dst);
  // Every input's shape: what a cache entry is made for.
  static std::vector<int64_t> shape_key(const ExternCall &call);
  // The OpenMP team for a primitive of `flops` multiply-adds times two: one
  // thread below kSerialFlops (waking a second thread and meeting it at a
  // barrier costs more than it saves there), else the step's thread count.
  int team_for(double flops) const;
  // The same for a copy or pooling over `elements` floats: one thread below kSerialCopyElements.
  int team_for_copy(int64_t elements) const { return team_for(elements < kSerialCopyElements ? 0 : kSerialFlops); }
  // Call before creating or running a primitive: oneDNN sizes its OpenMP team from the calling thread.
  void use_team(int team) const;
  // Makes a primitive descriptor or runs a primitive, with oneDNN's errors named for this step.
  template <typename F>
  auto guarded(const char *what, F &&f) -> decltype(f()) {
    try {
      return f();
    } catch (const dnnl::error &e) {
      error("oneDNN could not ", what, ": ", e.what());
    }
  }
  // Runs `p`; a DNNL_ARG_SCRATCHPAD in `args` (add_scratchpad) is first
  // pointed at the step's own scratchpad memory.
  void execute(dnnl::primitive &p, const std::unordered_map<int, dnnl::memory> &args);
  // The scratchpad of a primitive made with user_scratchpad(attr) goes in its
  // args (a memory without data until execute binds it); none in library mode.
  // Why the step's own memory: with the library's mode, oneDNN 2.6 gives each
  // thread one scratchpad for all its primitives, and a primitive must then
  // run on the thread that made it. AOT runs take any idle kernel object
  // (extern_c_abi.cc), and Winograd convolutions, whose scratchpads are large,
  // crashed there (aot_onednn_concurrent_convnet). A step runs one primitive at
  // a time, so one buffer serves all of them.
  static void user_scratchpad(dnnl::primitive_attr &attr) { attr.set_scratchpad_mode(dnnl::scratchpad_mode::user); }
  static void add_scratchpad(const dnnl::primitive_desc_base &pd, std::unordered_map<int, dnnl::memory> &args);
  // Constant weights at `data` (laid out as `user`) reordered into `want`,
  // made once and shared while some cache entry holds them.
  std::shared_ptr<dnnl::memory> packed_weights(const dnnl::memory::desc &user, const void *data,
                                               const dnnl::memory::desc &want);
  void made_primitive(const dnnl::primitive_desc_base &pd);
  // The same for a kernel of disco's own made in a primitive's place (the
  // panel product), so that it is counted and DISCO_ONEDNN_VERBOSE names it.
  void made_own_kernel() { ++created_, fresh_ = true; }
  // Call after each run with what ran. With DISCO_ONEDNN_VERBOSE set, the
  // first run of each new primitive prints its step and implementation to
  // stderr (oneDNN's own ONEDNN_VERBOSE names no disco step).
  void ran(const std::string &impl);
  virtual void clear_cache() = 0;

  std::string label_, call_;
  std::vector<OnednnPostOp> post_ops_;
  int threads_ = 0;  // 0: OpenMP's default

 private:
  struct Packed {
    dnnl::memory::desc want;
    const void *data;
    std::weak_ptr<dnnl::memory> mem;
  };
  int64_t created_ = 0;
  std::string impl_;
  bool fresh_ = false;  // a primitive was made since the last run
  dnnl::stream stream_;
  std::vector<std::vector<float>> owned_;  // operands made per run: BatchNorm's scale and shift, scalars
  std::vector<Packed> packed_;
  Scratch scratchpad_;  // see add_scratchpad
};

}  // namespace disco

namespace disco {

// The kernels, made once per plan step (registered by install_onednn_runtime).
std::unique_ptr<ExternKernel> make_onednn_matmul_kernel(const PlanStep &step);
std::unique_ptr<ExternKernel> make_onednn_conv_kernel(const PlanStep &step);
std::unique_ptr<ExternKernel> make_onednn_pool_kernel(const PlanStep &step);

// "[2, 3]" when streamed into a message. It only refers to the shape, so the
// checks that run on every call format nothing unless they fail.
struct ShapeText {
  const std::vector<int64_t> &shape;
};
std::ostream &operator<<(std::ostream &os, const ShapeText &t);
inline ShapeText shape_text(const std::vector<int64_t> &shape) { return {shape}; }

}  // namespace disco
