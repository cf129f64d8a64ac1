// A file's bytes mapped into this process, for a plan's constants: a warm
// start then costs page-table entries instead of reading the whole file into
// a string and copying it into a second buffer (vit_b_16's constants are 330
// MB). The mapping is private and writable (copy on write): the bytes are
// never written, but a kernel handed a non-const pointer could not fault a
// read-only page even if it did, and the file itself is never changed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace disco {

class MappedFile {
 public:
  // Throws naming the path and the system's reason when the file cannot be
  // opened or mapped. An empty file maps to data() == nullptr, size() == 0.
  explicit MappedFile(const std::string &path);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace disco
