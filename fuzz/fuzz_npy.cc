// Fuzzes the .npy reader (runtime/npy.h): any bytes as a .npy file.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_guard.h"
#include "runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = disco_fuzz::scratch_path("input.npy");
  disco_fuzz::write_bytes(path, data, size);
  disco_fuzz::guard([&] { (void)disco::read_npy(path); });
  return 0;
}
