// panel_gemm.h's product on AVX2 + FMA: 16 ymm registers, so tiles of 6 rows
// x 16 columns (12 accumulators, two of B and one of A) over panels of [k,
// 16], in BLIS's loop order: for each block of K, each block of rows, each
// panel of a group of 8, each tile. The rows' K block (up to 192 rows) is
// read from the L2 by each panel of the group, and y's tiles carry the
// partial sums between K blocks. The alternative that panel_gemm.cc takes
// on AVX-512, whole K per tile and all of A read again per panel, reads A
// from the L3 once per panel when it outgrows the L2 (vit_b_16's [197, 768]
// is 605 KB).
//
// K blocks of up to 768: blocks of 256 (a panel's block, 16 KB, kept in the
// L1 across the tiles) measured 0.95-1.13x the time of whole-K at 77 to 197
// rows and K = 768 (12% slower at 77 rows), 0.94x at 600 rows; K = 3072 ran
// alike at blocks of 256 to 3072. (Interleaved, on a loaded machine.)
//
// Built with -mavx2 -mfma and without C++ library code, as panel_gemm.cc:
// run only where panel_gemm_avx2_cpu() says so.
#include <immintrin.h>

#include "targets/onednn/avx2_ops.h"
#include "targets/onednn/panel_gemm.h"
#include "targets/onednn/panel_math.h"

