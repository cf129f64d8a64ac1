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
  // Where each symbol was bound (input, dim), for the message when another dim disagrees.
  std::vector<std::pair<const std::string *, std::pair<size_t, size_t>>> bound_by;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec &in = inputs[i];
    DISCO_CHECK(dtypes[i] == in.dtype, "input '", in.name, "' has dtype ", dtype_name(dtypes[i]), ", expected ",
                dtype_name(in.dtype));
    DISCO_CHECK(shapes[i].size() == in.shape.size(), "input '", in.name, "' has rank ", shapes[i].size(),
                " (shape ", shape_text(shapes[i]), "), expected rank ", in.shape.size(), " ", shape_str(in.shape));
    for (size_t d = 0; d < in.shape.size(); ++d) {
      int64_t actual = shapes[i][d];
      // Built only for a message: this runs before every run of a model.
      auto where = [&](size_t input, size_t dim) {
        return "input '" + inputs[input].name + "' dim " + std::to_string(dim);
      };
      DISCO_CHECK(actual >= 0 && actual < (int64_t(1) << 31), where(i, d), " is ", actual, ", outside [0, 2^31)");
      const Dim &decl = in.shape[d];
      if (decl.is_const()) {
        DISCO_CHECK(actual == decl.as_const(), where(i, d), " is ", actual, ", expected ", decl.as_const(),
                    " (fixed by the model)");
      } else if (decl.is_symbol()) {
        const std::string &s = decl.symbol_name();
        auto it = v.find(s);
        if (it == v.end()) {
          v.emplace(s, actual);
          bound_by.push_back({&s, {i, d}});
        } else if (it->second != actual) {
          std::pair<size_t, size_t> first{i, d};
          for (const auto &[name, at] : bound_by)
            if (*name == s) first = at;
          fail(where(i, d), " is ", actual, ", expected ", it->second, " (symbol '", s, "', the same as ",
               where(first.first, first.second), ")");
        }
      } else {
        fail(where(i, d), ": declared dim '", decl.str(), "' is not a constant or a symbol");
      }
    }
  }
  for (const auto &c : checks) {
    if (!c.a.bound_in(v) || !c.b.bound_in(v)) continue;  // a symbol only data can give; checked by its kernel
    if (!c.holds(v)) fail(c.describe(v));
  }
  return v;
}

}  // namespace disco
