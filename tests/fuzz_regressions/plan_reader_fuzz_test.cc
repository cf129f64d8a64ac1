// Plan files that fuzz/fuzz_plan_cache found escaping Plan::load as std::
// exceptions (std::stoll, std::stoull), and the neighbours of each: counts
// and lengths that would allocate without bound, and dims nested deeply
// enough to overflow the stack. Each must be a disco::Error naming the fault.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "runtime/plan.h"
#include "tests/support/command.h"

namespace disco {
namespace {

// Plan::load of `text`; the disco::Error's message, or "" if it loaded.
std::string load_error(const std::string &text) {
  static const std::string dir = testing::make_temp_dir("plan-fuzz");
  const std::string path = dir + "/plan.txt";
  std::ofstream(path, std::ios::binary) << text;
  try {
    Plan::load(path);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(PlanReaderFuzz, TheFuzzersStringLengthThatIsNotANumberIsADiscoError) {
  const std::string bytes = read_file(DISCO_SOURCE_DIR "/fuzz/regressions/plan-string-length-not-a-number.txt");
  EXPECT_NE(load_error(bytes), "");
}

TEST(PlanReaderFuzz, NumbersThatAreNotIntegersOrOverflowAreDiscoErrors) {
  EXPECT_NE(load_error("disco-plan x"), "");
  EXPECT_NE(load_error("disco-plan 99999999999999999999").find("not a 64-bit integer"), std::string::npos);
  EXPECT_NE(load_error("disco-plan 5 -:"), "");
  EXPECT_NE(load_error("disco-plan 5 abc:x"), "");
}

TEST(PlanReaderFuzz, ACountBeyondTheFileIsAnErrorNotAnAllocation) {
  // Each would otherwise resize a vector to 2^62 or 2^64-1 entries.
  EXPECT_NE(load_error("disco-plan 5 1:a 0: 0: inputs 4611686018427387904").find("a count of 4611686018427387904"),
            std::string::npos);
  EXPECT_NE(load_error("disco-plan 5 1:a 0: 0: inputs -1").find("a count of -1"), std::string::npos);
  EXPECT_NE(load_error("disco-plan 5 1:a 0: 0: inputs 1 1:x 1 4611686018427387904"), "");
}

TEST(PlanReaderFuzz, StringLengthsBeyondTheFileAreErrors) {
  EXPECT_NE(load_error("disco-plan 5 18446744073709551615:a").find("not a 64-bit integer"), std::string::npos);
  EXPECT_NE(load_error("disco-plan 5 9223372036854775807:a").find("truncated string"), std::string::npos);
  EXPECT_NE(load_error("disco-plan 5 -1:a").find("truncated string"), std::string::npos);
}

TEST(PlanReaderFuzz, DimsAreCheckedLikeTheRestOfTheFile) {
  // parse_dim is the plan's dim reader.
  auto dim_error = [](const std::string &text) {
    try {
      parse_dim(text);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(dim_error("([-]"), "");                         // std::stoll("-")
  EXPECT_NE(dim_error("([1S-1:x])"), "");                    // a negative symbol length
  EXPECT_NE(dim_error("([1S18446744073709551615:x])"), "");  // one that wrapped p + n
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "([1D";
  EXPECT_NE(dim_error(deep).find("nested more than 64 deep"), std::string::npos);
  // What the reader accepts, it still reads: a symbol times 3 plus 2.
  EXPECT_EQ(parse_dim("([3S1:n][2])"), Dim::symbol("n") * Dim(3) + Dim(2));
}

}  // namespace
}  // namespace disco
