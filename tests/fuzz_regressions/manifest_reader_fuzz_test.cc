// Cache manifests (driver/cache_manifest.h) that point outside their entry:
// verify_cache_manifest checksummed whatever a listed name reached, so a
// manifest line naming ../../dev/zero with size 0 read /dev/zero forever
// (a libFuzzer timeout in fuzz/fuzz_plan_cache). Each is now reported.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "driver/cache_manifest.h"
#include "tests/support/command.h"

namespace disco {
namespace {

std::string verify_with(const std::string &dir, const std::string &lines) {
  std::ofstream(dir + "/manifest.txt", std::ios::binary) << "disco cache manifest 2\n" << lines;
  alarm(30);  // the old code never returns: fail by SIGALRM rather than hang the suite
  const auto what = verify_cache_manifest(dir);
  alarm(0);
  return what ? *what : "";
}

TEST(ManifestReaderFuzz, ANameOutsideTheEntryIsDamageNotARead) {
  const std::string dir = testing::make_temp_dir("manifest-fuzz");
  EXPECT_EQ(verify_with(dir, "../../../../../../../../dev/zero 0 0000000000000000 1 2.3\n"), "manifest.txt is damaged");
}

TEST(ManifestReaderFuzz, AListedFileThatIsNotARegularFileIsMissing) {
  const std::string dir = testing::make_temp_dir("manifest-fuzz");
  ASSERT_EQ(symlink("/dev/zero", (dir + "/kernels.so").c_str()), 0);
  EXPECT_EQ(verify_with(dir, "kernels.so 0 0000000000000000 1 2.3\n"), "'kernels.so' is missing");
}

TEST(ManifestReaderFuzz, AWholeEntryStillVerifies) {
  const std::string dir = testing::make_temp_dir("manifest-fuzz");
  std::ofstream(dir + "/plan.txt") << "a plan";
  write_cache_manifest(dir);
  EXPECT_FALSE(verify_cache_manifest(dir).has_value());
  std::ofstream(dir + "/plan.txt") << "another";
  EXPECT_TRUE(verify_cache_manifest(dir).has_value());
}

}  // namespace
}  // namespace disco
