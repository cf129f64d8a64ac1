#include "targets/onednn/panel_gemm.h"

#include <immintrin.h>

namespace disco {

namespace {

// e^x for x <= 0 (the argument of GELU's erf below): 2^k e^r with
// k = round(x / ln 2), ln 2 in two parts (Cephes'), a degree-6 polynomial.
inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  static const float kP[] = {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  for (float c : kP) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, k);
}

// x * 0.5 * (1 + erf(x / sqrt 2)), erf by Abramowitz and Stegun 7.1.26
// (absolute error below 1.5e-7).
inline __m512 gelu_erf(__m512 x) {
  const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678f));
  const __m512 az = _mm512_abs_ps(z);
  const __m512 t =
      _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(az, _mm512_set1_ps(0.3275911f), _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(1.061405429f);
  static const float kA[] = {-1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f};
  for (float c : kA) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(c));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(az, az)));
  const __m512 erf_abs = _mm512_fnmadd_ps(p, e, _mm512_set1_ps(1.0f));
  // erf is odd: the sign of z.
  const __mmask16 negative = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 erf = _mm512_mask_sub_ps(erf_abs, negative, _mm512_setzero_ps(), erf_abs);
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), _mm512_add_ps(erf, _mm512_set1_ps(1.0f)));
}

inline __m512 operand_at(const PanelOp &op, int64_t r, int64_t n) {
  const float *p = op.operand + r * op.row_stride + n * op.col_stride;
  return op.col_stride == 0 ? _mm512_set1_ps(*p) : _mm512_loadu_ps(p);
}

// The epilogue on 16 values of row r from column n.
inline __m512 epilogue(__m512 v, const PanelGemm &g, int64_t r, int64_t n) {
  for (int i = 0; i < g.num_ops; ++i) {
    const PanelOp &op = g.ops[i];
    switch (op.kind) {
      case PanelOp::Add:
        v = _mm512_add_ps(v, operand_at(op, r, n));
        break;
      case PanelOp::Mul:
        v = _mm512_mul_ps(v, operand_at(op, r, n));
        break;
      case PanelOp::Relu: {
        const __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        v = _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(op.a));
        break;
      }
      case PanelOp::GeluErf:
        v = gelu_erf(v);
        break;
      case PanelOp::Linear:
        v = _mm512_fmadd_ps(v, _mm512_set1_ps(op.a), _mm512_set1_ps(op.b));
        break;
    }
  }
  return v;
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
