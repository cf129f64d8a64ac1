// XIR codegen: a vitis_ai region as a quantized XIR graph, the input that
// the Vitis AI compiler (vai_c_xir) takes: `data` and `const` ops each
// followed by a `fix` op (fix_point, bit_width 8, round_mode DPU_ROUND), then
// conv2d / depthwise-conv2d / pools / eltwise / concat / upsample / flatten
// and relu ops, every one followed by its output's fix op. XIR is NHWC.
//
// libxir calls abort() on an invalid graph, so validate_for_xir() checks
// everything first (static shapes, known op kinds, fix positions, slot
// references); emit_xmodel() throws disco::Error and never reaches XIR with
// a region that fails it.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "targets/vitis_ai/quantize.h"
#include "targets/vitis_ai/region_program.h"

namespace disco::vitis_ai {

// True when disco was built with libxir (libxir-dev found at configure time).
bool xir_available();

struct XirRegion {
  std::string name;                           // the graph's name
  const QProgram *program = nullptr;
  std::vector<std::vector<int64_t>> shapes;   // per slot, ONNX order, static (from calibration)
  std::vector<std::string> slot_names;        // per slot
  std::function<ConstView(int step_input)> constant;
};

// Empty when the region is valid; else what is wrong.
std::string validate_for_xir(const XirRegion &r);
// Writes the graph to `path`; throws disco::Error when validation fails or XIR is not available.
void emit_xmodel(const XirRegion &r, const std::string &path);

}  // namespace disco::vitis_ai
