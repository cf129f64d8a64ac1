#include "targets/onednn/eltwise_tail.h"

#include <omp.h>

#include <algorithm>

#include "targets/onednn/ab_switch.h"

namespace disco {

namespace {

// A unary post-op as a panel step; false for binary ones and those panel_math has no step for.
bool unary_panel_op(const OnednnPostOp &op, PanelOp *p) { return op.num_operands() == 0 && to_panel_op(op, p); }

bool costly(OnednnPostOp::Kind k) {
  return k == OnednnPostOp::Sigmoid || k == OnednnPostOp::Swish || k == OnednnPostOp::GeluErf;
}

// Floats per thread's share below which a second thread costs more than it saves.
constexpr int64_t kMinShare = 16384;

}  // namespace

EltwiseTail take_eltwise_tail(Epilogue &e) {
  EltwiseTail tail;
  // DISCO_ELTWISE_TAIL=0 leaves the whole epilogue to oneDNN (A/B runs and tests).
  if ((!panel_gemm_cpu() && !panel_gemm_avx2_cpu()) || switched_off("DISCO_ELTWISE_TAIL")) return tail;
  size_t start = e.ops.size();
  PanelOp p;
  while (start > 0 && unary_panel_op(e.ops[start - 1], &p)) --start;
  while (start < e.ops.size() && !costly(e.ops[start].kind)) ++start;  // cheap leading steps stay fused
  for (size_t k = start; k < e.ops.size(); ++k) {
    unary_panel_op(e.ops[k], &p);
    tail.ops.push_back(p);
  }
  e.ops.resize(start);
  return tail;
}

void run_eltwise_tail(const EltwiseTail &tail, float *data, int64_t n, int team) {
  if (tail.empty() || n <= 0) return;
  const bool avx512 = panel_gemm_cpu();
  auto run = [&](int64_t first, int64_t last) {
    if (avx512)
      panel_eltwise(data + first, last - first, tail.ops.data(), static_cast<int>(tail.ops.size()));
    else
      panel_eltwise_avx2(data + first, last - first, tail.ops.data(), static_cast<int>(tail.ops.size()));
  };
  team = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(team, n / kMinShare)));
  if (team == 1) {
    run(0, n);
    return;
  }
#pragma omp parallel num_threads(team)
  {
    // Shares in whole cache lines, so that no two threads write one line.
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads(), lines = (n + 15) / 16;
    run(std::min(n, lines * t / nt * 16), std::min(n, lines * (t + 1) / nt * 16));
  }
}

}  // namespace disco
