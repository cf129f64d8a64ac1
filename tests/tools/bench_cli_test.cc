// `disco bench` as a user meets it: help, the five latency fields, throughput,
// compile time (cold or cached) and peak memory, and clear errors for a
// missing or repeated input. Only the report's form and ordering are checked,
// never a speed.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/support/command.h"
#include "tests/support/model_files.h"

namespace disco {
namespace {

using Result = testing::CommandResult;

Result disco(const std::string &args) { return testing::run_command(std::string(DISCO_BINARY) + " " + args); }

// The number after `field ` in the latency line, or -1.
double latency_field(const std::string &out, const std::string &field) {
  std::smatch m;
  const std::regex re("latency \\(ms, [0-9]+ runs in [0-9.]+ s\\):.* " + field + " ([0-9]+\\.[0-9]+)");
  return std::regex_search(out, m, re) ? std::stod(m[1]) : -1;
}

TEST(BenchCli, HelpIsListedAndWorks) {
  Result top = disco("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.output.find("  bench MODEL"), std::string::npos) << top.output;
  Result r = disco("bench --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("usage: disco bench"), std::string::npos) << r.output;
  for (const char *option : {"--warmup", "--seconds", "--threads", "--shape", "--input", "--targets", "--no-cache"})
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
}

TEST(BenchCli, PrintsTheFiveLatencyFieldsInOrderThroughputCompileAndMemory) {
  const std::string model = testing::find_model("layernorm_softmax");
  ASSERT_FALSE(model.empty());
  Result r = disco("bench " + model + " --shape x=2x5x768 --threads 1 --warmup 0 --seconds 0 --no-cache");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency (ms, 10 runs in"), std::string::npos) << r.output;  // the minimum count
  const double mn = latency_field(r.output, "min"), p50 = latency_field(r.output, "p50"),
               p90 = latency_field(r.output, "p90"), p99 = latency_field(r.output, "p99"),
               mx = latency_field(r.output, "max");
  ASSERT_GT(mn, 0) << r.output;
  EXPECT_LE(mn, p50);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, mx);
  EXPECT_TRUE(std::regex_search(r.output, std::regex("throughput: [0-9]+\\.[0-9]+ inferences/s"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("compile: [0-9.]+ s, cold"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("peak memory: [0-9.]+ (KiB|MiB|GiB) resident"))) << r.output;
  EXPECT_NE(r.output.find("planned arena"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x[2,5,768]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("threads: 1"), std::string::npos) << r.output;
}

TEST(BenchCli, ASecondBenchTakesItsCompileFromTheCache) {
  const std::string model = testing::find_model("layernorm_softmax");
  ASSERT_FALSE(model.empty());
  const std::string ref = testing::references_dir() + "/layernorm_softmax.2.input.npy";
  ASSERT_EQ(disco("bench " + model + " --input x=" + ref + " --warmup 0 --seconds 0").exit_code, 0);
  Result r = disco("bench " + model + " --input x=" + ref + " --warmup 0 --seconds 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from the compile cache"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x[2,7,768]"), std::string::npos) << r.output;
}

TEST(BenchCli, AMissingInputIsAnErrorNamingIt) {
  const std::string model = testing::find_model("layernorm_softmax");
  Result r = disco("bench " + model + " --warmup 0 --seconds 0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("input 'x'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("latency"), std::string::npos) << r.output;
}

TEST(BenchCli, AnInputGivenTwiceOrANegativeTimeIsAUsageError) {
  const std::string model = testing::find_model("layernorm_softmax");
  Result twice = disco("bench " + model + " --shape x=1x2x768 --shape x=1x3x768");
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("more than once"), std::string::npos) << twice.output;
  Result negative = disco("bench " + model + " --shape x=1x2x768 --seconds -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
  EXPECT_NE(negative.output.find("--seconds"), std::string::npos) << negative.output;
}

}  // namespace
}  // namespace disco
