#include "runtime/shape_binder.h"

#include <map>

#include "frontend/errors.h"

namespace disco {

namespace {
std::string shape_text(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
}  // namespace

SymbolValues bind_symbols(const std::vector<InputSpec> &inputs, const std::vector<std::vector<int64_t>> &shapes,
                          const std::vector<DType> &dtypes, const std::vector<RuntimeCheck> &checks) {
  DISCO_CHECK(shapes.size() == inputs.size(), "expected ", inputs.size(), " inputs, got ", shapes.size());
  SymbolValues v;
  std::map<std::string, std::string> bound_by;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec &in = inputs[i];
    DISCO_CHECK(dtypes[i] == in.dtype, "input '", in.name, "' has dtype ", dtype_name(dtypes[i]), ", expected ",
                dtype_name(in.dtype));
    DISCO_CHECK(shapes[i].size() == in.shape.size(), "input '", in.name, "' has rank ", shapes[i].size(),
                " (shape ", shape_text(shapes[i]), "), expected rank ", in.shape.size(), " ", shape_str(in.shape));
    for (size_t d = 0; d < in.shape.size(); ++d) {
      int64_t actual = shapes[i][d];
      DISCO_CHECK(actual >= 0 && actual < (int64_t(1) << 31), "input '", in.name, "' dim ", d, " is ", actual,
                  ", outside [0, 2^31)");
      const Dim &decl = in.shape[d];
      std::string here = "input '" + in.name + "' dim " + std::to_string(d);
      if (decl.is_const()) {
        DISCO_CHECK(actual == decl.as_const(), here, " is ", actual, ", expected ", decl.as_const(),
                    " (fixed by the model)");
      } else if (decl.is_symbol()) {
        const std::string &s = decl.symbol_name();
        auto it = v.find(s);
        if (it == v.end()) {
          v[s] = actual;
          bound_by[s] = here;
        } else {
          DISCO_CHECK(it->second == actual, here, " is ", actual, ", expected ", it->second, " (symbol '", s,
                      "', the same as ", bound_by[s], ")");
        }
      } else {
        fail(here, ": declared dim '", decl.str(), "' is not a constant or a symbol");
      }
    }
  }
  for (const auto &c : checks) {
    std::set<std::string> syms;
    c.a.collect_symbols(syms);
    c.b.collect_symbols(syms);
    bool all_bound = true;
    for (const auto &s : syms) all_bound = all_bound && v.count(s);
    if (!all_bound) continue;  // a symbol only data can give; checked by its kernel
    if (!c.holds(v)) fail(c.describe(v));
  }
  return v;
}

}  // namespace disco
