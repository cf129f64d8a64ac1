// Which ONNX backend node tests are in scope. Out of scope, and reported as
// skipped with the reason: ops of the ai.onnx.preview.training domain,
// sequence/optional/map types, string tensors, and random-number ops.
#pragma once
#include <optional>
#include <string>

namespace disco::conformance {

// The reason a model is out of scope, or nullopt if it is in scope.
std::optional<std::string> out_of_scope_reason(const std::string &model_path);

}  // namespace disco::conformance
