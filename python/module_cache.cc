#include "python/module_cache.h"

#include <dlfcn.h>

#include "frontend/content_hash.h"
#include "frontend/errors.h"
#include "frontend/file_checksum.h"

namespace disco::python {

namespace {

const std::string &module_id() {
  static const std::string id = [] {
    Dl_info info{};
    DISCO_CHECK(dladdr(reinterpret_cast<void *>(&module_cache_root), &info) && info.dli_fname,
                "cannot find the file of disco's Python module to key the compile cache");
    const auto sum = file_checksum(info.dli_fname);
    DISCO_CHECK(sum, "cannot read disco's Python module '", info.dli_fname, "' to key the compile cache");
    return hex64(*sum);
  }();
  return id;
}

}  // namespace

std::string module_cache_root(const CompileOptions &opts) { return cache_root(opts) + "/python-" + module_id(); }

}  // namespace disco::python
