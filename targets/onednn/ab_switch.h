// The oneDNN glue's A/B switches: DISCO_PANEL_GEMM, DISCO_ELTWISE_TAIL, DISCO_OWN_GLOBAL_AVG,
// DISCO_WINOGRAD, DISCO_WINOGRAD_PER_IMAGE and DISCO_PADDED_BLOCKS, each "0" to turn its feature off,
// for measuring it against the path without it in the same build. Read each
// time a step makes a primitive for a new shape, so that one process can
// hold sessions of either kind (benchmarks/panel_model_ab.cc --switch).
// DISCO_PADDED_HELD (tensors held padded, onednn_layout.h) is read when the
// backend compiles, and DISCO_RECURRENT_MATMUL (RNN/GRU/LSTM input
// projections as oneDNN matmuls, lowering/recurrent_projection.h) when it
// rewrites the graph, and DISCO_RECURRENCE_STEP (their recurrences as
// onednn.recurrence steps) when it matches: A/B runs of these take --no-cache.
#pragma once
#include <cstdlib>
#include <cstring>

namespace disco {

// True where the environment sets `name` to "0".
inline bool switched_off(const char *name) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, "0") == 0;
}

}  // namespace disco
