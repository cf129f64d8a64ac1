#include "targets/onednn/panel_gemm.h"

#include <immintrin.h>

#include "targets/onednn/avx512_ops.h"
#include "targets/onednn/panel_math.h"

namespace disco {

namespace {

inline __m512 operand_at(const PanelOp &op, int64_t r, int64_t n) {
  const float *p = op.operand + r * op.row_stride + n * op.col_stride;
  return op.col_stride == 0 ? _mm512_set1_ps(*p) : _mm512_loadu_ps(p);
}

// The epilogue on 16 values of row r from column n.
inline __m512 epilogue(__m512 v, const PanelGemm &g, int64_t r, int64_t n) {
  return panel_math::epilogue<Avx512>(v, g.ops, g.num_ops, [&](const PanelOp &op) { return operand_at(op, r, n); });
}

// R rows of A times one panel: 2R accumulators of 16 lanes, B's two vectors
// per k shared by the R rows. Lines [pf, pf_end) of the next panel are
// fetched into the L2 meanwhile, spread evenly over the k loop, so that the
// panel's whole compute hides its fetch.
template <int R>
inline void block(const PanelGemm &g, int64_t row, const float *panel, const char *pf, const char *pf_end,
                  int64_t col) {
  __m512 c0[R], c1[R];
  for (int r = 0; r < R; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  const float *a = g.a + row * g.lda;
  const int64_t lines = (pf_end - pf) / 64;
  int64_t due = 0;
  for (int64_t k = 0; k < g.k; ++k) {
    const __m512 b0 = _mm512_load_ps(panel + k * kPanelColumns), b1 = _mm512_load_ps(panel + k * kPanelColumns + 16);
    for (due += lines; due >= g.k; due -= g.k, pf += 64) _mm_prefetch(pf, _MM_HINT_T1);
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r * g.lda + k]);
      c0[r] = _mm512_fmadd_ps(ar, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(ar, b1, c1[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float *y = g.y + (row + r) * g.ldy + col;
    _mm512_storeu_ps(y, epilogue(c0[r], g, row + r, col));
    _mm512_storeu_ps(y + 16, epilogue(c1[r], g, row + r, col + 16));
  }
}

// Panel p, prefetching panel `next` (none when null) over its blocks of rows.
void compute_panel(const PanelGemm &g, int64_t p, const float *next_panel) {
  const int64_t panel_floats = g.k * kPanelColumns;
  const int64_t blocks = g.rows / 8 + (g.rows % 8) / 4 + g.rows % 4;
  const float *panel = g.panels + p * panel_floats;
  const int64_t col = p * kPanelColumns;
  // The next panel's lines, split evenly between this panel's blocks of rows.
  const char *next = reinterpret_cast<const char *>(next_panel);
  const int64_t next_bytes = next_panel ? panel_floats * static_cast<int64_t>(sizeof(float)) : 0;
  int64_t b = 0;
  auto part = [&](int64_t i) { return next + (next_bytes / 64 * i / blocks) * 64; };
  int64_t row = 0;
  for (; row + 8 <= g.rows; row += 8, ++b) block<8>(g, row, panel, part(b), part(b + 1), col);
  for (; row + 4 <= g.rows; row += 4, ++b) block<4>(g, row, panel, part(b), part(b + 1), col);
  for (; row < g.rows; ++row, ++b) block<1>(g, row, panel, part(b), part(b + 1), col);
}

}  // namespace

void panel_eltwise(float *data, int64_t n, const PanelOp *ops, int num_ops) {
  panel_math::eltwise_pass<Avx512, __m512, 16>(data, n, ops, num_ops, Avx512::load, Avx512::store);
}

void panel_gemm(const PanelGemm &g, int64_t first, int64_t last) {
  const int64_t panel_floats = g.k * kPanelColumns;
  for (int64_t p = first; p < last; ++p) compute_panel(g, p, p + 1 < last ? g.panels + (p + 1) * panel_floats : nullptr);
}

void panel_gemm_shared(const PanelGemm &g, int64_t first, int64_t last, bool up, int64_t *claimed) {
  const int64_t panel_floats = g.k * kPanelColumns, count = last - first;
  // A builtin rather than std::atomic: no library code in this file.
  for (int64_t mine = 0; __atomic_fetch_add(claimed, 1, __ATOMIC_RELAXED) < count; ++mine) {
    const int64_t p = up ? first + mine : last - 1 - mine, next = up ? p + 1 : p - 1;
    compute_panel(g, p, next >= first && next < last ? g.panels + next * panel_floats : nullptr);
  }
}

}  // namespace disco
