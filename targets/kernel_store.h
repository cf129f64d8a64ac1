// Kernel objects shared by every model of a compile cache (issue #26): a
// kernel compiled for one model is linked into the next model that has a
// kernel with the same structural key (targets/host/kernel_key.h), instead of
// being compiled again. Models exported by the same tool repeat whole blocks
// (ResNet's bottlenecks in resnet50 and fcn_resnet50, the same transformer
// layer in every BERT size), so a cold compile of a model that is new to the
// cache often finds most of its kernels there already.
//
// The store is a folder in the cache root, one per compiler binary (its name
// carries the compiler's id, so a rebuilt compiler never links old code). A
// kernel is NAME.o, its function named after its key's hash so that the object
// serves any model, with NAME.key beside it: the object's checksum and the
// full key, both compared before the object is used, so that a hash
// collision or a damaged object means a compile, never a wrong kernel or a
// failed link. Entries are renamed into place, object
// first, so a reader that finds the key finds a complete object. The folder
// is one entry of the cache's LRU eviction (driver/compile_cache.h), marked
// used whenever a compile reads or adds to it.
#pragma once
#include <string>

namespace disco {

class KernelStore {
 public:
  explicit KernelStore(std::string dir) : dir_(std::move(dir)) {}
  const std::string &dir() const { return dir_; }

  // The function name of the kernel with this key: "k_" and the key's hash.
  static std::string kernel_name(const std::string &key);

  // Places the stored object of `name` at `object_path` (a hard link, or a
  // copy) when the store holds it under this same key. False otherwise.
  bool fetch(const std::string &name, const std::string &key, const std::string &object_path) const;

  // Adds a freshly compiled object. Best effort: a store that cannot be
  // written (a full disk, a read-only cache) only means later compiles compile.
  void publish(const std::string &name, const std::string &key, const std::string &object_path) const;

 private:
  std::string dir_;
};

}  // namespace disco
