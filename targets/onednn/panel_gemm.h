// A product of few rows with constant weights, Y = A B then an epilogue, for
// AVX-512 CPUs. oneDNN 2.6's f32 inner product ran bert_layer's 32-row
// products at about 125 GFLOP/s of this machine's 184 on one thread, with
// weights warm in the L3: fetching each weight from the L3 (27 GB/s on one
// core) and computing with it did not overlap. Here B is read in panels of 32
// columns, each from the L3 once and then from the L2 by every block of 8
// rows, and the next panel's lines are prefetched evenly over the current
// panel's whole computation (at 32 rows a panel computes for ~8 us and needs
// ~4 us of fetching): 140-145 GFLOP/s in the same model. The weights are
// packed by oneDNN's reorder (panel_weights_desc), so they are shared like
// every other packed weight (onednn_weights.h). AVX2 CPUs have their own
// form of it, panel_gemm_avx2, at the end of this file.
//
// This file's .cc is built with AVX-512 enabled and holds no C++ library
// code, so nothing of it can leak into code that runs on other CPUs; call
// panel_gemm only when panel_gemm_cpu() says so.
#pragma once
#include <cstdint>

namespace disco {

constexpr int kPanelColumns = 32;

// One step of the epilogue, applied to each value in order.
struct PanelOp {
  enum Kind { Add, Mul, Relu, GeluErf, Linear, Sigmoid, Swish, HardSwish } kind = Add;
  // Relu: slope below zero; Linear: a * x + b; Swish: x sigmoid(a x);
  // HardSwish: x clip(x / 6 + 1/2, 0, 1), ONNX's.
  float a = 0, b = 0;
  const float *operand = nullptr;  // Add, Mul: element (r, n) at operand[r * row_stride + n * col_stride]
  int64_t row_stride = 0, col_stride = 0;
};

struct PanelGemm {
  const float *a = nullptr;       // [rows, k], row stride lda
  const float *panels = nullptr;  // B [k, n] as n / 32 panels of [k, 32] (AVX2: see below)
  float *y = nullptr;             // [rows, n], row stride ldy
  int64_t rows = 0, k = 0, n = 0, lda = 0, ldy = 0;
  const PanelOp *ops = nullptr;
  int num_ops = 0;
  int64_t k_block = 0;  // AVX2 only: K per pass, 0 for the kernel's own (see below)
};

// Whether this CPU has AVX-512F (panel_gemm's requirement). Inline: built
// with the caller's flags, not with panel_gemm.cc's.
inline bool panel_gemm_cpu() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"); }

// The most rows onednn.matmul gives the panel product on AVX-512 CPUs (from
// kPanelMinRows, 8): 128, or 64 where a core's L2 is 2 MiB or more
// (onednn_matmul.cc says why).
int64_t panel_max_rows();

// Computes panels [first, last) of `g` (of n / 32), on the calling thread.
void panel_gemm(const PanelGemm &g, int64_t first, int64_t last);

// Panels [first, last) of `g` shared by two threads: the one with `up` walks
// up from `first`, the other down from `last`, each claiming one panel at a
// time from `*claimed` (zero before either starts). A thread slowed by a busy
// core leaves its partner more panels instead of holding it at the barrier;
// on this machine's VM the two cores' speeds differed by up to 30% for
// minutes at a time, which a static split waits out. Each walks its panels
// in order, so the next one's prefetch stays right.
void panel_gemm_shared(const PanelGemm &g, int64_t first, int64_t last, bool up, int64_t *claimed);

// The epilogue's unary steps (no Add or Mul) on n floats at `data`, in
// place, on the calling thread: the end of a oneDNN step's epilogue that
// eltwise_tail.h takes out of the primitive.
void panel_eltwise(float *data, int64_t n, const PanelOp *ops, int num_ops);

// ---- AVX2 + FMA (panel_gemm_avx2.cc) ---------------------------------------
// The same product for CPUs without AVX-512, where oneDNN 2.6 runs dense
// Linears on its gemm:jit, which packs B again on every call (17-37 GFLOP/s
// of this EPYC's ~84 at [154..256, 768] x [768, 3072] on one thread). B is
// read in panels of 16 columns, [k, 16] each, the last one zero-padded when
// n is not a multiple of 16 (so `n` need not be); tiles of 6 rows x 16
// columns (12 ymm accumulators) run over blocks of K and of rows in BLIS's
// loop order (panel_gemm_avx2.cc), so a K block's partial sums pass through
// y, and the epilogue runs on the last. PanelGemm::k_block sets the block:
// 0 takes the kernel's own; set it to k (one block) when an epilogue operand
// may share y's memory, which the partial sums would overwrite.
constexpr int kPanelColumnsAvx2 = 16;

inline bool panel_gemm_avx2_cpu() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// Panels [first, last) of `g` (of ceil(n / 16)) on the calling thread.
void panel_gemm_avx2(const PanelGemm &g, int64_t first, int64_t last);

// As panel_gemm_shared, claiming groups of 8 panels at a time from
// `*claimed` (zero before either starts).
void panel_gemm_shared_avx2(const PanelGemm &g, int64_t first, int64_t last, bool up, int64_t *claimed);

// panel_eltwise on AVX2.
void panel_eltwise_avx2(float *data, int64_t n, const PanelOp *ops, int num_ops);

}  // namespace disco
