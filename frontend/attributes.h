// Node attributes and the one shared parser that every op reads them through.
// Errors name the node, op and attribute at fault.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/tensor_data.h"

namespace disco {

struct Graph;

struct Attribute {
  enum Kind { Float, Int, String, Tensor, GraphAttr, Floats, Ints, Strings } kind = Int;
  float f = 0;
  int64_t i = 0;
  std::string s;
  TensorData t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

using Attributes = std::map<std::string, Attribute>;

// Typed access to one node's attributes. `where` is the node's description,
// e.g. "node 'Softmax_3' (Softmax)", used as the prefix of every error.
class AttrReader {
 public:
  AttrReader(const Attributes &attrs, std::string where) : attrs_(attrs), where_(std::move(where)) {}

  bool has(const std::string &name) const { return attrs_.count(name) != 0; }
  int64_t get_int(const std::string &name) const;
  int64_t get_int(const std::string &name, int64_t dflt) const;
  float get_float(const std::string &name, float dflt) const;
  std::string get_string(const std::string &name, const std::string &dflt) const;
  std::vector<int64_t> get_ints(const std::string &name) const;
  std::optional<std::vector<int64_t>> get_ints_opt(const std::string &name) const;
  std::vector<float> get_floats(const std::string &name) const;
  const TensorData &get_tensor(const std::string &name) const;
  const Attribute &get(const std::string &name) const;

 private:
  const Attribute &expect(const std::string &name, Attribute::Kind k, const char *kind_name) const;
  const Attributes &attrs_;
  std::string where_;
};

}  // namespace disco
