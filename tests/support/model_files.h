// Where tests find the benchmark models and their references: ../shared/models
// (CI and developers have it), else the copies bundled under examples/models.
#pragma once
#include <string>

namespace disco::testing {

// Empty when the model is in neither place; tests then skip with a message.
std::string find_model(const std::string &name);
std::string shared_models_dir();  // empty when ../shared/models is absent
std::string references_dir();     // tests/references

}  // namespace disco::testing
