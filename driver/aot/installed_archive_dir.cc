#include "driver/aot/installed_archive_dir.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace disco::aot {

namespace fs = std::filesystem;

namespace {

struct ThisBinary {
  fs::path file;
  bool main_program;  // else a shared object loaded into it
};

// The binary that holds this code. The main program's name is "" in the
// loader's list (and dladdr would give argv[0], which may be a bare name found
// on PATH), so its file is read from /proc/self/exe, as before the Python module.
std::optional<ThisBinary> this_binary() {
  Dl_info info{};
  link_map *map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(&installed_archive_dir), &info, reinterpret_cast<void **>(&map),
               RTLD_DL_LINKMAP) ||
      !map || !map->l_name)
    return std::nullopt;
  std::error_code ec;
  const bool main_program = map->l_name[0] == '\0';
  fs::path file = main_program ? fs::read_symlink("/proc/self/exe", ec) : fs::weakly_canonical(map->l_name, ec);
  if (ec) return std::nullopt;
  return ThisBinary{std::move(file), main_program};
}

}  // namespace

std::optional<std::string> installed_archive_dir() {
  const auto binary = this_binary();
  if (!binary) return std::nullopt;
  // A shared object holding this code is the Python module: disco's own
  // libraries are static, and python/CMakeLists.txt installs the module.
  const fs::path from_binary =
      binary->main_program ? DISCO_ARCHIVE_DIR_FROM_BINDIR : DISCO_ARCHIVE_DIR_FROM_PYTHON_MODULE_DIR;
  return (binary->file.parent_path() / from_binary).lexically_normal().string();
}

}  // namespace disco::aot
