// onednn.recurrence: an RNN, GRU or LSTM node over its input projections
// (lowering/recurrent_projection.h), step by step with recurrent_cell.h's
// kernel. Inputs: the projections, R, B (GRU's Rb of gate h), initial_h,
// initial_c (each but the first two may be omitted). Outputs: those of Y,
// Y_h and Y_c the node has, in that order (param "results": their
// positions). Params: cell (rnn, gru, lstm), directions (1 or 2), reverse
// (one reverse direction), hidden, layout (ONNX's).
//
// Threads: two directions go to two threads, each with its R in its own
// core's L2. One direction splits its hidden tiles between two threads, met
// at a barrier after each step, where a step is worth it (as the host's
// Halide recurrence decides: 0.5 MFLOP a step, or an R past most of an L2).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "targets/onednn/onednn_step.h"
#include "targets/onednn/panel_gemm.h"
#include "targets/onednn/recurrent_cell.h"

namespace disco {

namespace {

constexpr double kSplitStepFlops = 0.5e6;
constexpr double kSplitStepBytes = 1.5 * (1 << 20);

class RecurrenceKernel : public OnednnStep {
 public:
  explicit RecurrenceKernel(const PlanStep &step) : OnednnStep(step) {
    const std::string cell = param_str(step, "cell");
    check(cell == "rnn" || cell == "gru" || cell == "lstm", "unknown cell '", cell, "'");
    kind_ = cell == "rnn" ? RecurrentCellKind::Rnn : cell == "gru" ? RecurrentCellKind::Gru : RecurrentCellKind::Lstm;
    directions_ = param_int(step, "directions");
    check(directions_ == 1 || directions_ == 2, "directions must be 1 or 2, got ", directions_);
    reverse_ = param_flag(step, "reverse");
    hidden_ = param_int(step, "hidden");
    check(hidden_ > 0, "hidden must be positive, got ", hidden_);
    batch_first_ = param_int(step, "layout") != 0;
    results_ = param_positions(step, "results");
    for (size_t r : results_)
      check(r <= 2 && (r < 2 || kind_ == RecurrentCellKind::Lstm), "results names output ", r, " of the node");
    if (panel_gemm_cpu()) {
      lanes_ = 16, step_ = recurrent_step_avx512, impl_name_ = "recurrence disco avx512";
    } else if (panel_gemm_avx2_cpu()) {
      lanes_ = 8, step_ = recurrent_step_avx2, impl_name_ = "recurrence disco avx2";
    } else {
      lanes_ = 1, step_ = recurrent_step_scalar, impl_name_ = "recurrence disco scalar";
    }
  }
  size_t cached_shapes() const override { return 0; }
  void run(const ExternCall &call) override;

 private:
  void clear_cache() override {}
  void pack(const float *r, int64_t floats_per_direction);
  // Input i of shape `want` (ONNX's), or null where omitted.
  const float *optional_input(const ExternCall &call, size_t i, const std::vector<int64_t> &want, const char *what);

