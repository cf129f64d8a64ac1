// Generates NAME.h, the C header of an AOT library: the entry points with
// their arguments in graph order, the metadata, and the Halide buffer types
// (so that users need no Halide headers).
#pragma once
#include <string>

#include "driver/aot/link_flags.h"
#include "runtime/plan.h"

namespace disco::aot {

struct HeaderInfo {
  std::string name;    // C prefix of every symbol
  std::string model;   // the ONNX file name, without folders
  std::string target;  // the Halide target the kernels were compiled for
  std::string link_flags = kLinkFlags;  // link_flags.h: what a program links beside NAME.a
};

std::string header_source(const Plan &plan, const HeaderInfo &info);

}  // namespace disco::aot