namespace disco {

namespace {

constexpr int64_t kWidth = kPanelColumnsAvx2;
constexpr int kTileRows = 6;
constexpr int64_t kKBlock = 768;    // at most; K splits into near-equal blocks
constexpr int64_t kRowBlock = 192;  // at most, in near-equal blocks of whole tiles
constexpr int64_t kGroup = 8;       // panels per group: each reads the rows' K block from the L2

inline __m256 operand_at(const PanelOp &op, int64_t r, int64_t n, int64_t cols) {
  const float *p = op.operand + r * op.row_stride + n * op.col_stride;
  return op.col_stride == 0 ? _mm256_set1_ps(*p) : Avx2::load(p, cols);
}

// A tile: R rows from `row` times K [k0, k0 + kn) of the panel at column
// `col` (`bp`: that K block of it), `cols` of whose 16 columns are in y.
// The accumulators start from zero and, after the first K block, y's partial
// sums are added to them at the end: started from y's values under a branch,
// GCC kept them in memory, zeroed by `rep stos` and loaded back (14% of the
// tile's perf samples at K = 96). The last K block applies the epilogue.
template <int R>
inline void tile(const PanelGemm &g, int64_t row, int64_t k0, int64_t kn, const float *bp, int64_t col, int64_t cols,
                 bool first, bool last) {
  __m256 c0[R], c1[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) c0[r] = c1[r] = _mm256_setzero_ps();
  float *y = g.y + row * g.ldy + col;
  const float *a[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) a[r] = g.a + (row + r) * g.lda + k0;
  // Unrolled by 4: one step is 12 FMAs (6 cycles of the two FMA pipes) in 25
  // instructions with the loop's own, which the front end barely issues in
  // time; 0.93-0.98 of the time unrolled (thread CPU time, interleaved, at
  // [64..394] x [768, 2048] x [768..2304]).
#pragma GCC unroll 4
  for (int64_t k = 0; k < kn; ++k) {
    const __m256 b0 = _mm256_load_ps(bp + k * kWidth), b1 = _mm256_load_ps(bp + k * kWidth + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a[r] + k);
      c0[r] = _mm256_fmadd_ps(ar, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(ar, b1, c1[r]);
    }
  }
  // The tile as 2R vectors, row by row: [2r] columns 0-7 of row r, [2r + 1] 8-15.
  __m256 v[2 * R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    v[2 * r] = first ? c0[r] : _mm256_add_ps(c0[r], Avx2::load(y + r * g.ldy, cols));
    v[2 * r + 1] = first ? c1[r] : _mm256_add_ps(c1[r], Avx2::load(y + r * g.ldy + 8, cols - 8));
  }
  // The epilogue step by step over the whole tile (panel_math::epilogue_each),
  // inlined: called per vector, GELU's chain ran latency-bound, one vector
  // after another (with the change above, [3136, 96] x [96, 384] with bias
  // and GELU went from 11.0 to 6.0-9.1 ms of thread CPU time, loaded
  // machine). y is written only after it: an epilogue operand may be y's
  // own memory.
  if (last && g.num_ops > 0)
    panel_math::epilogue_each<Avx2>(v, 2 * R, g.ops, g.num_ops, [&](const PanelOp &op, int j) {
      const int64_t half = (j % 2) * 8;
      return operand_at(op, row + j / 2, col + half, cols - half);
    });
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    Avx2::store(y + r * g.ldy, v[2 * r], cols);
    Avx2::store(y + r * g.ldy + 8, v[2 * r + 1], cols - 8);
  }
}

// The tiles of rows [m0, m1) on one panel's K block.
void tiles(const PanelGemm &g, int64_t m0, int64_t m1, int64_t k0, int64_t kn, const float *bp, int64_t col,
           int64_t cols, bool first, bool last) {
  int64_t r = m0;
  for (; r + kTileRows <= m1; r += kTileRows) tile<kTileRows>(g, r, k0, kn, bp, col, cols, first, last);
  switch (m1 - r) {
    case 5: tile<5>(g, r, k0, kn, bp, col, cols, first, last); break;
    case 4: tile<4>(g, r, k0, kn, bp, col, cols, first, last); break;
    case 3: tile<3>(g, r, k0, kn, bp, col, cols, first, last); break;
    case 2: tile<2>(g, r, k0, kn, bp, col, cols, first, last); break;
    case 1: tile<1>(g, r, k0, kn, bp, col, cols, first, last); break;
    default: break;
  }
}

// n split into `parts` near-equal pieces, each a multiple of `unit` but the last.
int64_t piece(int64_t n, int64_t most, int64_t unit) {
  const int64_t parts = (n + most - 1) / most, size = (n + parts - 1) / parts;
  return (size + unit - 1) / unit * unit;
}

// Panels [p0, p1), all of their rows and K.
void compute_group(const PanelGemm &g, int64_t p0, int64_t p1) {
  const int64_t kb = piece(g.k, g.k_block > 0 ? g.k_block : kKBlock, 1);
  const int64_t mb = piece(g.rows, kRowBlock, kTileRows);
  for (int64_t k0 = 0; k0 < g.k; k0 += kb) {
    const int64_t kn = g.k - k0 < kb ? g.k - k0 : kb;
    for (int64_t m0 = 0; m0 < g.rows; m0 += mb) {
      const int64_t m1 = g.rows - m0 < mb ? g.rows : m0 + mb;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t col = p * kWidth, cols = g.n - col < kWidth ? g.n - col : kWidth;
        tiles(g, m0, m1, k0, kn, g.panels + (p * g.k + k0) * kWidth, col, cols, k0 == 0, k0 + kn == g.k);
      }
    }
  }
}

}  // namespace

void panel_eltwise_avx2(float *data, int64_t n, const PanelOp *ops, int num_ops) {
  panel_math::eltwise_pass<Avx2, __m256, 8>(data, n, ops, num_ops, Avx2::load, Avx2::store);
}

void panel_gemm_avx2(const PanelGemm &g, int64_t first, int64_t last) {
  for (int64_t p = first; p < last; p += kGroup) compute_group(g, p, last - p < kGroup ? last : p + kGroup);
}

void panel_gemm_shared_avx2(const PanelGemm &g, int64_t first, int64_t last, bool up, int64_t *claimed) {
  const int64_t groups = (last - first + kGroup - 1) / kGroup;
  // A builtin rather than std::atomic: no library code in this file.
  for (int64_t mine = 0; __atomic_fetch_add(claimed, 1, __ATOMIC_RELAXED) < groups; ++mine) {
    const int64_t i = up ? mine : groups - 1 - mine, p = first + i * kGroup;
    compute_group(g, p, last - p < kGroup ? last : p + kGroup);
  }
}

}  // namespace disco
