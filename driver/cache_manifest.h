// Checksums of a compile cache entry's files (issue #23): written last into
// an entry's private folder before it is renamed into place, and verified
// before anything of the entry is loaded (dlopen of the kernel library, mmap
// of the constants). A truncated kernel library, overwritten bytes, or a
// constants file of the right size with other values would otherwise crash
// inside dlopen or give wrong outputs silently; a bad entry is instead
// reported and compiled again. A file whose inode and change time (ctime:
// every write or truncation moves it, and no user call can set it) are those
// recorded is the file that was checksummed, and is not read again; any
// other is checksummed before use.
// The checksum (frontend/file_checksum.h) reads every byte at about memory speed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace disco {

// Writes `dir`/manifest.txt: each regular file of `dir` (sorted by name) with
// its size, checksum, inode and change time.
void write_cache_manifest(const std::string &dir);

// Checks every file the manifest lists against its size and checksum, and
// that the manifest lists every file of `dir`. Returns what is wrong (naming
// the file), or nullopt when the entry is whole.
std::optional<std::string> verify_cache_manifest(const std::string &dir);

}  // namespace disco
