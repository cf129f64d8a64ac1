#include "driver/aot/c_text.h"

#include <cctype>
#include <cstdio>

#include "frontend/errors.h"
#include "frontend/identifier.h"

namespace disco::aot {

std::string c_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 32 && c < 127 && c != '?') {  // '?' avoids trigraphs
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

bool is_c_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_') return false;
  return true;
}

std::string c_identifier(const std::string &s) { return identifier_from(s, "_"); }

HalideTypeCode halide_type_of(DType t) {
  if (t == DType::Undefined) fail("AOT libraries have no Halide type for dtype ", dtype_name(t));
  if (t == DType::Bool) return {"halide_type_uint", 1};  // Halide's bool: one bit, stored in a byte
  if (t == DType::BF16) return {"halide_type_bfloat", 16};
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  if (dtype_is_float(t)) return {"halide_type_float", bits};
  return {dtype_is_signed(t) ? "halide_type_int" : "halide_type_uint", bits};
}

namespace {
std::string atom_expr(const AtomNode &a, const std::map<std::string, int> &sym_index) {
  switch (a.kind) {
    case AtomNode::Sym: {
      auto it = sym_index.find(a.name);
      DISCO_CHECK(it != sym_index.end(), "symbol '", a.name,
                  "' is not bound by any input shape; AOT libraries need every size to follow from input shapes");
      return "s[" + std::to_string(it->second) + "]";
    }
    case AtomNode::FloorDiv: return "disco_fdiv(" + c_dim_expr(a.a, sym_index) + ", " + c_dim_expr(a.b, sym_index) + ")";
    case AtomNode::Mod: return "disco_fmod(" + c_dim_expr(a.a, sym_index) + ", " + c_dim_expr(a.b, sym_index) + ")";
    case AtomNode::Min: return "disco_min(" + c_dim_expr(a.a, sym_index) + ", " + c_dim_expr(a.b, sym_index) + ")";
    case AtomNode::Max: return "disco_max(" + c_dim_expr(a.a, sym_index) + ", " + c_dim_expr(a.b, sym_index) + ")";
  }
  return "0";
}
}  // namespace

std::string c_dim_expr(const Dim &d, const std::map<std::string, int> &sym_index) {
  if (d.terms().empty()) return "INT64_C(0)";
  std::string out;
  for (const auto &t : d.terms()) {
    std::string term = "INT64_C(" + std::to_string(t.coeff) + ")";
    for (const auto &a : t.atoms) term += " * " + atom_expr(*a, sym_index);
    out += (out.empty() ? "" : " + ") + term;
  }
  return "(" + out + ")";
}

}  // namespace disco::aot
