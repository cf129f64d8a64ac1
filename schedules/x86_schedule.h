// x86 schedule templates, one per fusion-group kind (schedules/fusion.h).
// Every schedule is valid for every shape: vector loops guard their tails
// and nothing assumes an extent. Vectors are the target's natural width
// (16 floats with AVX-512, 8 with AVX2).
//
// - loop:   the innermost dim vectorized; the outer dims fused and split into
//           tasks of about kTaskElements elements that run in parallel.
// - stitch: one row at a time, rows split into tasks as above. Every row
//           reduction and every RowValues stage is computed per row (in L1),
//           row folds vectorized with several accumulators (rfactor over a
//           split of the row), RowValues several vectors per iteration where
//           the row divides into them, then the row of the output is written
//           once.
// - input, dot, opaque: stages materialized at root, vectorized and
//           parallel; row folds vectorized as in stitch groups.
//
// Speculation: the root of a loop or stitch kernel gets specialize()
// branches on run-time predicates, tried in this order, with the generic
// schedule always kept last:
//   hint   every hinted symbol of the kernel at its likely value (--hint),
//          so that its extents are constants;
//   small  at most kSerialElements output elements: no thread pool at all;
//   dense  no dim that might broadcast is 1 (the selects of broadcasting
//          vanish) and the innermost extent is a multiple of the vector
//          width (no tails).
// A branch is only added when the store cannot decide its predicate at
// compile time, so static shapes get one straight-line schedule.
#pragma once
#include "Halide.h"
#include "schedules/scheduler.h"

namespace disco {

constexpr int kTaskElements = 16384;    // per parallel task: 64 KiB of float32
constexpr int kSerialElements = 32768;  // kernels this small run on the calling thread

// Lanes of one vector of `t` on `target` (16 floats with AVX-512, 8 with AVX2).
int vector_lanes(const Halide::Type &t, const Halide::Target &target);

ScheduleReport schedule_x86(LoweredKernel &k, GroupKind kind, const ShapeStore &store, const Halide::Target &target);

}  // namespace disco
