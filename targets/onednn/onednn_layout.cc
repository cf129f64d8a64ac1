#include "targets/onednn/onednn_layout.h"

#include <cstdint>
#include <cstring>

#include "targets/onednn/onednn_step.h"

namespace disco {

using dnnl::memory;

dnnl::memory::desc channels_last_desc(const memory::dims &dims) {
  return blocked(dims) ? padded_blocked_desc(dims) : unblocked_desc(dims);
}

dnnl::memory::desc padded_blocked_desc(const memory::dims &dims) {
  const size_t rank = dims.size();
  using tag = memory::format_tag;
  const bool wide = channel_block() == 16;
  return memory::desc(dims, memory::data_type::f32,
                      rank == 3   ? (wide ? tag::nCw16c : tag::nCw8c)
                      : rank == 4 ? (wide ? tag::nChw16c : tag::nChw8c)
                                  : (wide ? tag::nCdhw16c : tag::nCdhw8c));
}

dnnl::memory::desc held_desc(const memory::dims &dims, bool channels_last, bool padded) {
  return padded ? padded_blocked_desc(dims) : channels_last ? channels_last_desc(dims) : plain_desc(dims);
}

dnnl::memory::desc unblocked_desc(const memory::dims &dims) {
  const size_t rank = dims.size();
  const auto tag = rank == 3   ? memory::format_tag::nwc
                   : rank == 4 ? memory::format_tag::nhwc
                               : memory::format_tag::ndhwc;
  return memory::desc(dims, memory::data_type::f32, tag);
}

int64_t channel_block() {
  // cpu_isa values are bit masks: an ISA includes avx512_core when it has all of its bits.
  static const int64_t block = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? 16 : 8;
  }();
  return block;
}

bool blocked(const memory::dims &dims) {
  return dims.size() >= 3 && dims.size() <= 5 && dims[1] > 0 && dims[1] % channel_block() == 0;
}

bool same_order(const memory::dims &dims) {
  int64_t spatial = 1;
  for (size_t d = 2; d < dims.size(); ++d) spatial *= dims[d];
  return dims[1] == 1 || spatial == 1;
}

float *Scratch::get(size_t n) {
  if (store_.size() < n + kAlign) store_.resize(n + kAlign);
  auto p = reinterpret_cast<uintptr_t>(store_.data());
  return reinterpret_cast<float *>((p + 63) & ~uintptr_t(63));
}

const void *apart_from_result(const void *data, size_t bytes, const void *out, size_t out_bytes, Scratch &copy) {
  const auto at = reinterpret_cast<uintptr_t>(data), out_at = reinterpret_cast<uintptr_t>(out);
  if (at >= out_at + out_bytes || out_at >= at + bytes) return data;
  float *c = copy.get(bytes / sizeof(float));
  std::memcpy(c, data, bytes);
  return c;
}

Staged Staged::make(const memory::dims &dims, bool output, bool user_channels_last) {
  return make(dims, output, user_channels_last, channels_last_desc(dims));
}

Staged Staged::make(const memory::dims &dims, bool output, bool user_channels_last, const memory::desc &inner) {
  return make_as(held_desc(dims, user_channels_last), output, inner);
}

Staged Staged::make_as(const memory::desc &user, bool output, const memory::desc &inner) {
  const auto &eng = onednn_engine();
  Staged s;
  s.user = memory(user, eng, nullptr);
  s.inner = memory(inner, eng, nullptr);
  // Layouts of one order still differ in size where one pads the channels.
  s.copied = user != inner && (!same_order(user.dims()) || user.get_size() != inner.get_size());
  if (s.copied) s.copy = output ? dnnl::reorder(s.inner, s.user) : dnnl::reorder(s.user, s.inner);
  return s;
}

void Staged::bind(const void *data, Scratch &scratch) {
  user.set_data_handle(const_cast<void *>(data));
  inner.set_data_handle(copied ? scratch.get(inner.get_desc().get_size() / sizeof(float)) : const_cast<void *>(data));
}

}  // namespace disco
