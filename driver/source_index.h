// The compile cache's memory of model files: a file's content key (the hash
// of its bytes that names its cache entries) under the file's identity, its
// absolute path, device, inode, size and modification and change times to the
// nanosecond. A warm start whose file has not changed finds its key here and
// its plan in the cache, and neither reads nor parses the file: parsing
// ViT-B/16's 330 MB took 2.8 s of a 2.8 s warm start (issue #26).
#pragma once
#include <string>

namespace disco {

// The content key remembered for `path` in the cache at `root`, or "" when
// none is, or the file changed since (or cannot be examined).
std::string remembered_content_key(const std::string &root, const std::string &path);

// Remembers `key` as the content key of `path` as it is now. Best effort: a
// cache that cannot be written is only slower.
void remember_content_key(const std::string &root, const std::string &path, const std::string &key);

}  // namespace disco
