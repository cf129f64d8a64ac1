// The host backend: takes every node that disco can lower and compiles each
// fusion group of its regions into one Halide kernel for the host CPU. It is
// the last backend of every list, the fallback for what others decline.
#pragma once
#include <functional>
#include <memory>

#include "targets/backend.h"

namespace Halide {
struct Target;
}

namespace disco {

struct LoweredKernel;
struct ScheduleReport;
enum class GroupKind;

std::unique_ptr<Backend> make_host_backend();

// Compiles a region's fusion groups as the host backend does, with `schedule`
// in place of the x86 templates: GPU backends share the lowering and differ
// only in schedules (targets/gpu/).
using GroupScheduler =
    std::function<ScheduleReport(LoweredKernel &, GroupKind, const ShapeStore &, const Halide::Target &)>;
void compile_region_groups(const Region &region, PlanBuilder &builder, const GroupScheduler &schedule);

}  // namespace disco
