// The x86 template of float Conv kernels (lowering/ops/window.cc: a sum over
// input channels and kernel taps, its input a ConvInput stage over padded
// coordinates), a direct convolution:
//  - tasks: one output row (one index of every dim but the width and the
//    output channels: rows, depth, batch) in parallel; a 1-D Conv's tasks
//    are blocks of output channels of one batch index;
//  - each task copies the zero-padded input rows it reads (ConvInput) once,
//    so the sum's loads are dense and carry no padding select;
//  - micro-kernel: kConvVectors vectors of output width by kConvChannels
//    output channels of sums in registers (12 of 16 with AVX2), over every
//    input channel and tap; the weight is a broadcast scalar per channel;
//  - the epilogue (bias, activation, residual) applied as the tile is written.
// specialize() branches take outputs with at least kConvChannels channels
// and at least one tile ("tiles") or one vector ("narrow") wide, edge tiles
// overlapping instead of having tails, or narrower than a vector ("masked":
// one masked vector of sums, 7x7 maps with AVX2); the generic branch guards
// its tails. All run the same loops.
// A group-1 Conv whose constant weight the host stored channels-last
// (lowering/weight_layout.h) is vectorized over output channels instead; see
// schedule_channels_last in the .cc.
#pragma once
#include "Halide.h"
#include "lowering/lower_graph.h"
#include "schedules/scheduler.h"

namespace disco {

constexpr int kConvVectors = 2;   // vectors of output width per micro-tile
constexpr int kConvChannels = 6;  // output channels per micro-tile (AVX2; 12 with AVX-512 for 12+)
// Weights stored channels-last: output positions of the width per micro-tile
// (AVX2; 12 with AVX-512), by kChannelsLastVectors vectors of output
// channels (two: 16 with AVX2 divides the channel counts networks use; 24
// overlapped at the edge of 32 and 64 and ran slower).
constexpr int kChannelsLastWidth = 6;
constexpr int kChannelsLastVectors = 2;
// Vectors of output channels in a channels-last micro-tile: kChannelsLastVectors,
// or one where the output has fewer channels than that and the registers
// allow (AVX-512's 16-31 channels, a UNet's 16: they took the
// width-vectorized kernel's 6-channel tiles, 1.6-1.9x oneDNN's time); the
// tile is then that much wider, so it keeps the same number of sums in
// registers (one vector of 16 channels by 24 positions). AVX2 keeps two
// vectors (16 channels) as its least.
int channels_last_vectors(int64_t out_channels, int lanes);
// The fewest output channels for which the host stores a Conv's weight channels-last.
int channels_last_min_outputs(int lanes);
// Convs with fewer input channels (per group) than this keep W as it is and
// the width-vectorized micro-kernel: a network's stem, 3 input channels, whose
// sum over 27 taps LLVM unrolls whole, spilling registers with the
// channels-last kernel's per-position addresses (0.67 against 0.33 ms for
// convnet's stem at 3x3x40x56 with AVX2). With AVX-512, interleaved runs of
// both kernels for that stem were within their noise (11.7-23.5 against
// 17.4-20.5 ms per 40 runs at 3x3x40x56, 93-112 against 84-120 at 4x3x96x96),
// so the rule stays.
constexpr int kChannelsLastMinInputs = 8;
// Maps of at most this many output positions are computed whole by each
// task (one image by one micro-tile of channels); larger ones row by row.
constexpr int kMapPositions = 256;

struct ConvExtents {
  KnownExtent width, channels;  // the output's width (innermost) and channels
  KnownExtent positions;        // its spatial extents' product
};

// Schedules `k` and returns true, or returns false, scheduling nothing, when
// the kernel is not a float32 Conv of that form (one output of rank >= 3, one
// sum stage of its rank, one ConvInput stage, nothing else).
bool schedule_x86_conv(LoweredKernel &k, const ConvExtents &e, const Halide::Target &target, ScheduleReport *rep);

}  // namespace disco
