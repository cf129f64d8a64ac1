// Session::run from several threads at once (issue #23, threads): each run
// gets an executor of its own from the session's pool, so concurrent runs of
// different shapes give the same answers as a plain loop, with a oneDNN step
// (MatMul, whose kernel caches primitives per shape) and Halide kernels
// (Add, Relu, Mul) in one model.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

constexpr int64_t kIn = 24, kOut = 12;

// y = Relu((x * x) @ w + b) * x2 + x2, x: [n, 24], x2: [n, 12] (n symbolic).
// The Mul before the MatMul is a Halide kernel; oneDNN may fuse what follows.
struct Model {
  TensorData w = testing::random_f32({kIn, kOut}, 7, 0.5f);
  TensorData b = testing::random_f32({kOut}, 8, 0.5f);
  Graph graph() const {
    GraphBuilder g;
    auto x = g.input("x", DType::F32, {Dim::symbol("n"), kIn});
    auto x2 = g.input("x2", DType::F32, {Dim::symbol("n"), kOut});
    auto mm = g.op("MatMul", {g.op("Mul", {x, x}), g.constant("w", w)});
    auto r = g.op("Relu", {g.op("Add", {mm, g.constant("b", b)})});
    g.output(g.op("Add", {g.op("Mul", {r, x2}), x2}));
    return g.build();
  }
  // The plain loop the test compares against.
  std::vector<float> reference(const TensorData &x, const TensorData &x2) const {
    const int64_t n = x.shape[0];
    const float *px = x.as<float>(), *px2 = x2.as<float>(), *pw = w.as<float>(), *pb = b.as<float>();
    std::vector<float> y(n * kOut);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < kOut; ++j) {
        double acc = pb[j];
        for (int64_t k = 0; k < kIn; ++k) acc += double(px[i * kIn + k]) * px[i * kIn + k] * pw[k * kOut + j];
        y[i * kOut + j] = float(std::max(acc, 0.0) * px2[i * kOut + j] + px2[i * kOut + j]);
      }
    return y;
  }
};

CompileOptions options() {
  CompileOptions o;
  o.use_cache = false;
  return o;
}

TEST(SessionThreads, ConcurrentRunsOfDifferentShapesMatchAPlainLoop) {
  Model m;
  Session s(m.graph(), "threads", "", options());
  // The default backends put the MatMul on oneDNN and the rest in Halide kernels.
  bool onednn = false, halide = false;
  for (const auto &st : s.last_compile().plan.steps) {
    onednn = onednn || st.extern_call.rfind("onednn", 0) == 0;
    halide = halide || !st.kernel.empty();
  }
  ASSERT_TRUE(onednn) << "no oneDNN step in the plan";
  ASSERT_TRUE(halide) << "no Halide kernel in the plan";

  constexpr int kThreads = 8, kRuns = 25;
  std::atomic<int> start{0};
  std::atomic<int> failures{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.fetch_add(1);
      while (start.load() < kThreads) std::this_thread::yield();  // all threads run at once
      try {
        std::vector<TensorData> outputs;  // reused across runs, as a server would
        for (int i = 0; i < kRuns; ++i) {
          // A different n per thread and run, so executors switch shapes under one another.
          const int64_t n = 1 + (t * 13 + i * 7) % 61;
          const uint32_t seed = 1000 + t * 100 + i;
          TensorData x = testing::random_f32({n, kIn}, seed);
          TensorData x2 = testing::random_f32({n, kOut}, seed + 50000);
          s.run({x, x2}, outputs);
          const std::vector<float> want = m.reference(x, x2);
          if (outputs.size() != 1 || outputs[0].shape != std::vector<int64_t>{n, kOut}) {
            errors[t] = "run " + std::to_string(i) + ": wrong output shape";
            failures.fetch_add(1);
            return;
          }
          const float *got = outputs[0].as<float>();
          for (int64_t e = 0; e < n * kOut; ++e)
            if (!(std::fabs(got[e] - want[e]) <= 1e-4f * (1 + std::fabs(want[e])))) {
              errors[t] = "run " + std::to_string(i) + " (n=" + std::to_string(n) + ") element " +
                          std::to_string(e) + ": " + std::to_string(got[e]) + ", expected " + std::to_string(want[e]);
              failures.fetch_add(1);
              return;
            }
        }
      } catch (const std::exception &e) {
        errors[t] = e.what();
        failures.fetch_add(1);
      }
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(s.compiles(), 1) << "one symbolic compile serves every shape and thread";

  // After the concurrent runs, a run on this thread still answers right.
  TensorData x = testing::random_f32({5, kIn}, 3), x2 = testing::random_f32({5, kOut}, 4);
  auto out = s.run({x, x2});
  const std::vector<float> want = m.reference(x, x2);
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{5, kOut}));
  for (int64_t e = 0; e < 5 * kOut; ++e) EXPECT_NEAR(out[0].as<float>()[e], want[e], 1e-4f * (1 + std::fabs(want[e])));
}

TEST(SessionThreads, AFailedRunGivesItsExecutorBackAndOthersGoOn) {
  Model m;
  Session s(m.graph(), "threads_err", "", options());
  // n disagrees between x and x2: refused naming the input, before any kernel runs.
  TensorData bad_x = testing::random_f32({3, kIn}, 1), bad_x2 = testing::random_f32({4, kOut}, 2);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0}, right{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        if ((t + i) % 2 == 0) {
          try {
            s.run({bad_x, bad_x2});
          } catch (const std::exception &) {
            errors.fetch_add(1);
          }
          continue;
        }
        TensorData x = testing::random_f32({2 + t, kIn}, 10 * t + i), x2 = testing::random_f32({2 + t, kOut}, 99 + i);
        auto out = s.run({x, x2});
        const std::vector<float> want = m.reference(x, x2);
        bool ok = out[0].shape == std::vector<int64_t>{2 + t, kOut};
        for (size_t e = 0; ok && e < want.size(); ++e)
          ok = std::fabs(out[0].as<float>()[e] - want[e]) <= 1e-4f * (1 + std::fabs(want[e]));
        if (ok) right.fetch_add(1);
      }
    });
  for (auto &th : threads) th.join();
  EXPECT_EQ(errors.load(), 30);
  EXPECT_EQ(right.load(), 30);
}

TEST(SessionThreads, CompilesAtRunTimeForValueInputsHappenOnceEach) {
  // Reshape's target is a graph input: the session compiles once per target value, at run time,
  // under its lock, while other threads run the compiles they already have.
  GraphBuilder g;
  auto x = g.input("x", DType::F32, {Dim::symbol("n"), 6});
  auto target = g.input("target", DType::I64, {2});
  g.output(g.op("Relu", {g.op("Reshape", {x, target})}));
  Session s(g.build(), "threads_values", "", options());
  std::vector<std::string> errors(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 6; ++i) {
          const int64_t n = 1 + (t + 2 * i) % 5, cols = (t + i) % 2 ? 3 : 2;
          TensorData in = testing::random_f32({n, 6}, 77 * t + i);
          auto out = s.run({in, testing::i64({2}, {-1, cols})});
          if (out[0].shape != std::vector<int64_t>{n * 6 / cols, cols}) throw std::runtime_error("wrong shape");
          for (int64_t e = 0; e < n * 6; ++e)
            if (out[0].as<float>()[e] != std::max(in.as<float>()[e], 0.0f))
              throw std::runtime_error("element " + std::to_string(e) + " differs");
        }
      } catch (const std::exception &e) {
        errors[t] = e.what();
      }
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_EQ(s.compiles(), 2) << "one compile per target value";
}

}  // namespace
}  // namespace disco
