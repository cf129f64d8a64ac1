// Kernel objects shared by every model of a compile cache (issue #26): a
// kernel compiled for one model is linked into the next model that has a
// kernel with the same structural key (targets/host/kernel_key.h), instead of
// being compiled again. Models exported by the same tool repeat whole blocks
// (ResNet's bottlenecks in resnet50 and fcn_resnet50, the same transformer
// layer in every BERT size), so a cold compile of a model that is new to the
// cache often finds most of its kernels there already. The cache root holds
// Halide's runtime object the same way (driver/compile_model.cc).
//
// The store is a folder in the cache root, one per compiler binary (its name
// carries the compiler's id, so a rebuilt compiler never links old code). A
// kernel is NAME.key, its function named after its key's hash so that the
// object serves any model: the object's checksum, the key's own hash and the
// full key. The object beside it is NAME-<checksum>.o, named after its bytes:
// two processes that publish the same kernel at once with different bytes
// (Halide's internal names differ between processes) write two objects, and
// whichever key file lands last names an object that matches it, so a key
// and its object never disagree unless something damaged them. Both are
// checked before the object is used: a damaged object or key file gives one
// warning and a compile (never a wrong kernel or a failed link), a hash
// collision (another key under this name) a compile without one. Objects are
// renamed into place before their key file, so a reader that finds the key
// finds a complete object. The folder is one entry of the cache's LRU
// eviction (driver/compile_cache.h), marked used whenever a compile reads or
// adds to it; an object gone with its folder is a compile, without a warning.
#pragma once
#include <functional>
#include <string>

namespace disco {

class KernelStore {
 public:
  // `warn` gets the one-line warning about a damaged stored object; empty: none.
  explicit KernelStore(std::string dir, std::function<void(const std::string &)> warn = {})
      : dir_(std::move(dir)), warn_(std::move(warn)) {}
  const std::string &dir() const { return dir_; }

  // The function name of the kernel with this key: "k_" and the key's hash.
  static std::string kernel_name(const std::string &key);

  // Places the stored object of `name` at `object_path` (a hard link, or a
  // copy) when the store holds it under this same key, intact. False otherwise.
  bool fetch(const std::string &name, const std::string &key, const std::string &object_path) const;

  // Adds a freshly compiled object. Best effort: a store that cannot be
  // written (a full disk, a read-only cache) only means later compiles compile.
  void publish(const std::string &name, const std::string &key, const std::string &object_path) const;

 private:
  std::string dir_;
  std::function<void(const std::string &)> warn_;
};

}  // namespace disco
