// Where tests find the benchmark models and their references: ../shared/models
// (CI and developers have it), else the copies bundled under examples/models.
#pragma once
#include <string>
#include <vector>

namespace disco::testing {

// Empty when the model is in neither place; tests then skip with a message.
std::string find_model(const std::string &name);
std::string shared_models_dir();  // empty when ../shared/models is absent
std::string references_dir();     // tests/references

// The benchmark models that the model tests run against the PyTorch references,
// e.g. INSTANTIATE_TEST_SUITE_P(Models, T, ::testing::ValuesIn(benchmark_models())).
inline const std::vector<std::string> &benchmark_models() {
  static const std::vector<std::string> models = {"mlp",     "bert_layer", "bert_small4",
                                                  "convnet", "convnet_bn", "layernorm_softmax"};
  return models;
}

}  // namespace disco::testing
