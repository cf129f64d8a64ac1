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

// Both of the above; returns the number of nodes removed.
int rewrite_graph(Graph &g);

}  // namespace disco
