// Channels-last staging, shared by the convolution and pooling kernels.
//
// oneDNN's fast convolutions and poolings want channels last (N, spatial...,
// C); with plain NC... activations 2.6 picks a gemm-based convolution that is
// several times slower, worst with a residual post-op. disco's tensors are
// plain, so each such tensor is staged: reordered into a channels-last buffer
// before the primitive (inputs) or out of one after it (the output).
//
// Between oneDNN steps of one region the copies are skipped: when every
// reader of a convolution's or pooling's result is another such step (as its
// X or as a residual), the plan marks the value channels last on both sides
// (params "channels_last_inputs", step input positions, and
// "channels_last_output"), and the buffer holds it in that layout; nothing
// else ever reads it. A tensor with one channel or one position reads the
// same either way and is never copied.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
#include <cstdint>
#include <vector>

namespace disco {

dnnl::memory::desc channels_last_desc(const dnnl::memory::dims &dims);

// True when the plain and channels-last layouts order the elements alike:
// one channel, or one spatial position.
bool same_order(const dnnl::memory::dims &dims);

// A buffer of floats aligned for vector loads, reused across runs and shapes.
class Scratch {
 public:
  float *get(size_t n);

 private:
  static constexpr size_t kAlign = 16;  // floats: 64 bytes
  std::vector<float> store_;
};

// A tensor in disco's buffer (plain or, by agreement, channels last) that the
// primitive sees channels last.
struct Staged {
  dnnl::memory user;    // disco's buffer (its handle is set per run)
  dnnl::memory inner;   // what the primitive reads or writes
  dnnl::reorder copy;   // user -> inner for inputs, inner -> user for the output; unused when !copied
  bool copied = false;  // false: `inner` views disco's buffer in place

  // `user_channels_last`: the plan keeps this tensor channels last.
  static Staged make(const dnnl::memory::dims &dims, bool output, bool user_channels_last);
  // Points the memories at disco's buffer and, when copied, at the scratch buffer.
  void bind(const void *data, Scratch &scratch);
};

}  // namespace disco
