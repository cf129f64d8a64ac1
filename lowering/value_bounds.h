// Bounds on the magnitude of a value's elements, known from the graph at
// compile time: constants, ops whose results are bounded (LayerNormalization
// with constant scale and bias, Softmax, Sigmoid, Tanh) and a few
// elementwise ops over bounded inputs. Lowerings use them to drop work that
// only guards against extreme values (a Softmax's row max).
#pragma once
#include <optional>

#include "frontend/graph.h"

namespace disco {

// max |v| over every element v of `value`, if the graph bounds it.
std::optional<double> abs_bound(const Graph &g, int value);

}  // namespace disco
