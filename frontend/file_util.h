// Small file helpers for the frontend and the tools that load models.
#pragma once
#include <string>

namespace disco {

// The whole file as bytes; throws naming the path when it cannot be opened.
std::string read_file(const std::string &path);

}  // namespace disco
