// The fixed part of every generated driver (C): error text, the shared
// capture of Halide's messages, floor division, buffer checks and the arena
// placement. The model-specific part follows it (driver_gen.cc).
#pragma once

namespace disco::aot {

extern const char *const kDriverPrelude;

}  // namespace disco::aot
