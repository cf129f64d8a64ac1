// Small pieces of C source text for the AOT generator: string literals,
// identifiers, Halide type codes and symbolic dims as C expressions.
#pragma once
#include <map>
#include <string>

#include "frontend/dim.h"
#include "frontend/dtype.h"

namespace disco::aot {

// "a\"b" for a"b; any byte outside printable ASCII as an octal escape.
std::string c_string(const std::string &s);
// A C identifier made of s: other characters become '_', a leading digit gets '_'.
std::string c_identifier(const std::string &s);
bool is_c_identifier(const std::string &s);

// The halide_type_t fields of a dtype: "halide_type_float, 32".
struct HalideTypeCode {
  const char *code;
  int bits;
};
HalideTypeCode halide_type_of(DType t);

// A dim as an int64_t C expression over the symbol array `s` (`sym_index` maps
// a symbol to its slot). Floor division and modulo call disco_fdiv/disco_fmod
// of the driver prelude, which flag a zero divisor instead of trapping.
std::string c_dim_expr(const Dim &d, const std::map<std::string, int> &sym_index);

}  // namespace disco::aot
