// recurrent_cell.h's step, written once over panel_math.h's vector
// operations (Ops: V, kLanes, kRegisters, load(p, n), store(p, v, n) and
// panel_math's set), for the ISA files to instantiate. Templates only: each
// file that includes it is built for its own ISA.
#pragma once

#include "targets/onednn/panel_math.h"
#include "targets/onednn/recurrent_cell.h"

namespace disco::recurrent_cell {

// Rows of a batch chunk: the tile's G x rows sums take at most 3/4 of the
// vector registers (the rest hold R's G vectors and a broadcast of h), and
// at most 8 rows.
template <class Ops>
constexpr int max_rows(int gates) {
  const int by_registers = (Ops::kRegisters * 3 / 4) / gates;
  return by_registers < 1 ? 1 : by_registers > 8 ? 8 : by_registers;
}

// Rows [b0, b0 + R) of hidden tile `tile` at step t of direction d.
template <class Ops, RecurrentCellKind K, int R>
inline void tile_rows(const RecurrentCell &c, int64_t d, int64_t t, int64_t b0, int64_t tile, const float *h_prev,
                      float *h_next, float *cell) {
  using V = typename Ops::V;
  constexpr int G = recurrent_gates(K);
  constexpr int W = Ops::kLanes;
  const int64_t H = c.hidden, P = c.padded(), j0 = tile * W, n = H - j0 < W ? H - j0 : W;
  // The sums h·R^T of the tile's units of every gate, over all of k.
  V acc[R][G];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) acc[r][g] = Ops::splat(0.0f);
  const float *rp = c.packed_r + d * c.packed_r_floats() + tile * H * G * W;
  const float *hp = h_prev + b0 * P;
  for (int64_t k = 0; k < H; ++k, rp += G * W) {
    V rv[G];
    for (int g = 0; g < G; ++g) rv[g] = Ops::load(rp + g * W, W);
    for (int r = 0; r < R; ++r) {
      const V h = Ops::splat(hp[r * P + k]);
      for (int g = 0; g < G; ++g) acc[r][g] = Ops::fmadd(h, rv[g], acc[r][g]);
    }
  }
  // The cell's update on them, row by row.
  const int64_t D = c.directions, T = c.steps, B = c.batch, row_floats = D * G * H;
  for (int r = 0; r < R; ++r) {
    const int64_t b = b0 + r;
    const float *x = c.projections + (c.batch_first ? b * T + t : t * B + b) * row_floats + d * G * H + j0;
    V v[G];
    for (int g = 0; g < G; ++g) v[g] = Ops::add(acc[r][g], Ops::load(x + g * H, n));
    V h;
    if constexpr (K == RecurrentCellKind::Rnn) {
      h = panel_math::tanh<Ops>(v[0]);
    } else if constexpr (K == RecurrentCellKind::Gru) {
      // Gates z, r, h; h~ = tanh(x_h + r (h·Rh^T + Rbh)), h = (1 - z) h~ + z h_prev.
      const V z = panel_math::sigmoid<Ops>(v[0]), rr = panel_math::sigmoid<Ops>(v[1]);
      const V rbh = c.gru_rbh ? Ops::load(c.gru_rbh + d * P + j0, W) : Ops::splat(0.0f);
      const V xh = Ops::load(x + 2 * H, n);
      const V hh = panel_math::tanh<Ops>(Ops::fmadd(rr, Ops::add(acc[r][2], rbh), xh));
      const V hp_j = Ops::load(h_prev + b * P + j0, W);
      h = Ops::fmadd(z, Ops::sub(hp_j, hh), hh);
    } else {
      // Gates i, o, f, c: c = f c_prev + i tanh(x_c), h = o tanh(c).
      const V i = panel_math::sigmoid<Ops>(v[0]), o = panel_math::sigmoid<Ops>(v[1]),
              f = panel_math::sigmoid<Ops>(v[2]), cc = panel_math::tanh<Ops>(v[3]);
      float *cp = cell + b * P + j0;
      const V cn = Ops::fmadd(f, Ops::load(cp, W), Ops::mul(i, cc));
      Ops::store(cp, cn, W);
      h = Ops::mul(o, panel_math::tanh<Ops>(cn));
    }
    Ops::store(h_next + b * P + j0, h, W);
    if (c.y) {
      float *y = c.y + (c.batch_first ? (b * T + t) * D + d : (t * D + d) * B + b) * H + j0;
      Ops::store(y, h, n);
    }
  }
}

// Rows [b0, b0 + rows) (1 to max_rows) of one tile.
template <class Ops, RecurrentCellKind K>
inline void chunk(const RecurrentCell &c, int64_t d, int64_t t, int64_t b0, int rows, int64_t tile, const float *h_prev,
                  float *h_next, float *cell) {
  constexpr int G = recurrent_gates(K);
  constexpr int M = max_rows<Ops>(G);
  switch (rows) {
#define DISCO_RECURRENT_ROWS(n)                                                          \
  case n:                                                                                \
    if constexpr (n <= M) tile_rows<Ops, K, n>(c, d, t, b0, tile, h_prev, h_next, cell); \
    break;
    DISCO_RECURRENT_ROWS(1)
    DISCO_RECURRENT_ROWS(2)
    DISCO_RECURRENT_ROWS(3)
    DISCO_RECURRENT_ROWS(4)
    DISCO_RECURRENT_ROWS(5)
    DISCO_RECURRENT_ROWS(6)
    DISCO_RECURRENT_ROWS(7)
    DISCO_RECURRENT_ROWS(8)
#undef DISCO_RECURRENT_ROWS
    default:
      break;
  }
}

// Tile by tile, the batch in near-equal chunks of at most max_rows rows
// inside: each chunk reads the tile's rows of R (H G W floats, 64 KiB for an
// LSTM of 256 units on AVX-512) from the L1 or L2, and the step streams R
// from where it lives once. With the chunks outside the tiles, each chunk
// streamed all of R: at 512 units (4 MiB, past the L2) a batch of 8 read it
// twice from the L3 a step (1.4x the time).
template <class Ops, RecurrentCellKind K>
inline void step_of(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                    const float *h_prev, float *h_next, float *cell) {
  constexpr int G = recurrent_gates(K);
  constexpr int M = max_rows<Ops>(G);
  const int64_t B = c.batch, chunks = (B + M - 1) / M;
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    int64_t b0 = 0;
    for (int64_t i = 0; i < chunks; ++i) {
      const int rows = static_cast<int>(B / chunks + (i < B % chunks ? 1 : 0));
      chunk<Ops, K>(c, d, t, b0, rows, tile, h_prev, h_next, cell);
      b0 += rows;
    }
  }
}

template <class Ops>
inline void step(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                 const float *h_prev, float *h_next, float *cell) {
  switch (c.kind) {
    case RecurrentCellKind::Rnn:
      return step_of<Ops, RecurrentCellKind::Rnn>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
    case RecurrentCellKind::Gru:
      return step_of<Ops, RecurrentCellKind::Gru>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
    case RecurrentCellKind::Lstm:
      return step_of<Ops, RecurrentCellKind::Lstm>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
  }
}

}  // namespace disco::recurrent_cell
