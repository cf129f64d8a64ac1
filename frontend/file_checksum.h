// A 64-bit checksum of a file's bytes, for the compile cache's integrity
// checks (driver/cache_manifest.h, targets/kernel_store.h). It reads every
// byte at about memory speed (four independent 64-bit multiply-rotate lanes), so that checking a model's 300 MB of weights
// before loading them keeps a warm start well under 0.1 s. Not for adversaries:
// it finds damage, truncation and other contents, not deliberate collisions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace disco {

uint64_t checksum_bytes(const uint8_t *data, size_t n);
// nullopt when the file cannot be opened or read.
std::optional<uint64_t> file_checksum(const std::string &path);

}  // namespace disco
