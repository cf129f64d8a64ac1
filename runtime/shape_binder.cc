#include "runtime/shape_binder.h"

#include "frontend/errors.h"

namespace disco {

ShapeBinder::ShapeBinder(std::vector<InputSpec> inputs, std::vector<RuntimeCheck> checks, SymbolTable &table)
    : inputs_(std::move(inputs)), checks_(std::move(checks)) {
  // A symbol is bound where it is first declared (inputs and dims in order)
  // and every later declaration must match that.
  std::vector<std::pair<size_t, size_t>> bound_at;  // by slot, for the slots declared so far
  for (size_t i = 0; i < inputs_.size(); ++i) {
    dims_.emplace_back();
    for (size_t d = 0; d < inputs_[i].shape.size(); ++d) {
      const Dim &decl = inputs_[i].shape[d];
      DeclaredDim dd{DeclaredDim::NotASymbol};
      if (decl.is_const()) {
        dd = {DeclaredDim::Fixed, decl.as_const()};
      } else if (decl.is_symbol()) {
        const int slot = table.slot(decl.symbol_name());
        if (static_cast<size_t>(slot) >= bound_at.size()) bound_at.resize(slot + 1, {SIZE_MAX, 0});
        if (bound_at[slot].first == SIZE_MAX) {
          bound_at[slot] = {i, d};
          dd = {DeclaredDim::Binds, slot};
        } else {
          dd = {DeclaredDim::Matches, slot, bound_at[slot].first, bound_at[slot].second};
        }
      }
      dims_.back().push_back(dd);
    }
  }
  for (const RuntimeCheck &c : checks_) compiled_checks_.push_back({SlotDim(c.a, table), SlotDim(c.b, table)});
}

std::string ShapeBinder::where(size_t input, size_t dim) const {
  return "input '" + inputs_[input].name + "' dim " + std::to_string(dim);
}

void ShapeBinder::bind(const std::vector<std::vector<int64_t>> &shapes, const std::vector<DType> &dtypes,
                       BoundSymbols &values) const {
  DISCO_CHECK(shapes.size() == inputs_.size(), "expected ", inputs_.size(), " inputs, got ", shapes.size());
  values.clear();
  for (size_t i = 0; i < inputs_.size(); ++i) bind_input(i, shapes[i], dtypes[i], values);
  verify_checks(values);
}

void ShapeBinder::bind_input(size_t i, const std::vector<int64_t> &shape, DType dtype, BoundSymbols &values) const {
  const InputSpec &in = inputs_[i];
  DISCO_CHECK(dtype == in.dtype, "input '", in.name, "' has dtype ", dtype_name(dtype), ", expected ",
              dtype_name(in.dtype));
  DISCO_CHECK(shape.size() == in.shape.size(), "input '", in.name, "' has rank ", shape.size(), " (shape ",
              dims_str(shape), "), expected rank ", in.shape.size(), " ", shape_str(in.shape));
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t actual = shape[d];
    const DeclaredDim &dd = dims_[i][d];
    DISCO_CHECK(actual >= 0 && actual < (int64_t(1) << 31), where(i, d), " is ", actual, ", outside [0, 2^31)");
    switch (dd.how) {
      case DeclaredDim::Fixed:
        DISCO_CHECK(actual == dd.value, where(i, d), " is ", actual, ", expected ", dd.value, " (fixed by the model)");
        break;
      case DeclaredDim::Binds: values.set(static_cast<int>(dd.value), actual); break;
      case DeclaredDim::Matches:
        if (values[static_cast<int>(dd.value)] != actual)
          fail(where(i, d), " is ", actual, ", expected ", values[static_cast<int>(dd.value)], " (symbol '",
               in.shape[d].symbol_name(), "', the same as ", where(dd.first_input, dd.first_dim), ")");
        break;
      case DeclaredDim::NotASymbol:
        fail(where(i, d), ": declared dim '", in.shape[d].str(), "' is not a constant or a symbol");
    }
  }
}

void ShapeBinder::verify_checks(const BoundSymbols &values) const {
  for (size_t k = 0; k < checks_.size(); ++k) {
    const CompiledCheck &c = compiled_checks_[k];
    if (!c.a.bound_in(values) || !c.b.bound_in(values)) continue;  // a symbol only data can give; checked by its kernel
    if (!RuntimeCheck::relation_holds(checks_[k].kind, c.a.eval(values), c.b.eval(values)))
      fail(checks_[k].describe(values.to_map()));
  }
}

SymbolValues bind_symbols(const std::vector<InputSpec> &inputs, const std::vector<std::vector<int64_t>> &shapes,
                          const std::vector<DType> &dtypes, const std::vector<RuntimeCheck> &checks) {
  auto table = std::make_shared<SymbolTable>();
  const ShapeBinder binder(inputs, checks, *table);
  BoundSymbols values(table);
  binder.bind(shapes, dtypes, values);
  return values.to_map();
}

}  // namespace disco
