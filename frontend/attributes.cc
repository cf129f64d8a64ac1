#include "frontend/attributes.h"

#include "frontend/errors.h"

namespace disco {

const Attribute &AttrReader::get(const std::string &name) const {
  auto it = attrs_.find(name);
  DISCO_CHECK(it != attrs_.end(), where_, ": missing required attribute '", name, "'");
  return it->second;
}

const Attribute &AttrReader::expect(const std::string &name, Attribute::Kind k, const char *kind_name) const {
  const Attribute &a = get(name);
  DISCO_CHECK(a.kind == k, where_, ": attribute '", name, "' must be ", kind_name);
  return a;
}

int64_t AttrReader::get_int(const std::string &name) const { return expect(name, Attribute::Int, "an int").i; }
int64_t AttrReader::get_int(const std::string &name, int64_t dflt) const {
  return has(name) ? get_int(name) : dflt;
}
float AttrReader::get_float(const std::string &name, float dflt) const {
  if (!has(name)) return dflt;
  const Attribute &a = get(name);
  if (a.kind == Attribute::Int) return static_cast<float>(a.i);
  return expect(name, Attribute::Float, "a float").f;
}
std::string AttrReader::get_string(const std::string &name, const std::string &dflt) const {
  return has(name) ? expect(name, Attribute::String, "a string").s : dflt;
}
std::vector<int64_t> AttrReader::get_ints(const std::string &name) const {
  return expect(name, Attribute::Ints, "a list of ints").ints;
}
std::optional<std::vector<int64_t>> AttrReader::get_ints_opt(const std::string &name) const {
  if (!has(name)) return std::nullopt;
  return get_ints(name);
}
std::vector<float> AttrReader::get_floats(const std::string &name) const {
  return expect(name, Attribute::Floats, "a list of floats").floats;
}
const TensorData &AttrReader::get_tensor(const std::string &name) const {
  return expect(name, Attribute::Tensor, "a tensor").t;
}

}  // namespace disco
