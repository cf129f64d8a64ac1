#include "runtime/extern_kernel.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>

#include "frontend/checked_size.h"
#include "frontend/errors.h"

namespace disco {

int64_t ExternTensor::num_elements() const {
  // The executor's buffers have checked shapes; a test's or a backend's may not.
  if (const std::optional<int64_t> n = element_count(shape)) return *n;
  return checked_elements(shape, std::string("an extern kernel's ") + dtype_name(dtype) + " tensor");  // fails
}

namespace {
std::mutex g_registry_mu;
}

ExternKernelRegistry &ExternKernelRegistry::global() {
  static auto *r = new ExternKernelRegistry();  // never destroyed: kernels may outlive static teardown
  return *r;
}

void ExternKernelRegistry::add(const std::string &name, ExternKernelFactory factory) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  factories_[name] = std::move(factory);
}

const ExternKernelFactory *ExternKernelRegistry::find(const std::string &name) const {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

bool has_param(const PlanStep &step, const std::string &key) { return step.params.count(key) != 0; }

std::string param_str(const PlanStep &step, const std::string &key) {
  auto it = step.params.find(key);
  DISCO_CHECK(it != step.params.end(), "step ", step.label, " (", step.extern_call, ") has no param '", key, "'");
  return it->second;
}

std::vector<std::string> param_list(const PlanStep &step, const std::string &key) {
  std::vector<std::string> out;
  const std::string s = param_str(step, key);
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int64_t param_int(const PlanStep &step, const std::string &key) {
  const std::string s = param_str(step, key);
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  DISCO_CHECK(!s.empty() && *end == '\0', "step ", step.label, " param '", key, "' is not an integer: '", s, "'");
  return v;
}

double param_float(const PlanStep &step, const std::string &key) {
  const std::string s = param_str(step, key);
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  DISCO_CHECK(!s.empty() && *end == '\0', "step ", step.label, " param '", key, "' is not a number: '", s, "'");
  return v;
}

std::vector<int64_t> param_ints(const PlanStep &step, const std::string &key) {
  std::vector<int64_t> out;
  for (const auto &item : param_list(step, key)) {
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    DISCO_CHECK(*end == '\0', "step ", step.label, " param '", key, "' holds a non-integer '", item, "'");
    out.push_back(v);
  }
  return out;
}

bool param_flag(const PlanStep &step, const std::string &key) {
  return has_param(step, key) && param_int(step, key) != 0;
}

std::vector<size_t> param_positions(const PlanStep &step, const std::string &key) {
  std::vector<size_t> out;
  if (!has_param(step, key)) return out;
  for (int64_t i : param_ints(step, key)) {
    DISCO_CHECK(i >= 0, "step ", step.label, " param '", key, "' names position ", i);
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

std::string join_ints(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace disco
