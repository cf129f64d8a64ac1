// Small file helpers for the frontend and the tools that load models.
#pragma once
#include <string>

namespace disco {

// The whole file as bytes; throws naming the path when it cannot be opened.
std::string read_file(const std::string &path);

// Writes `bytes` as the whole file (replacing it); throws naming the path when
// it cannot be written, the close included.
void write_file(const std::string &path, const std::string &bytes);

// Whether anything (a file, a folder) is at `path`.
bool file_exists(const std::string &path);

}  // namespace disco
