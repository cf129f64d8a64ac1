// Control flow (If, Loop, Scan) by expansion. disco compiles straight-line
// kernels, so a control-flow node is replaced, during shape inference, by the
// nodes it amounts to once its decisions are known at compile time:
//  - If: the taken branch, when the condition is known (a constant or a
//    folded shape fact); otherwise both branches, and per output an IfSelect
//    (domain "disco") that picks one at run time, so one compile serves both
//    values. Branches whose shapes differ compile the condition's graph
//    inputs in (a Session compiles once per value) when those are flags or
//    small integer tensors the condition folds from; otherwise (a condition
//    computed from float data or through NonZero and the like) an
//    IfSelectDynamic, run on the host, copies the taken branch's output and
//    binds the dims that differ, fresh symbols, at run time. Both branches then
//    run on every call, and the shape facts and run-time checks of each (a
//    Reshape's element count, a broadcast) hold whichever is taken;
//  - Loop: the body unrolled, when the trip count and condition are known, the
//    body passes its condition through unchanged and the trip count is at
//    most 4096; otherwise a disco::Loop, whose body compiles once and runs
//    once per iteration at run time (lowering/ops/run_time_loop.h);
//  - Scan: the body unrolled over a sequence length that is a constant.
// Otherwise the node fails naming what had to be known.
// Bodies read the values of every enclosing graph by name, at any depth (an If
// in a Loop body in an If branch): when a body is inlined, the nested bodies
// of its nodes are copied with the names they read from it renamed to the
// inlined copies'.
#pragma once
#include <cstddef>
#include <set>
#include <string>

#include "frontend/graph.h"
#include "lowering/shape_store.h"

namespace disco {

bool is_control_flow(const Node &n);
// The names `g`, and the graphs nested in its nodes at any depth, read from
// the scopes that enclose `g`.
void free_names(const Graph &g, std::set<std::string> &out);
// Replaces g.nodes[index] by its expansion (possibly empty). Throws
// ValueRequired (lowering/known_values.h) when a graph input's value decides.
void expand_control_flow(Graph &g, size_t index, const ShapeStore &store);
// Turns an IfSelect whose branch outputs differ in shape, and whose condition
// is not worth compiling in, into an IfSelectDynamic (a host op). Called by
// shape inference once the branches' shapes are known.
bool route_if_select_of_differing_shapes(const Graph &g, Node &node, const ShapeStore &store);

}  // namespace disco
