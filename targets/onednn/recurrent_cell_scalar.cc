// recurrent_cell.h's step one float at a time, for CPUs without AVX2.
#include "targets/onednn/recurrent_cell_impl.h"
#include "targets/onednn/scalar_ops.h"

namespace disco {

void recurrent_step_scalar(const RecurrentCell &c, int64_t d, int64_t t, int64_t tile_begin, int64_t tile_end,
                           const float *h_prev, float *h_next, float *cell) {
  recurrent_cell::step<ScalarOps>(c, d, t, tile_begin, tile_end, h_prev, h_next, cell);
}

}  // namespace disco
