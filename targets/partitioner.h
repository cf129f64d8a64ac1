// The partitioner: which backend runs which node.
//  1. Annotate: each backend's rules, in the user's priority order, claim
//     units of nodes; a node goes to the first backend that takes it.
//  2. Merge: neighbouring units of one backend become one region, unless the
//     merge would make the region graph cyclic (A -> host -> A).
//  3. Drop: regions with fewer nodes than their backend's minimum go back to
//     the next backend that accepts their nodes; repeat until stable.
//  4. Outline: each region lists the values it reads and writes and every
//     symbolic dim that it uses, which it receives as arguments.
// Nodes whose outputs fold at compile time (shape arithmetic) are in no region.
// Compiling (compile_partition) hands each region to its backend; nodes a
// backend declines then are partitioned again among the backends after it
// (reassign_declined), the rest of its region coming back to it.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/errors.h"
#include "targets/backend.h"

namespace disco {

struct Unit {
  std::string rule;
  std::vector<int> nodes;  // anchor first
  std::shared_ptr<const MatchPayload> payload;  // what the rule's check matched

  // The payload as the backend's own match record.
  template <class T>
  const T &payload_as() const {
    const T *p = dynamic_cast<const T *>(payload.get());
    DISCO_CHECK(p, "internal: unit '", rule, "' carries no match record of its backend");
    return *p;
  }
};

struct Region {
  int id = 0;  // its index in Partition::regions
  std::string backend;
  std::vector<int> nodes;  // topological order
  std::vector<Unit> units;
  std::vector<int> inputs;            // values read from outside, in first-use order
  std::vector<int> outputs;           // values read outside or graph outputs
  std::vector<std::string> symbols;   // every symbol in the shapes (and folded values) it touches, sorted
};

struct PartitionOptions {
  std::map<std::string, int> min_region_nodes;  // per-backend override of Backend::min_region_nodes
};

struct Partition {
  std::vector<Region> regions;                 // in an order that respects dependencies
  std::vector<std::vector<std::string>> accepted_by;  // per node: backends whose rules take it
  std::vector<int> region_of;                  // per node; -1 for folded nodes
  std::vector<std::string> notes;              // declined checks and dropped regions, for inspect
};

Partition partition_graph(const Graph &g, const ShapeStore &store, const std::vector<const Backend *> &backends,
                          const PartitionOptions &opts = {});

// Compiles every region with its backend, in order, into the builder. A
// region whose backend declines nodes is replaced by reassign_declined's
// regions, which are compiled in its place.
void compile_partition(Partition &p, const std::vector<const Backend *> &backends, const PartitionOptions &opts,
                       PlanBuilder &builder);

// Hands the nodes that region `at`'s backend declined back: the region's nodes
// are partitioned again, by the same steps, among that backend (which may take
// all but the declined nodes) and the backends after it. The regions formed
// replace region `at`, in dependency order; ids and region_of follow, and a
// note says what was handed back and why.
void reassign_declined(const Graph &g, const ShapeStore &store, const std::vector<const Backend *> &backends,
                       const PartitionOptions &opts, size_t at, const Declined &declined, Partition &p);

// The text `disco inspect --targets` prints.
std::string describe_partition(const Graph &g, const Partition &p);

}  // namespace disco
