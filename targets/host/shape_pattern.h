// A fusion group's symbolic shape pattern (issue #26): the group's shapes
// with each distinct symbolic extent replaced by a parameter of the kernel's
// own, p0, p1, ... in order of first appearance, and a shape store that knows
// each parameter only by what the model's store proves of its extent: its
// lower bound, what it is a multiple of, whether it can be 1, and its likely
// value. Constant extents stay constants.
//
// A group is lowered, scheduled and keyed (kernel_key.h) from its pattern, so
// groups that apply the same ops at different extents share one kernel: an
// FPN's activation chain at each pyramid level, over [n, 16, (h + 1)/2, ...]
// at one level and [n, 16, ((h + 1)/2 + 1)/2, ...] at the next, or the same
// model exported with other axis names. Its plan step passes each parameter
// the extent it stands for, evaluated from the model's symbols at run time.
//
// Why sharing is sound: the lowering and the schedule see nothing of the model
// but the pattern (a copy of the graph whose group values carry the pattern's
// shapes and shape values, and the pattern's store), and every fact the store
// holds is in the key. Each fact is true of the extent a group passes, so a
// kernel is correct for every group with its key. What the model's store knows
// beyond them (that one extent is the product of two others, upper bounds) the
// kernel cannot rely on.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"
#include "schedules/fusion.h"

namespace disco {

class ShapePattern {
 public:
  // Gives the group's values in `scratch`, a copy of `g`, the pattern's shapes
  // until the pattern is destroyed. A group with a subgraph attribute, or with
  // an extent the store gives no lower bound, keeps the model's symbols:
  // applies() is false and `scratch` is left as it is.
  ShapePattern(Graph &scratch, const Graph &g, const ShapeStore &store, const FusionGroup &group);
  ~ShapePattern();
  ShapePattern(const ShapePattern &) = delete;
  ShapePattern &operator=(const ShapePattern &) = delete;

  bool applies() const { return applies_; }
  const Graph &graph() const { return scratch_; }
  const ShapeStore &store() const { return store_; }
  // Every parameter, in order: p0, p1, ...
  const std::vector<std::string> &params() const { return params_; }
  // The extent that parameter `param` stands for, canonical over the model's symbols.
  const Dim &extent(const std::string &param) const;

 private:
  Graph &scratch_;
  const Graph &g_;
  std::vector<int> values_;  // the values rewritten in scratch_
  ShapeStore store_;
  std::vector<std::string> params_;
  std::map<std::string, Dim> extent_;
  bool applies_ = false;
};

}  // namespace disco
