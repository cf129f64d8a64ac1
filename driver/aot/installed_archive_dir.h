// Where an installed disco keeps the runtime glue archives that `disco compile`
// and the Python module's Model.export put into AOT libraries (Backend::aot_glue).
//
// `cmake --install` puts them in the prefix's DISCO_INSTALL_ARCHIVE_DIR
// (cmake/install_dirs.cmake), found relative to the file that holds this code,
// so that an install can move (--prefix, a .deb's /usr):
// - in bin/disco (the main program), relative to /proc/self/exe's folder;
// - in the Python module, relative to the module's own file, which the dynamic
//   loader names (dladdr). Its /proc/self/exe is the Python interpreter, which
//   says nothing about where disco is installed.
#pragma once
#include <optional>
#include <string>

namespace disco::aot {

// The install's archive folder as seen from the binary holding this code, or
// nullopt when that binary cannot be found. Whether it holds the archives is
// the caller's question: a binary run from the build folder has no install.
std::optional<std::string> installed_archive_dir();

}  // namespace disco::aot
