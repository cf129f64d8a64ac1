// Constant weights laid out at compile time the way the dot kernels read
// them, so that no run transposes them: the result is a new constant, stored
// with the plan's other constants.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "frontend/graph.h"

namespace disco {

// A Gemm with transB = 1 whose B is a rank-2 constant (a PyTorch Linear
// exported as Gemm: B is [N, K]) reads B transposed instead: B^T [K, N]
// becomes its input and transB 0, so a vector of N is contiguous for the dot
// kernels (x86_dot_schedule.h) and the libraries alike. Returns the number of
// weights transposed.
int transpose_constant_weights(Graph &g);

// The node attributes that mark a MatMul/Gemm whose B was packed into
// panels: the panel width, and B's N before padding. Internal to disco
// (never in a model).
constexpr const char *kPanelWidthAttr = "disco.panel_width";
constexpr const char *kPanelColumnsAttr = "disco.panel_columns";

// B [K, N] as panels of `width` columns, k-major within each: element
// (k, n) at [n / width][k][n % width]; N is padded with zeros to a whole
// panel. What the dot micro-kernel reads: one row of a panel per k, unit
// stride, the panels one after the other.
TensorData pack_panels(const TensorData &b, int width);

// For the MatMul/Gemm nodes among `nodes` (ones a backend's kernels compute)
// whose B is a rank-2 float32 constant, read as [K, N] (a Gemm with transB 0,
// as transpose_constant_weights leaves one), and for which panel_width(N) > 0:
// B becomes a new constant, pack_panels(B, width), and the node is marked with
// kPanelWidthAttr and kPanelColumnsAttr. A weight several nodes read is packed once per width; the
// original stays for other readers. Shape inference reads B's
// shape through the attributes: the node's output is what it was. Returns the new values, for the caller's
// bookkeeping.
std::vector<int> pack_dot_weights(Graph &g, const std::vector<int> &nodes,
                                  const std::function<int(int64_t n)> &panel_width);

// The node attribute that marks a Conv whose W is stored channels-last:
// [C/group, kernel..., M] instead of [M, C/group, kernel...], so that a vector
// of output channels is contiguous for one input channel and tap.
constexpr const char *kChannelsLastWeightAttr = "disco.weight_channels_last";

// W [M, C, k...] as [C, k..., M]; with axis 1, a ConvTranspose's
// W [C, M, k...] as [C, k..., M].
TensorData channels_last(const TensorData &w, int axis = 0);

// Whether the node's W is stored channels-last (kChannelsLastWeightAttr).
bool has_channels_last_weight(const AttrReader &attrs);

// An index of W in the op's order ([M, C, k...], or a ConvTranspose's
// [C, M, k...] with axis 1) in the order channels_last stores W.
template <class T>
std::vector<T> channels_last_order(std::vector<T> v, int axis) {
  std::rotate(v.begin() + axis, v.begin() + axis + 1, v.end());
  return v;
}

// W's shape as the op reads it (axis as for channels_last), from its stored shape.
Shape conv_weight_shape(const AttrReader &attrs, const Shape &stored, int axis = 0);

// For the float32 Conv and ConvTranspose nodes among `nodes` with group 1, a
// constant W and wanted(M, C) (output and input channels): W becomes channels_last(W)
// (axis 1 for a ConvTranspose), once per weight, and the node is marked with
// kChannelsLastWeightAttr. Returns the new values.
std::vector<int> channels_last_conv_weights(Graph &g, const std::vector<int> &nodes,
                                            const std::function<bool(int64_t out_channels, int64_t in_channels)> &wanted);

}  // namespace disco
