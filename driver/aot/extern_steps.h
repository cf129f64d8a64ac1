// The C for a plan's extern steps (oneDNN's matmul and conv, ...) in an AOT
// driver: each step is made once, on the first run, through the C entry of
// runtime/extern_c_abi.h (after the backends' install functions register
// their kernels), and called with the buffers' host pointers and extents.
// The step objects are shared by every thread: concurrent runs each take a
// kernel object of their own from the step's pool.
#pragma once
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/plan.h"

namespace disco::aot {

// Where the driver keeps a buffer's extents (ONNX order) and the symbols.
struct ExternLayout {
  std::vector<int> extents_at;       // buffer id -> offset in the driver's `sh` array
  std::map<std::string, int> slots;  // symbol -> index in the driver's `s` array
};

bool has_extern_steps(const Plan &plan);

// The declarations the calls need: runtime/extern_c_abi.h's types and
// functions, the install functions, each step's params, and
// `static void disco_extern_init(void)`, run once through `g_extern_once`.
void emit_extern_decls(std::ostream &o, const Plan &plan, const ExternLayout &l,
                       const std::vector<std::string> &install_functions);

// The body of step `i` (an extern step): fills the tensors, runs it, and on a
// failure `return`s disco_fail's -1 with the step's label and the message.
// `gpu`: the driver of a GPU library, whose kernels leave their results on the
// device: inputs a kernel wrote there come back to the host first, outputs are
// marked written on the host (the next kernel copies them up), and a failure
// sets `disco_rc` and jumps to `disco_device_done`, which frees the device
// allocations.
void emit_extern_call(std::ostream &o, const Plan &plan, size_t i, const ExternLayout &l, bool gpu = false);

}  // namespace disco::aot
