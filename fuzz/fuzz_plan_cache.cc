// Fuzzes what a compile cache entry is read through before anything of it
// is loaded: the plan file (Plan::load) and the entry's checksum manifest
// (verify_cache_manifest). The same bytes go to both readers, so seeds of
// either kind (plan.txt, manifest.txt) serve. The entry folder also holds
// two small files a manifest can name, so its size and checksum paths run.
#include <cstddef>
#include <cstdint>

#include "driver/cache_manifest.h"
#include "fuzz/fuzz_guard.h"
#include "runtime/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string plan = disco_fuzz::scratch_path("plan.txt");
  static const std::string manifest = disco_fuzz::scratch_path("manifest.txt");
  static const bool entry = [] {
    const uint8_t bytes[] = "0123456789abcdef0123456789abcdef!";
    disco_fuzz::write_bytes(disco_fuzz::scratch_path("kernels.so"), bytes, 33);
    disco_fuzz::write_bytes(disco_fuzz::scratch_path("constants.bin"), bytes, 0);
    return true;
  }();
  (void)entry;
  disco_fuzz::write_bytes(plan, data, size);
  disco_fuzz::guard([&] { (void)disco::Plan::load(plan); });
  disco_fuzz::write_bytes(manifest, data, size);
  disco_fuzz::guard([&] { (void)disco::verify_cache_manifest(manifest.substr(0, manifest.rfind('/'))); });
  return 0;
}
