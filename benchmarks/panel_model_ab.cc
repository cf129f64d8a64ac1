// Whole models with the panel product (targets/onednn/panel_gemm.h) on and
// off, in one process, alternating run by run: two sessions of one model,
// the second made and first run with DISCO_PANEL_GEMM=0 (so its matmul steps
// keep oneDNN's products), then rounds of one run of each. On a shared,
// loaded machine whose speed changes within seconds, runs of separate
// processes differed more than the two kinds did; here each round's ratio
// compares runs a few hundred milliseconds apart.
//
// panel_model_ab [--no-cache] [--switch NAME[=VALUE]] MODEL.onnx INPUT.npy THREADS ROUNDS [EXPECTED.npy]
// --switch names another environment switch of the same kind (read when a
// step first runs, "0" turns its feature off), e.g. DISCO_WINOGRAD or
// DISCO_ELTWISE_TAIL; the columns are then that feature on and off. With
// =VALUE the second column's session is made with NAME=VALUE instead of 0.
// --no-cache compiles both sessions in this process: for a switch read at
// compile time, which the compile cache's key does not hold.
// Prints one markdown row: median ms with the panel product, without, the
// median of the rounds' ratios and its quartiles; with EXPECTED.npy, both
// sessions' outputs checked against it (rtol 1e-3, atol 1e-4).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver/session.h"
#include "runtime/npy.h"

namespace {

double run_ms(disco::Session &s, const std::vector<disco::TensorData> &in, std::vector<disco::TensorData> &out) {
  const auto t0 = std::chrono::steady_clock::now();
  s.run(in, out);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The largest |got - want| over its tolerance; above 1 fails.
double worst_error(const disco::TensorData &got, const disco::TensorData &want) {
  if (got.shape != want.shape) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double w = want.as<float>()[i];
    worst = std::max(worst, std::fabs(got.as<float>()[i] - w) / (1e-4 + 1e-3 * std::fabs(w)));
  }
  return worst;
}

}  // namespace

int main(int argc, char **argv) {
  std::string feature = "DISCO_PANEL_GEMM", off_value = "0";
  disco::CompileOptions opts;
  for (bool more = true; more && argc > 1;) {
    more = false;
    if (std::string(argv[1]) == "--no-cache") {
      opts.use_cache = false;
      argv += 1, argc -= 1, more = true;
    } else if (argc > 2 && std::string(argv[1]) == "--switch") {
      feature = argv[2];
      if (const size_t eq = feature.find('='); eq != std::string::npos) {
        off_value = feature.substr(eq + 1);
        feature = feature.substr(0, eq);
      }
      argv += 2, argc -= 2, more = true;
    }
  }
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: panel_model_ab [--no-cache] [--switch NAME[=VALUE]] MODEL.onnx INPUT.npy THREADS ROUNDS "
                 "[EXPECTED.npy]\n");
    return 2;
  }
  const std::string model = argv[1];
  const std::vector<disco::TensorData> in = {disco::read_npy(argv[2])};
  const int threads = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  // The session without the feature first: its steps make their primitives
  // at the first run, reading the switch then.
  setenv(feature.c_str(), off_value.c_str(), 1);
  disco::Session off = disco::Session::from_onnx(model, opts);
  off.set_num_threads(threads);
  std::vector<disco::TensorData> out_off, out_on;
  off.run(in, out_off);
  unsetenv(feature.c_str());
  disco::Session on = disco::Session::from_onnx(model, opts);
  on.set_num_threads(threads);
  on.run(in, out_on);
  std::string check = "-";
  if (argc > 5) {
    const disco::TensorData want = disco::read_npy(argv[5]);
    const double e_on = worst_error(out_on[0], want), e_off = worst_error(out_off[0], want);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %.2f / %.2f", e_on <= 1 && e_off <= 1 ? "ok" : "FAIL", e_on, e_off);
    check = buf;
  }
  std::vector<double> t_on, t_off, ratio;
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first, so neither always follows the other.
    double a, b;
    if (r % 2 == 0) {
      a = run_ms(on, in, out_on), b = run_ms(off, in, out_off);
    } else {
      b = run_ms(off, in, out_off), a = run_ms(on, in, out_on);
    }
    t_on.push_back(a), t_off.push_back(b), ratio.push_back(a / b);
  }
  std::string shape;
  for (int64_t d : in[0].shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
  std::printf("| %s | %s | %d | %.1f | %.1f | **%.2f** | %.2f-%.2f | %s |\n", model.substr(model.rfind('/') + 1).c_str(),
              shape.c_str(), threads, quantile(t_on, 0.5), quantile(t_off, 0.5), quantile(ratio, 0.5),
              quantile(ratio, 0.25), quantile(ratio, 0.75), check.c_str());
  return 0;
}