  RecurrentCellKind kind_ = RecurrentCellKind::Lstm;
  int64_t directions_ = 1, hidden_ = 0;
  bool reverse_ = false, batch_first_ = false;
  std::vector<size_t> results_;
  int lanes_ = 16;
  void (*step_)(const RecurrentCell &, int64_t, int64_t, int64_t, int64_t, const float *, float *, float *) = nullptr;
  std::string impl_name_;               // what ran(), per the CPU's ISA
  const float *packed_from_ = nullptr;  // the constant R that packed_ holds
  std::vector<float> packed_storage_, states_, rbh_;
  float *packed_ = nullptr;  // in packed_storage_, 64-byte aligned
};

const float *RecurrenceKernel::optional_input(const ExternCall &call, size_t i, const std::vector<int64_t> &want,
                                              const char *what) {
  if (i >= call.inputs.size() || !call.inputs[i].data) return nullptr;
  const ExternTensor &x = input(call, i, what);
  check(x.shape == want, what, " must be ", shape_text(want), ", got ", shape_text(x.shape));
  return static_cast<const float *>(x.data);
}

// R [D, G*H, H] as [D][tiles][H (k)][G][W] (recurrent_cell.h), units past H zero.
void RecurrenceKernel::pack(const float *r, int64_t floats_per_direction) {
  const int64_t G = recurrent_gates(kind_), H = hidden_, W = lanes_, tiles = (H + W - 1) / W;
  // 64-byte aligned: malloc's 16 left every vector of R across two cache lines (2x the step's time).
  packed_storage_.assign(static_cast<size_t>(directions_ * floats_per_direction + 16), 0.0f);
  const auto at = reinterpret_cast<uintptr_t>(packed_storage_.data());
  packed_ = packed_storage_.data() + (64 - at % 64) % 64 / sizeof(float);
  for (int64_t d = 0; d < directions_; ++d)
    for (int64_t tile = 0; tile < tiles; ++tile)
      for (int64_t k = 0; k < H; ++k)
        for (int64_t g = 0; g < G; ++g) {
          float *dst = packed_ + d * floats_per_direction + ((tile * H + k) * G + g) * W;
          for (int64_t l = 0; l < W && tile * W + l < H; ++l) dst[l] = r[(d * G * H + g * H + tile * W + l) * H + k];
        }
}

void RecurrenceKernel::run(const ExternCall &call) {
  const int64_t G = recurrent_gates(kind_), H = hidden_, D = directions_;
  const ExternTensor &x = input(call, 0, "the projections");
  check(x.shape.size() == 3 && x.shape[2] == D * G * H, "the projections must be [", batch_first_ ? "B, T, " : "T, B, ",
        D * G * H, "], got ", shape_text(x.shape));
  const int64_t T = x.shape[batch_first_ ? 1 : 0], B = x.shape[batch_first_ ? 0 : 1];
  const ExternTensor &r = input(call, 1, "R");
  check(r.shape == std::vector<int64_t>{D, G * H, H}, "R must be ", shape_text({D, G * H, H}), ", got ",
        shape_text(r.shape));
  const float *bias = optional_input(call, 2, {D, 2 * G * H}, "B");
  const std::vector<int64_t> state_shape = batch_first_ ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  const float *h0 = optional_input(call, 3, state_shape, "initial_h");
  const float *c0 = kind_ == RecurrentCellKind::Lstm ? optional_input(call, 4, state_shape, "initial_c") : nullptr;
  check(call.outputs.size() == results_.size(), "has ", call.outputs.size(), " outputs, its results param ",
        results_.size());
  float *y = nullptr, *yh = nullptr, *yc = nullptr;
  for (size_t i = 0; i < results_.size(); ++i) {
    const ExternTensor &o = call.outputs[i];
    const std::vector<int64_t> want =
        results_[i] == 0 ? (batch_first_ ? std::vector<int64_t>{B, T, D, H} : std::vector<int64_t>{T, D, B, H})
                         : state_shape;
    check(o.dtype == DType::F32 && o.shape == want, "output ", results_[i], " must be float32 ", shape_text(want),
          ", got ", shape_text(o.shape));
    (results_[i] == 0 ? y : results_[i] == 1 ? yh : yc) = static_cast<float *>(o.data);
  }

  RecurrentCell c;
  c.kind = kind_;
  c.steps = T, c.batch = B, c.hidden = H, c.directions = D;
  c.batch_first = batch_first_;
  c.lanes = lanes_;
  c.projections = static_cast<const float *>(x.data);
  c.y = y;
  const int64_t floats = c.packed_r_floats(), P = c.padded();
  // A constant R is packed once; any other, every run.
  if (!r.constant || packed_from_ != r.data || !packed_) {
    pack(static_cast<const float *>(r.data), floats);
    packed_from_ = r.constant ? static_cast<const float *>(r.data) : nullptr;
    made_own_kernel();
  }
  c.packed_r = packed_;
  if (kind_ == RecurrentCellKind::Gru && bias) {
    rbh_.assign(static_cast<size_t>(D * P), 0.0f);
    for (int64_t d = 0; d < D; ++d)
      std::memcpy(rbh_.data() + d * P, bias + d * 2 * G * H + G * H + 2 * H, sizeof(float) * H);
    c.gru_rbh = rbh_.data();
  }

  // Per direction: h twice (the last step's and this one's) and c, [B][P] each.
  const int64_t state = B * P;
  states_.assign(static_cast<size_t>(D * 3 * state), 0.0f);
  auto buffer = [&](int64_t d, int which) { return states_.data() + (d * 3 + which) * state; };
  auto state_at = [&](int64_t d, int64_t b) { return (batch_first_ ? b * D + d : d * B + b) * H; };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      if (h0) std::memcpy(buffer(d, 0) + b * P, h0 + state_at(d, b), sizeof(float) * H);
      if (c0) std::memcpy(buffer(d, 2) + b * P, c0 + state_at(d, b), sizeof(float) * H);
    }

  auto run_direction = [&](int64_t d, int64_t tile_begin, int64_t tile_end, bool meet) {
    float *h_prev = buffer(d, 0), *h_next = buffer(d, 1);
    const bool reversed = D == 2 ? d == 1 : reverse_;
    for (int64_t s = 0; s < T; ++s) {
      step_(c, d, reversed ? T - 1 - s : s, tile_begin, tile_end, h_prev, h_next, buffer(d, 2));
      if (meet) {
#pragma omp barrier
      }
      std::swap(h_prev, h_next);
    }
  };
  const int64_t tiles = c.tiles();
  const double step_flops = 2.0 * static_cast<double>(G * H * H * B);
  const int threads = team_for(step_flops * static_cast<double>(T));
  const double r_bytes = static_cast<double>(G * H * H) * sizeof(float);
  if (T > 0 && threads >= 2 && D == 2) {
#pragma omp parallel num_threads(2)
    for (int64_t d = omp_get_thread_num(); d < D; d += omp_get_num_threads()) run_direction(d, 0, tiles, false);
  } else if (T > 0 && threads >= 2 && tiles >= 2 && (step_flops >= kSplitStepFlops || r_bytes >= kSplitStepBytes)) {
#pragma omp parallel num_threads(2)
    {
      // Both threads meet at every step's barrier. A team of one takes every tile.
      const bool pair = omp_get_num_threads() == 2;
      const int64_t half = (tiles + 1) / 2, i = omp_get_thread_num();
      run_direction(0, pair && i == 1 ? half : 0, pair && i == 0 ? half : tiles, pair);
    }
  } else {
    for (int64_t d = 0; d < D; ++d) run_direction(d, 0, tiles, false);
  }

  // The last step's states: h in buffer 0 after an even number of steps, else 1.
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      if (yh) std::memcpy(yh + state_at(d, b), buffer(d, T % 2) + b * P, sizeof(float) * H);
      if (yc) std::memcpy(yc + state_at(d, b), buffer(d, 2) + b * P, sizeof(float) * H);
    }
  ran(impl_name_);
}

}  // namespace

std::unique_ptr<ExternKernel> make_onednn_recurrence_kernel(const PlanStep &step) {
  return std::make_unique<RecurrenceKernel>(step);
}

}  // namespace disco
