// Ops whose output sizes depend on the data (NonZero, Unique, Compress,
// NonMaxSuppression, TopKDynamic, IfSelectDynamic). The runtime runs them on
// the host between kernels; the sizes they produce bind fresh symbols that
// later kernels take as arguments.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "frontend/tensor_data.h"

namespace disco {

using HostAttrs = std::map<std::string, int64_t>;
using HostOpFn = std::vector<TensorData> (*)(const std::vector<const TensorData *> &inputs, const HostAttrs &attrs);

// Null for unknown names.
HostOpFn find_host_op(const std::string &name);

}  // namespace disco
