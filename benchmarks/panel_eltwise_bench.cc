// The oneDNN steps' elementwise tail (panel_eltwise: SiLU, Sigmoid, GELU on
// a conv's or product's result, targets/onednn/eltwise_tail.h) in ns per
// element, at inputs whose exp results are normal and at inputs where they
// underflow (below -87 for the sigmoid, beyond 13 for GELU). An arithmetic
// result below the normal floats costs a microcode assist per vector, so the
// second kind of input shows whether the tail avoids producing them
// (benchmarks/results/elementwise-underflow-2026-12-06.md). One thread; the
// best of 50 passes over 64K floats (in L2).
//
//   panel_eltwise_bench [--avx2]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "targets/onednn/panel_gemm.h"

namespace {

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char **argv) {
  using disco::PanelOp;
  bool avx2 = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf(
          "usage: panel_eltwise_bench [--avx2]\n\n"
          "ns per element of the oneDNN steps' elementwise tail (SiLU, Sigmoid, GELU) on one thread,\n"
          "at inputs in [-4, -3], [-20, -15] and [-200, -150]. --avx2: the AVX2 form (default: AVX-512).\n");
      return 0;
    } else if (!std::strcmp(argv[i], "--avx2")) {
      avx2 = true;
    } else {
      std::fprintf(stderr, "panel_eltwise_bench: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (avx2 ? !disco::panel_gemm_avx2_cpu() : !disco::panel_gemm_cpu()) {
    std::fprintf(stderr, "panel_eltwise_bench: this CPU has no %s\n", avx2 ? "AVX2 and FMA" : "AVX-512F");
    return 77;
  }
  const int n = 1 << 16;
  std::vector<float> src(n), buf(n);
  const struct {
    const char *name;
    PanelOp op;
  } ops[] = {{"SiLU", {PanelOp::Swish, 1}}, {"Sigmoid", {PanelOp::Sigmoid}}, {"GELU (erf)", {PanelOp::GeluErf}}};
  std::printf("| op | inputs | ns / element |\n|---|---|---|\n");
  for (const auto &o : ops)
    for (float lo : {-4.0f, -20.0f, -200.0f}) {
      const float hi = lo * 0.75f;  // the inputs spread over [lo, hi]
      for (int i = 0; i < n; ++i) src[i] = lo + (hi - lo) * static_cast<float>(i % 1000) / 1000;
      double best = 1e9;
      for (int r = 0; r < 50; ++r) {
        buf = src;
        const double t0 = now();
        if (avx2)
          disco::panel_eltwise_avx2(buf.data(), n, &o.op, 1);
        else
          disco::panel_eltwise(buf.data(), n, &o.op, 1);
        best = std::min(best, now() - t0);
      }
      std::printf("| %s | [%g, %g] | %.3f |\n", o.name, lo, hi, best / n * 1e9);
    }
  return 0;
}
