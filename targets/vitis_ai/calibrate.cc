#include "targets/vitis_ai/calibrate.h"

#include <cmath>

#include "frontend/errors.h"
#include "runtime/npy.h"

namespace disco::vitis_ai {
namespace {

std::vector<float> normal_noise(int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto uniform = [&s] {  // xorshift64, (0, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (static_cast<double>(s >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<float> v(static_cast<size_t>(n));
  for (auto &x : v) x = static_cast<float>(std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()));
  return v;
}

FloatTensor from_npy(const std::string &path, const Value &input) {
  const TensorData t = read_npy(path);
  DISCO_CHECK(input.shape && t.shape.size() == input.shape->size(), "calibration file '", path, "' has rank ",
              t.shape.size(), "; input '", input.name, "' has rank ", input.shape ? input.shape->size() : 0);
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const Dim &want = (*input.shape)[d];
    DISCO_CHECK(!want.is_const() || want.as_const() == t.shape[d], "calibration file '", path, "' dim ", d, " is ",
                t.shape[d], "; input '", input.name, "' fixes it to ", want.as_const());
  }
  FloatTensor f{t.shape, std::vector<float>(static_cast<size_t>(t.num_elements()))};
  for (size_t i = 0; i < f.data.size(); ++i) f.data[i] = static_cast<float>(t.float_at(i));
  return f;
}

std::vector<std::map<int, FloatTensor>> samples_from_files(const Graph &g, const std::vector<std::string> &files) {
  std::map<int, std::vector<FloatTensor>> per_input;
  for (const std::string &item : files) {
    if (item.empty()) continue;
    int vid = -1;
    std::string path = item;
    if (const size_t eq = item.find('='); eq != std::string::npos) {
      vid = g.find_value(item.substr(0, eq));
      path = item.substr(eq + 1);
      DISCO_CHECK(vid >= 0, "calibration entry '", item, "' names no input of the model");
    } else {
      DISCO_CHECK(g.inputs.size() == 1, "calibration file '", item, "': the model has ", g.inputs.size(),
                  " inputs; give INPUT=FILE.npy");
      vid = g.inputs[0];
    }
    per_input[vid].push_back(from_npy(path, g.value(vid)));
  }
  size_t n = 0;
  for (int in : g.inputs) {
    DISCO_CHECK(per_input.count(in), "calibration: no sample for input '", g.value(in).name, "'");
    DISCO_CHECK(n == 0 || per_input[in].size() == n, "calibration: inputs have different sample counts");
    n = per_input[in].size();
  }
  std::vector<std::map<int, FloatTensor>> out(n);
  for (auto &[vid, ts] : per_input)
    for (size_t i = 0; i < n; ++i) out[i][vid] = ts[i];
  return out;
}

}  // namespace

std::vector<std::map<int, FloatTensor>> calibration_samples(const Graph &g, const ShapeStore &store,
                                                            const std::vector<std::string> &files, std::string *source) {
  if (!files.empty()) {
    source->clear();
    for (const auto &f : files) *source += (source->empty() ? "" : ",") + f;
    return samples_from_files(g, files);
  }
  *source = std::to_string(kDefaultCalibrationSamples) + " samples of N(0, 1) noise";
  SymbolValues syms;
  std::vector<std::map<int, FloatTensor>> out(kDefaultCalibrationSamples);
  for (int in : g.inputs) {
    const Value &v = g.value(in);
    if (v.dtype != DType::F32 || !v.shape) continue;  // a region reading it stays uncalibrated
    std::vector<int64_t> shape;
    for (size_t d = 0; d < v.shape->size(); ++d) {
      const Dim &dim = (*v.shape)[d];
      if (dim.is_const()) {
        shape.push_back(dim.as_const());
        continue;
      }
      const Dim rep = store.canonical(dim);
      const std::string key = rep.str();
      if (!syms.count(key)) {
        int64_t value = d == 0 ? 1 : 32;
        if (rep.is_symbol() && store.has_symbol(rep.symbol_name()) && !store.facts(rep.symbol_name()).likely.empty())
          value = store.facts(rep.symbol_name()).likely[0];
        syms[key] = value;
      }
      shape.push_back(syms[key]);
    }
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    for (int s = 0; s < kDefaultCalibrationSamples; ++s)
      out[s][in] = FloatTensor{shape, normal_noise(n, 1000 * static_cast<uint64_t>(in) + s + 1)};
  }
  return out;
}

Calibration calibrate(const Graph &g, const ShapeStore &store, const std::vector<std::string> &files) {
  Calibration c;
  const auto samples = calibration_samples(g, store, files, &c.source);
  std::map<int, bool> complete;  // a value must be known in every sample
  for (size_t s = 0; s < samples.size(); ++s) {
    std::map<int, FloatTensor> values = evaluate_float(g, samples[s]);
    for (auto &[vid, t] : samples[s]) values.emplace(vid, t);
    if (s == 0)
      for (auto &[vid, t] : values) complete[vid] = true, c.shape[vid] = t.shape;
    for (auto &[vid, ok] : complete)
      if (!values.count(vid)) ok = false;
    for (auto &[vid, t] : values) {
      auto &dst = c.values[vid];
      dst.insert(dst.end(), t.data.begin(), t.data.end());
    }
  }
  for (auto &[vid, ok] : complete)
    if (!ok) c.values.erase(vid), c.shape.erase(vid);
  for (auto it = c.values.begin(); it != c.values.end();)
    it = complete.count(it->first) ? std::next(it) : c.values.erase(it);
  return c;
}

}  // namespace disco::vitis_ai
