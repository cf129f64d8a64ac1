// Channels-last staging, shared by the convolution and pooling kernels.
//
// oneDNN's fast convolutions and poolings want channels last (N, spatial...,
// C); with plain NC... activations 2.6 picks a gemm-based convolution that is
// several times slower, worst with a residual post-op. Where the channels
// come in multiples of the block (8, or 16 on AVX-512: channel_block()) they
// are held blocked instead (N, C/8, spatial..., 8, oneDNN's nChw8c, or
// nChw16c): the same jit:avx2 kernels ran 10-50% faster on nChw8c
// than on nhwc, most on small maps (14x14, 7x7), and so does ONNX Runtime's
// NCHWc path. disco's tensors are
// plain, so each such tensor is staged: reordered into a channels-last buffer
// before the primitive (inputs) or out of one after it (the output).
//
// Between oneDNN steps of one region the copies are skipped: when every
// reader of a convolution's or pooling's result is another such step (as its
// X or as a residual), the plan marks the value channels last on both sides
// (params "channels_last_inputs", step input positions, and
// "channels_last_output"), and the buffer holds it in that layout; nothing
// else ever reads it. The layout is a function of the dims (channels_last_desc),
// so both sides agree. A tensor with one channel or one position reads the
// same in every layout and is never copied.
//
// A 2-D convolution's result whose channels are not a multiple of 16 and
// that only other convolutions read (an MBConv block's 24 or 40 channels) is
// held padded instead ("padded_inputs", "padded_output"): blocked, its last
// block zero-padded (padded_blocked_desc), in a buffer allocated with the
// channels rounded up to kMaxChannelBlock (PlanBuffer::channel_multiple).
// Held channels last, such a tensor was copied into and out of the padded
// layout around each blocked convolution that read or wrote it, or, on two
// threads, the wider tensor beside it out of its blocks.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
#include <cstdint>
#include <vector>

namespace disco {

// Channels in one block of the blocked layout: one vector of floats of the
// ISA oneDNN runs here, 16 where it runs avx512_core (DNNL_MAX_CPU_ISA
// counts), else 8. On AVX-512, 8-channel blocks held every convolution to
// 2.6's jit:avx2 kernels (the conv nets of the zoo sweep at about 1.8x ONNX
// Runtime's time). Decided at run time, so that plans and AOT libraries do
// not depend on the machine that compiled them (see kChannelBlocks).
int64_t channel_block();

// Every block channel_block() may return: a plan decision that depends on the
// block holds for each of them (onednn_backend.cc's concat_fills_blocks).
constexpr int64_t kChannelBlocks[] = {8, 16};
// The largest of them: a buffer that holds a tensor padded to any block.
constexpr int64_t kMaxChannelBlock = 16;

// True when `dims` is held blocked (nCw8c/16c, nChw8c/16c, nCdhw8c/16c): rank
// 3 to 5 and a channel count that is a multiple of channel_block(), so that
// the blocks need no padding and the buffer keeps the plain tensor's size.
bool blocked(const dnnl::memory::dims &dims);

// The staged layout of `dims`: blocked where blocked(dims), else nwc, nhwc or
// ndhwc. A function of the dims alone, so the two sides of an agreement (and
// a residual read as a sum post-op) pick the same one.
dnnl::memory::desc channels_last_desc(const dnnl::memory::dims &dims);

// Blocked by channel_block() whatever the channel count: oneDNN pads the last
// block with zeros (24 channels take 32). Never a layout of disco's buffers
// (their bytes are the dims' own); a primitive's staged side only.
dnnl::memory::desc padded_blocked_desc(const dnnl::memory::dims &dims);

// The layout disco's buffer holds a tensor of `dims` in: padded_blocked_desc
// where the plan holds it padded, else channels_last_desc where it keeps it
// channels last (onednn_backend.cc), else plain.
dnnl::memory::desc held_desc(const dnnl::memory::dims &dims, bool channels_last, bool padded = false);

// nwc, nhwc or ndhwc whatever the channel count: for primitives that 2.6 runs
// as reference code on the blocked layout (onednn_conv.cc).
dnnl::memory::desc unblocked_desc(const dnnl::memory::dims &dims);

// True when the plain, unblocked and blocked layouts all order the elements
// alike: one channel, or one spatial position (blocked, C/8 blocks of 8
// channels are then just the C channels in order, for every N).
bool same_order(const dnnl::memory::dims &dims);

// A buffer of floats aligned for vector loads, reused across runs and shapes.
class Scratch {
 public:
  float *get(size_t n);

 private:
  static constexpr size_t kAlign = 16;  // floats: 64 bytes
  std::vector<float> store_;
};

// `data` (`bytes` long) where it does not overlap the result [out, out +
// out_bytes), else a copy of it in `copy`. The plan may give an operand's
// buffer to the result (an in-place residual); oneDNN 2.6's gemm and
// convolutions write partial sums into the result before a post-op or the
// bias reads that operand (1600-2000x the tolerance in onednn_matmul_test).
const void *apart_from_result(const void *data, size_t bytes, const void *out, size_t out_bytes, Scratch &copy);

// A tensor in disco's buffer (plain or, by agreement, channels_last_desc) that
// the primitive sees channels last.
struct Staged {
  dnnl::memory user;    // disco's buffer (its handle is set per run)
  dnnl::memory inner;   // what the primitive reads or writes
  dnnl::reorder copy;   // user -> inner for inputs, inner -> user for the output; unused when !copied
  bool copied = false;  // false: `inner` views disco's buffer in place

  // `user_channels_last`: the plan keeps this tensor in channels_last_desc.
  // The primitive sees channels_last_desc, or `inner`; copied only where the
  // two layouts differ in order.
  static Staged make(const dnnl::memory::dims &dims, bool output, bool user_channels_last);
  static Staged make(const dnnl::memory::dims &dims, bool output, bool user_channels_last,
                     const dnnl::memory::desc &inner);
  // As make, disco's buffer laid out as `user`: a convolution's result that
  // the plan holds transposed to channels last (onednn_conv.cc's out_perm).
  static Staged make_as(const dnnl::memory::desc &user, bool output, const dnnl::memory::desc &inner);
  // Points the memories at disco's buffer and, when copied, at the scratch buffer.
  void bind(const void *data, Scratch &scratch);
};

}  // namespace disco
