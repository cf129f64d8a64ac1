// recurrent_cell.h's step on AVX2 + FMA (8 units a vector, 16 registers:
// LSTM chunks of 3 rows, GRU of 4). Built with -mavx2 -mfma and without C++
// library code: run only where panel_gemm_avx2_cpu() holds.
#include "targets/onednn/avx2_ops.h"
#include "targets/onednn/recurrent_cell_impl.h"

namespace disco {

void recurrent_step_avx2(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                         const float *h_prev, float *h_next, float *cell) {
  recurrent_cell::step<Avx2>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
}

}  // namespace disco
