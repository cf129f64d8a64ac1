// recurrent_cell.h's step on AVX-512 (16 units a vector, 32 registers: LSTM
// chunks of 6 rows, GRU of 8). Built with -mavx512f -mfma and without C++
// library code: run only where panel_gemm_cpu() holds.
#include "targets/onednn/avx512_ops.h"
#include "targets/onednn/recurrent_cell_impl.h"

namespace disco {

void recurrent_step_avx512(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                           const float *h_prev, float *h_next, float *cell) {
  recurrent_cell::step<Avx512>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
}

}  // namespace disco
