// A Plan is what the compiler hands the runtime: the inputs as declared, the
// run-time checks, buffers with symbolic sizes, and the kernel calls in order.
// It refers to kernels by name inside one shared library (JIT and cache) or
// one static library (AOT). Plans serialize to a small text file so that the
// compile cache and other processes can load them without the compiler.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/runtime_check.h"
#include "runtime/shape_binder.h"

namespace disco {

struct PlanBuffer {
  // Constants are weights that library backends read as buffers; their bytes
  // live once, in the plan's constants file, at `offset`.
  enum Kind { Input, Output, Temp, Constant } kind = Temp;
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  int io_index = -1;   // position among the inputs or outputs
  int64_t offset = 0;  // Constant: byte offset in the constants file
  // 0: the buffer holds the shape's own elements. Else dim 1 is allocated
  // rounded up to a multiple of this: a Temp that oneDNN steps hand each
  // other in a blocked layout whose last block of channels is zero-padded
  // (targets/onednn/onednn_layout.h). Only those steps read or write it.
  int64_t channel_multiple = 0;
};

// The channel count buffer `b` allocates for `channels` channels: rounded up to
// its channel_multiple (where that is above 1), saturating at INT64_MAX.
int64_t allocated_channels(const PlanBuffer &b, int64_t channels);
// The shape buffer `b` is allocated as for a value of `shape`: `shape` with
// channel_multiple applied (dim 1 rounded up, saturating at INT64_MAX, which
// the size checks then refuse).
std::vector<int64_t> allocated_shape(const PlanBuffer &b, const std::vector<int64_t> &shape);
// Its bytes; nothing where a dim is negative or the size overflows (tensor_bytes).
std::optional<int64_t> buffer_bytes(const PlanBuffer &b, const std::vector<int64_t> &shape);

struct PlanStep {
  // One of three things:
  //  - a compiled kernel of the plan's library (`kernel`);
  //  - an op the runtime runs itself because its output sizes depend on data
  //    (`host_op`); it binds the symbols of its output dims;
  //  - a call into a backend's runtime glue (`extern_call`, e.g.
  //    "onednn.matmul"), configured by `params`; see runtime/extern_kernel.h.
  std::string kernel;                // symbol prefix: the library exports <kernel>_argv
  std::string host_op;               // e.g. "NonZero"; empty for kernels
  std::map<std::string, int64_t> host_attrs;
  std::string extern_call;
  std::map<std::string, std::string> params;
  std::string label;                 // the nodes it computes, for --verbose and errors
  std::vector<int> inputs;           // buffer ids
  // A kernel's int32 scalar arguments, in ABI order, each evaluated from the
  // model's symbols before the call: a symbol, or an extent that the kernel
  // takes as a parameter of its own (targets/host/shape_pattern.h).
  std::vector<Dim> symbols;
  std::vector<int> outputs;          // buffer ids
};

struct Plan {
  std::string name;
  std::vector<InputSpec> inputs;
  std::vector<std::string> output_names;
  std::vector<RuntimeCheck> checks;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<int> input_buffers, output_buffers;
  std::string library;    // file name of the kernel library, next to the plan file; empty: none
  std::string constants;  // file name of the constants file, next to the plan file; empty: none

  void save(const std::string &path) const;
  static Plan load(const std::string &path);
};

// Per buffer: whether a compiled (Halide) kernel reads or writes it. Such a
// buffer holds at most kMaxKernelBufferElements (frontend/checked_size.h);
// a oneDNN call's or a host op's alone is not limited to that.
std::vector<char> kernel_buffers(const Plan &plan);

// Dims in a form that round-trips exactly (names may hold any character).
std::string serialize_dim(const Dim &d);
Dim parse_dim(const std::string &text);

}  // namespace disco
