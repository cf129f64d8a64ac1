// The child-process executor's protocol and failure paths, without a GPU:
// an empty plan round-trips through a real disco-exec; the child's errors come
// back as disco::Error with its message; a child that exits or cannot start is
// an error naming it, never a crash of the calling process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "frontend/errors.h"
#include "runtime/child_executor.h"
#include "tests/support/error_message.h"

namespace disco {
namespace {

Plan empty_plan() {
  Plan p;
  p.name = "empty";
  return p;
}

using testing::error_message;

TEST(ChildExecutor, RunsAPlanInDiscoExecAndReturnsItsErrors) {
  ChildExecutor child(empty_plan(), "/nonexistent-library-dir");
  std::vector<TensorData> outputs;
  SymbolValues symbols{{"stale", 1}};
  child.run({}, outputs, &symbols);
  EXPECT_TRUE(outputs.empty());
  EXPECT_TRUE(symbols.empty());
  const std::string e = error_message([&] {
    std::vector<TensorData> outs;
    SymbolValues s;
    child.run({TensorData(DType::F32, {2})}, outs, &s);
  });
  EXPECT_NE(e.find("takes 0 inputs, got 1"), std::string::npos) << e;
  child.set_profiling(true);
  EXPECT_TRUE(child.profile().empty());  // no steps
}

TEST(ChildExecutor, AChildThatExitsIsAnErrorNotACrash) {
  setenv("DISCO_EXEC", "/bin/true", 1);
  const std::string e = error_message([] { ChildExecutor child(empty_plan(), "/tmp"); });
  unsetenv("DISCO_EXEC");
  EXPECT_NE(e.find("disco-exec ended"), std::string::npos) << e;
}

TEST(ChildExecutor, AMissingBinaryIsAnError) {
  setenv("DISCO_EXEC", "/nonexistent/disco-exec", 1);
  const std::string e = error_message([] { ChildExecutor child(empty_plan(), "/tmp"); });
  unsetenv("DISCO_EXEC");
  EXPECT_NE(e.find("cannot start"), std::string::npos) << e;
}

TEST(ChildExecutor, PlansWithoutOpenclRunInProcess) {
  EXPECT_FALSE(plan_needs_child_process(empty_plan(), "/tmp"));
}

}  // namespace
}  // namespace disco
