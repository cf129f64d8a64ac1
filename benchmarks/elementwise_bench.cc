// Issue #21's elementwise benchmark: every float unary op at (16, 512, 768)
// on one thread, in ns per element, against a plain copy of the same tensor
// (an Identity: its kernel reads and writes every element). The issue asks
// each op within 2x of the copy's time. Each op is a one-node graph with a
// symbolic batch, compiled once with the host backend; op and copy alternate
// in blocks, and each side's time is the median over its blocks (this VM's
// speed drifts by 10-50%).
//
//   elementwise_bench [--filter TEXT | --only NAME,NAME] [--blocks N] [--range LO,HI] [--out FILE.md]
//
// --range gives every op the inputs [LO, HI] instead of its own range: far
// out (say -1000,-20) it shows an op whose results underflow or saturate
// through arithmetic below the normal floats, which costs a microcode assist
// per vector.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/host_bench.h"
#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "runtime/executor.h"

namespace {

using namespace disco;
using bench::compile_host;
using bench::interleaved;

struct UnaryOp {
  std::string name;  // the row's label
  std::string op;
  std::map<std::string, Attribute> attrs{};
  float lo = -4, hi = 4;  // the inputs' range: inside the op's domain
  int opset = 17;
};

std::vector<UnaryOp> unary_ops() {
  const float pi = 3.14159265f;
  std::vector<UnaryOp> ops = {
      {"Relu", "Relu"},   {"Neg", "Neg"},         {"Abs", "Abs"},
      {"Exp", "Exp"},     {"Log", "Log", {}, 0.01f, 100},
      {"Sqrt", "Sqrt", {}, 0, 100},               {"Reciprocal", "Reciprocal", {}, 0.01f, 100},
      {"Tanh", "Tanh"},   {"Sigmoid", "Sigmoid"}, {"Erf", "Erf"},
      {"Sin", "Sin", {}, -2 * pi, 2 * pi},        {"Cos", "Cos", {}, -2 * pi, 2 * pi},
      {"Tan", "Tan", {}, -1.5f, 1.5f},            {"Asin", "Asin", {}, -1, 1},
      {"Acos", "Acos", {}, -1, 1},                {"Atan", "Atan"},
      {"Sinh", "Sinh"},   {"Cosh", "Cosh"},       {"Asinh", "Asinh"},
      {"Acosh", "Acosh", {}, 1, 100},             {"Atanh", "Atanh", {}, -0.999f, 0.999f},
      {"Floor", "Floor"}, {"Ceil", "Ceil"},       {"Round", "Round"},
      {"Sign", "Sign"},   {"Elu", "Elu"},         {"Selu", "Selu"},
      {"Celu", "Celu"},   {"LeakyRelu", "LeakyRelu"}, {"ThresholdedRelu", "ThresholdedRelu"},
      {"HardSigmoid", "HardSigmoid"},             {"HardSwish", "HardSwish"},
      {"Softplus", "Softplus"},                   {"Softsign", "Softsign"},
      {"Mish", "Mish"},   {"Shrink", "Shrink", {{"lambd", attr_float(0.5f)}}},
  };
  ops.push_back({"Gelu (erf)", "Gelu", {}, -4, 4, 20});
  ops.push_back({"Gelu (tanh)", "Gelu", {{"approximate", attr_string("tanh")}}, -4, 4, 20});
  // Results that underflow to 0, as a mask's -1e9 or -inf gives them: an
  // arithmetic result in the denormals costs a microcode assist per vector.
  ops.push_back({"Exp (below -104)", "Exp", {}, -1e9f, -200});
  ops.push_back({"Sigmoid (below -104)", "Sigmoid", {}, -1e9f, -200});
  // Rows of 768 over the last axis; the second's every element but a row's
  // largest is a mask's -1e9 away from it.
  ops.push_back({"Softmax", "Softmax", {}, -4, 4, 13});
  ops.push_back({"Softmax (masked at -1e9)", "Softmax", {}, -1e9f, 0, 13});
  return ops;
}

// (batch, 512, 768) floats spread evenly over [lo, hi], in a shuffled order.
TensorData input(int64_t batch, float lo, float hi) {
  TensorData t(DType::F32, {batch, 512, 768});
  float *p = t.mutable_as<float>();
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) p[i] = lo + (hi - lo) * static_cast<float>((i * 7919) % n) / static_cast<float>(n);
  return t;
}

