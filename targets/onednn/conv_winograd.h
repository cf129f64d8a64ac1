// When a oneDNN convolution runs as Winograd instead of direct.
//
// Why: oneDNN 2.6's f32 Winograd kernels (jit_wino_4x3 and jit_fp32_wino_2x3,
// AVX-512 only) run a 3x3, stride-1 convolution in 0.50-0.69 of the time of
// its direct brgconv kernel on this machine (Zen 4) wherever the map is at
// least 16x16 (0.64-0.84 for the thinnest, 16 channels in), and in 0.49-0.84
// of it on 7x7 to 14x14 maps of one image with 256 or more channels on each
// side; ONNX Runtime's MLAS has no Winograd path, and most of resnet18's time
// is these convolutions. Elsewhere it is no sure win: with two images oneDNN
// picks its 4x3 tiles, 1.10-1.19x the direct time at [2, 256, 10, 10] (0.61
// in another run) and 2x at [2, 512, 5, 5] on one thread; maps of 9x9 to 14x14
// with 48-128 channels read 0.75-1.26 across runs
// (benchmarks/results/winograd-2026-12-04.md, the table this rule was read from).
// Small maps of several images run best as one image's Winograd primitive
// (the 2x3 tiles oneDNN picks for one image) once per image: with 256 or more
// channels on each side, 0.59-0.78 of the direct time at 10x10 to 14x14 maps
// of 2 to 8 images, and 0.71-0.85 at 7x7 with 512 channels, on one and two
// threads; not at 7x7 with 256 channels (1.00-1.07), nor at 5x5 (0.71-1.04),
// nor with 128 channels on two threads (1.00-1.17)
// (benchmarks/results/winograd-per-image-2026-12-04.md).
// On an Intel Xeon (2 MiB of L2 a core), one thread, maps below 16x16: the
// 2x3 kernels ran channel counts that are not multiples of 256 1.26-2.3x
// the direct time (384 -> 256 at 13x13, AlexNet's: 1.59-1.63x; 448 -> 384 at
// 8x8, Inception-v3's: 1.49x; 256 -> 384: 1.26x), where 256, 512 and 768
// channels ran 0.76-0.99x; two threads read 0.83-1.02 for both kinds
// (benchmarks/results/winograd-channels-2026-12-06.md). So one thread takes
// such maps only with both channel counts multiples of 256.
// Those tables timed each primitive alone, its operands warm in the caches.
// Timed inside the models instead (ONEDNN_VERBOSE's times of each conv, the
// rule on and off, DenseNet-121, GoogLeNet, Inception-v3, ResNet-18/50,
// SqueezeNet and FCN on this Xeon; benchmarks/results/winograd-in-model-2026-12-06.md),
// three kinds lost that the alone tables had as wins: 32 output channels
// (DenseNet's 128 -> 32: 1.36x at 56x56, 1.13x at 28x28; GoogLeNet's 16 -> 32
// at 28x28: 1.5-2x), unpadded windows (Inception-v3's 32 -> 32 at 147x147 and
// 80 -> 192 at 71x71: 1.21-1.36x), and one image's 7x7 maps of 512 channels
// (ResNet's last stage: 1.03-1.09x). Those run direct; the rest of the rule's
// picks measured 0.57-0.89x in the models too.
// Its results differ from direct's by rounding only: the largest difference
// measured was 3e-6 of the output's largest magnitude (2048 channels in).
#pragma once
#include <cstdint>

namespace disco {

// A 2-D convolution as the rule sees it, after padding-only taps are cropped.
struct WinogradCase {
  int64_t batch = 1;  // images in the run
  int64_t groups = 1, in_channels = 0, out_channels = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0;
  bool dilated = false;
  int64_t out_h = 0, out_w = 0;  // one image's output map
  bool unpadded = false;         // no padding on any side: the map shrinks by 2
  int threads = 1;               // the team that runs it
};

enum class WinogradUse {
  kNo,        // direct
  kWhole,     // one Winograd primitive over every image
  kPerImage,  // one image's Winograd primitive, run once per image
};

// How the rule above runs the convolution. kNo everywhere when the
// environment sets DISCO_WINOGRAD=0 (for A/B runs, and for bit-for-bit
// agreement with a direct convolution); DISCO_WINOGRAD_PER_IMAGE=0 turns off
// kPerImage alone.
WinogradUse winograd_use(const WinogradCase &c);

}  // namespace disco
