// The C entry to extern kernels (runtime/extern_c_abi.h) that AOT drivers
// call: a step made from its call name and params runs with plain pointers,
// concurrent runs each get a kernel object of their own, and every failure
// comes back as a message, never as an exception through C.
#include "runtime/extern_c_abi.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"

namespace disco {
namespace {

std::atomic<int> g_made{0};

// y = x * factor + n (the symbol), and it fails loudly when one object runs twice at once.
class ScaleKernel : public ExternKernel {
 public:
  explicit ScaleKernel(const PlanStep &step) : factor_(static_cast<float>(param_float(step, "factor"))) { ++g_made; }
  void run(const ExternCall &call) override {
    DISCO_CHECK(!busy_.exchange(true), "one kernel object ran twice at once");
    const float n = static_cast<float>(*call.symbols.find("n"));
    const auto &x = call.inputs.at(0);
    DISCO_CHECK(x.num_elements() >= 0 && x.shape.size() == 1, "test.scale wants a vector");
    if (x.shape[0] == 13) {
      busy_ = false;
      fail("test.scale refuses 13 elements");
    }
    float *y = static_cast<float *>(call.outputs.at(0).data);
    for (int64_t i = 0; i < x.shape[0]; ++i) {
      y[i] = static_cast<const float *>(x.data)[i] * factor_ + n;
      if (i % 64 == 0) std::this_thread::yield();  // gives another run the chance to overlap
    }
    busy_ = false;
  }

 private:
  float factor_;
  std::atomic<bool> busy_{false};
};

void install() {
  static const bool done = [] {
    ExternKernelRegistry::global().add("test.scale", [](const PlanStep &s) { return std::make_unique<ScaleKernel>(s); });
    return true;
  }();
  (void)done;
}

disco_extern_step *make(const char *factor, std::string *error) {
  install();
  const char *keys[] = {"factor"};
  const char *values[] = {factor};
  char buf[256] = "";
  disco_extern_step *s = disco_extern_create("test.scale", "Mul_7", 1, keys, values, buf, sizeof buf);
  *error = buf;
  return s;
}

int run(disco_extern_step *s, std::vector<float> &x, std::vector<float> &y, int64_t n, std::string *error) {
  const int64_t shape[1] = {static_cast<int64_t>(x.size())};
  const disco_extern_tensor in{x.data(), static_cast<int32_t>(DType::F32), 1, shape, 0};
  const disco_extern_tensor out{y.data(), static_cast<int32_t>(DType::F32), 1, shape, 0};
  const char *names[] = {"n"};
  char buf[256] = "";
  const int rc = disco_extern_run(s, 1, &in, 1, &out, 1, names, &n, 1, buf, sizeof buf);
  *error = buf;
  return rc;
}

TEST(ExternCAbi, RunsAStepWithPlainPointers) {
  std::string error;
  disco_extern_step *s = make("2.5", &error);
  ASSERT_NE(s, nullptr) << error;
  std::vector<float> x = {1, 2, 3}, y(3);
  ASSERT_EQ(run(s, x, y, 4, &error), 0) << error;
  EXPECT_FLOAT_EQ(y[0], 6.5f);
  EXPECT_FLOAT_EQ(y[2], 11.5f);
  disco_extern_destroy(s);
}

TEST(ExternCAbi, ConcurrentRunsEachGetTheirOwnKernelObject) {
  std::string error;
  disco_extern_step *s = make("3", &error);
  ASSERT_NE(s, nullptr) << error;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  std::vector<std::string> errors(6);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        std::vector<float> x(500 + 37 * t), y(x.size());
        for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17) - t;
        if (run(s, x, y, t, &errors[t]) != 0) {
          ++wrong;
          return;
        }
        for (size_t i = 0; i < x.size(); ++i)
          if (y[i] != x[i] * 3 + t) ++wrong;
      }
    });
  for (auto &th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << errors[0] << errors[1] << errors[2];
  disco_extern_destroy(s);
}

TEST(ExternCAbi, FailuresComeBackAsMessages) {
  install();
  char buf[256] = "";
  EXPECT_EQ(disco_extern_create("nobody.op", "Conv_3", 0, nullptr, nullptr, buf, sizeof buf), nullptr);
  EXPECT_NE(std::string(buf).find("'nobody.op'"), std::string::npos) << buf;
  EXPECT_NE(std::string(buf).find("Conv_3"), std::string::npos) << buf;

  std::string error;
  EXPECT_EQ(make("not a number", &error), nullptr);
  EXPECT_NE(error.find("factor"), std::string::npos) << error;

  disco_extern_step *s = make("1", &error);
  ASSERT_NE(s, nullptr) << error;
  std::vector<float> x(13), y(13);
  EXPECT_NE(run(s, x, y, 0, &error), 0);
  EXPECT_NE(error.find("refuses 13"), std::string::npos) << error;
  std::vector<float> x2(4, 1.f), y2(4);
  ASSERT_EQ(run(s, x2, y2, 0, &error), 0) << "a step runs again after a failure: " << error;
  EXPECT_FLOAT_EQ(y2[3], 1.f);
  disco_extern_destroy(s);
}

}  // namespace
}  // namespace disco