// The load average (1, 5 and 15 minutes) from /proc/loadavg: the table says
// how busy the machine was, since the ratios move with it.
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return f ? a + " " + b + " " + c : "unknown";
}

// Whether `name` is one of the comma-separated names of `list`.
bool listed(const std::string &list, const std::string &name) {
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

Graph one_node(const UnaryOp &u) {
  GraphBuilder b(u.opset);
  auto x = b.input("x", DType::F32, {Dim::symbol("batch"), 512, 768});
  b.output(b.op(u.op, {x}, u.attrs));
  return b.build();
}

}  // namespace

int main(int argc, char **argv) {
  std::string out_path, filter, only;
  int blocks = 7;
  std::optional<std::pair<float, float>> range;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: elementwise_bench [--filter TEXT | --only NAME,NAME] [--blocks N] [--range LO,HI] [--out FILE.md]\n\n"
          "ns per element of every float unary op at (16, 512, 768) on one thread (host kernels),\n"
          "against a plain copy (Identity), interleaved in blocks; the ratio to the copy per op.\n"
          "--filter: only ops whose name contains TEXT. --only: only the ops of these exact names\n"
          "(Tan, not Tanh). --blocks: blocks per side (default 7).\n"
          "--range: every op's inputs spread over [LO, HI] instead of its own range.\n"
          "--out: also write the table as markdown.\n");
      return 0;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--blocks" && i + 1 < argc) {
      blocks = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--range" && i + 1 < argc) {
      float lo = 0, hi = 0;
      char comma = 0;
      std::istringstream r(argv[++i]);
      if (!(r >> lo >> comma >> hi) || comma != ',' || !(lo <= hi)) {
        std::fprintf(stderr, "elementwise_bench: --range wants LO,HI with LO <= HI, got '%s'\n", argv[i]);
        return 2;
      }
      range = std::make_pair(lo, hi);
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "elementwise_bench: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    const int64_t batch = 16;
    const double elements = static_cast<double>(batch) * 512 * 768;
    auto copy = compile_host(one_node({"Identity", "Identity"}), "ebench");
    copy->exec->set_num_threads(1);
    std::ostringstream md;
    const std::string load_before = load_average();
    md << "| op | ns / element | copy ns / element | op / copy |\n|---|---|---|---|\n";
    std::printf("%s", md.str().c_str());
    std::fflush(stdout);
    int over = 0, rows = 0;
    for (const UnaryOp &u : unary_ops()) {
      if (u.name.find(filter) == std::string::npos || (!only.empty() && !listed(only, u.name))) continue;
      auto op = compile_host(one_node(u), "ebench");
      op->exec->set_num_threads(1);
      const std::vector<TensorData> in{range ? input(batch, range->first, range->second) : input(batch, u.lo, u.hi)};
      auto [t_op, t_copy] = interleaved(*op->exec, in, *copy->exec, in, blocks);
      const double ratio = t_op / t_copy;
      over += ratio > 2;
      ++rows;
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %.3f | %.3f | %.2f%s |\n", u.name.c_str(), t_op / elements * 1e9,
                    t_copy / elements * 1e9, ratio, ratio > 2 ? " (over 2x)" : "");
      std::printf("%s", line);
      std::fflush(stdout);
      md << line;
    }
    md << "\n" << over << " of " << rows << " ops over 2x the copy's time.\n";
    md << "Load average (1, 5, 15 min) at the start " << load_before << ", at the end " << load_average() << ".\n";
    std::printf("\n%d of %d ops over 2x the copy's time.\n", over, rows);
    std::printf("Load average at the start %s, at the end %s.\n", load_before.c_str(), load_average().c_str());
    if (!out_path.empty()) std::ofstream(out_path) << md.str();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "elementwise_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
