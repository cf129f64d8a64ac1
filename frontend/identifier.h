// Names from a model made safe for generated code (Halide Func names, kernel
// symbols, C identifiers, folder names): every character other than a letter
// or digit becomes '_', and `lead` goes in front of an empty name or one that
// starts with a digit. The same name always gives the same identifier, which
// keeps generated code deterministic.
#pragma once
#include <cctype>
#include <string>

namespace disco {

inline std::string identifier_from(const std::string &name, const std::string &lead) {
  std::string out;
  for (unsigned char c : name) out += std::isalnum(c) ? static_cast<char>(c) : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = lead + out;
  return out;
}

}  // namespace disco
