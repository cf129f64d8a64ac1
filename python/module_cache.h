// Where the Python module keeps its compile cache.
//
// The compile cache keys each entry by the compiler's own binary, read from
// /proc/self/exe (driver/compile_model.cc), so that a rebuilt disco never
// reuses an old disco's kernels. In Python, /proc/self/exe is the
// interpreter, which does not change when disco does; so the module keeps its
// entries under <cache root>/python-<checksum of this extension module>.
#pragma once
#include <string>

#include "driver/compile_model.h"

namespace disco::python {

// cache_root(opts) + "/python-" + the checksum of the file this code was loaded from.
std::string module_cache_root(const CompileOptions &opts);

}  // namespace disco::python
