// What a program links beside NAME.a, and NAME.pc, the pkg-config file that
// says so. kLinkFlags is the one definition: NAME.h's comment and NAME.pc both
// print it (cmake/disco.cmake's disco_add_model lists the same libraries).
#pragma once
#include <string>
#include <vector>

namespace disco::aot {

// Halide's runtime needs threads, dlopen (GPU drivers) and libm; the driver is
// C, so no C++ runtime.
inline constexpr const char *kLinkFlags = "-lpthread -ldl -lm";

// The flags of a library whose backends' glue (Backend::aot_glue) needs
// `glue_flags` too (oneDNN: -ldnnl -lgomp -lstdc++): those, then kLinkFlags.
std::string link_flags(const std::vector<std::string> &glue_flags);

// NAME.pc beside NAME.a and NAME.h. Its prefix is ${pcfiledir}, the folder the
// file is in, so the file holds no absolute path: it stays byte-identical
// across output folders and keeps working when the folder moves. `flags`:
// link_flags()'s.
std::string pkg_config_source(const std::string &name, const std::string &model, const std::string &target,
                              const std::string &flags = kLinkFlags);

}  // namespace disco::aot
