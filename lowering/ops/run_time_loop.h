// A Loop run at run time (disco::Loop), for loops that cannot be unrolled at
// compile time: a trip count or condition computed from the data (torchvision's
// paste_masks_in_image loops once per detection), a body that computes its own
// condition, or more trips than unrolling allows.
//
// The body is compiled once, as a graph of its own with symbolic shapes, into
// a plan beside the enclosing one (loop<K>.plan.txt, with its kernel library
// and constants, in the same folder: the compile cache's manifest covers
// them). The executor runs that plan once per iteration (runtime/loop_runner.h),
// feeding the loop-carried values and stacking the scan outputs.
//
// The body's graph inputs are (iteration, condition, carried..., outer...):
// the values it reads from enclosing graphs become inputs of its own, except
// constants and values known at compile time, which it holds as constants.
// Inference gives the node's outputs the body's shapes where they cannot
// change from one iteration to the next (constants, the outer values' dims,
// carried dims the body keeps), and fresh symbols, bound by the runner's
// outputs at run time, elsewhere: the scan outputs' first dim is the trip count.
//
// Inside the body, an integer value an op needs at compile time (Resize's
// sizes, Slice's starts) that the body computes from each trip's data is bound
// at run time by a disco::RunTimeDims. A carried value that starts empty along
// axis 0 and that the body only appends to (Concat(acc, part)) is collected as
// a scan output and rebuilt after the loop. A body that still cannot compile
// fails naming the loop, unless the trip count comes from graph inputs: then
// the loop unrolls as before, the session compiling the count in
// (lowering/control_flow.cc).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"
#include "runtime/plan.h"

namespace disco {

class OpRegistry;

// The disco::Loop node that runs Loop node `n` of `g` at run time, and the
// nodes after it that rebuild carried values the body only appends to
// (collected as scan outputs instead: run_time_loop.cc, appends_to_scans).
std::vector<Node> loop_at_run_time(Graph &g, const Node &n, const ShapeStore &store);

void register_run_time_loop(OpRegistry &r);

// Compiles the body of each disco::Loop node of `g` (inferred already) into
// `bodies_dir`/loop<K>.plan.txt and its files, K the first number free there,
// and records K in the node's "body_plan" attribute. `build` compiles one
// inferred body graph into a plan in the folder it is given (nested loops
// compile through it too). `aot`: refused, naming the node.
using BuildBodyFn = std::function<Plan(Graph &body, const ShapeStore &store, const std::string &name,
                                       const std::string &dir)>;
void compile_loop_bodies(Graph &g, const std::string &name, const std::string &bodies_dir, bool aot,
                         const BuildBodyFn &build);

}  // namespace disco
