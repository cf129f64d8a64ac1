// What the oneDNN backend takes: a MatMul, Gemm or Conv (the anchor) with
// the epilogue that follows it as oneDNN post-ops: bias and residual adds,
// Relu, Gelu (in the erf form PyTorch exports, or opset 20's Gelu node),
// Sigmoid, SiLU (Mul(c, Sigmoid(c))), HardSwish, HardSigmoid, Tanh,
// LeakyRelu, Clip, scalar scaling and inference
// BatchNormalization. Also MaxPool, AveragePool and their Global forms (and a
// ReduceMean over the spatial dims), and
// (where only convolutions and poolings read the result) a Concat along the
// channels and a squeeze-excitation's Mul by a per-channel value, alone, so
// that convolutional networks stay in oneDNN's layout between their
// convolutions, and a channel shuffle with its Concat and Slices
// (onednn_spatial_rules.cc).
//
// A MatMul also takes the Reshape and Transpose views around it (attention's
// head split and merge) as strided operands and result: see onednn_view.h.
//
// Matching sees dtypes, attributes and the shape store's facts only; run-time
// sizes are the glue's business (targets/onednn/onednn_kernels.h). Each rule's
// match (an OnednnUnit) is the unit's payload: the codegen reads from it which
// post-ops and operands the step gets, so the two cannot disagree.
#pragma once
#include <string>
#include <vector>

#include "targets/backend.h"
#include "targets/onednn/onednn_post_ops.h"
#include "targets/onednn/onednn_view.h"

namespace disco {

// oneDNN 2.6 tensors have at most 12 dims (DNNL_MAX_NDIMS); matmul takes 2 to 12.
constexpr int kOnednnMaxRank = 12;
// Longer epilogues stop here; the rest goes to the next backend.
constexpr int kOnednnMaxPostOps = 16;

struct OnednnUnit : MatchPayload {
  enum Anchor { MatMul, Gemm, Conv, Pool, Concat, Binary, Gather, Recurrence } anchor = MatMul;
  std::vector<int> nodes;          // anchor first, then the epilogue in graph order
  std::vector<int>
      anchor_inputs;  // MatMul/Gemm: A, B; Conv: X, W, bias (-1 when absent); Pool: X; Concat, Gather: all; Binary: X,
                      // S; Recurrence: projections, R, B, initial_h, initial_c (-1 when absent)
  // MatMul: operands read in place through a Reshape and Transpose (anchor_inputs
  // then hold what those read), and a Transpose (and Reshape) of the result
  // written in place (`output` is then their result). See onednn_view.h.
  // Conv: out_perm {0, 2, 3, 1}, its result written channels last in place
  // of the Transpose that read it (onednn_conv.cc).
  OperandView a_view, b_view;
  std::vector<int64_t> out_perm;
  bool out_reshaped = false;
  std::vector<OnednnPostOp> post_ops;
  std::vector<int> operands;              // values the binary post-ops read, in post-op order
  int output = -1;                        // the unit's one result: the value after the last post-op
  bool trans_a = false, trans_b = false;  // Gemm
  // Conv and Pool: per spatial dim; pads are all begins then all ends (ONNX order).
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
  std::string auto_pad = "NOTSET";  // SAME_* pads are computed per run-time shape
  // Pool (no epilogue): "max", "avg_include" or "avg_exclude"; a global pool has no window attributes.
  std::string pool_algorithm;
  bool global_pool = false;
  std::vector<int64_t> kernel_shape;
  std::string binary_algorithm;  // Binary: "mul" or "add", of X and the per-channel S
  // Gather (a channel shuffle with the Concat before it and the channel
  // Slices after it): its results, `output` first, and for each result
  // channel the input (an anchor_inputs position) and the channel it copies.
  struct Source {
    int input;
    int64_t channel;
  };
  std::vector<int> outputs;
  std::vector<std::vector<Source>> channel_sources;
  // Recurrence (onednn_recurrence_rule.cc): `outputs` are those of Y, Y_h,
  // Y_c the node has; recurrence_results their positions among the three.
  std::vector<int64_t> recurrence_results;
  std::string recurrence_cell;  // "rnn", "gru" or "lstm"
  int64_t recurrence_directions = 1, recurrence_hidden = 0, recurrence_layout = 0;
  bool recurrence_reverse = false;
};

// One rule per anchor op; each takes a unit with its OnednnUnit as the payload.
std::vector<SupportRule> onednn_rules();

// The matches of onednn_spatial_rules.cc, for rules of their own: a float32
// Concat along axis 1 of 4-D or 5-D tensors, and a Mul or Add of such a
// tensor X and a per-channel S computed from it. `why` says why not.
bool match_channel_concat(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why);
// Whether a channel Concat's unit, its epilogue matched, is worth a step of
// its own rather than the host's in-place reads; `why` says why not.
bool channel_concat_pays(const MatchContext &ctx, const OnednnUnit &u, std::string *why);
bool match_channel_scale(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why);
// A channel shuffle (Reshape [N, g, C/g, ...], Transpose of those two dims,
// Reshape back to [N, C, ...]) of constant C, with the channel Concat that
// makes its input (anchor Concat) or without (anchor Reshape), and the Slices
// along the channels that are all its readers: one channel gather.
bool match_channel_shuffle(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why);

// An RNN, GRU or LSTM node that reads its input projections, in the forms
// recurrent_cell.h computes (onednn_recurrence_rule.cc).
bool match_recurrence(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why);

}  // namespace disco
