// Rewrites of the inferred graph that make kernels cheaper without changing
// what the model computes (up to float rounding), run before partitioning.
#pragma once

#include "frontend/graph.h"

namespace disco {

// A LayerNormalization over the last axis followed by a Mul and/or an Add
// with a constant per-channel (or scalar) float operand becomes one
// LayerNormalization with that scale and shift folded into its Scale and B:
// z*g*c + b*c + d per element instead of (z*g + b)*c + d. Returns the number
// of Mul/Add nodes removed.
int fold_affine_into_layernorm(Graph &g);

// A Relu that reads the output of an op whose results are never negative
// (Softmax, Sigmoid, Exp, Relu, Abs) and is that value's only reader is
// dropped: the op writes the Relu's output instead. NaN stays NaN either
// way. Returns the number of Relu nodes removed.
int drop_redundant_relu(Graph &g);

// An Identity, or a Dropout (the identity, once shape inference has accepted
// it) whose mask no one reads, that is the only reader of a value some node
// produces is dropped: that node writes its output instead. Between two
// library steps such a node was a copy kernel of its own (swin_t's
// attention and MLP Dropouts with their unread masks, 24 per run). Returns
// the number of nodes removed.
int drop_pass_through_nodes(Graph &g);

// A GELU decomposed into elementwise nodes, as PyTorch exports it below
// opset 20, becomes one Gelu node (ai.onnx's, at opset 20, whatever the
// graph imports), so that one kernel computes it with math::gelu_erf or
// math::gelu_tanh: x (1 + erf(x / sqrt 2)) / 2 with approximate "none", and
// x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 with "tanh". The halving
// may sit on x, on the sum or on the product (a Mul by 1/2 or a Div by 2),
// x / sqrt 2 may be a Mul by its inverse, x^3 a Pow(x, 3) or (x x) x, and
// the operands of Add and Mul come in either order. Every constant is a
// float scalar of x's dtype within 1e-4 of its value (relative, as the oneDNN
// rules match the same pattern), and every value of the pattern but x has
// its one reader in the pattern. Returns the number of nodes removed.
int fold_gelu(Graph &g);

// An AveragePool that alone reads a Pad of zeros over its spatial dims takes
// that padding as its own, counted in its averages (count_include_pad = 1),
// which is what the zeros were: one pass instead of a copy and a pass
// (torchvision's inception_v3 and densenet121 export their padded average
// pools so). Only without auto_pad, ceil_mode or dilations, and where the
// pool's own pads, if any, were counted too. Returns the number of Pads removed.
int fold_pad_into_average_pool(Graph &g);

// All of the above; returns the number of nodes removed.
int rewrite_graph(Graph &g);

}  // namespace disco
