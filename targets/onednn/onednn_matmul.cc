// "onednn.matmul": ONNX MatMul (batched, with broadcasting) and Gemm (2-D,
// transposes, alpha and C as post-ops) through oneDNN's inner product (a
// constant 2-D B, the common case of a weight) or its matmul (the rest), or,
// for a constant B and some shapes, disco's own panel product (panel_gemm.h:
// on AVX-512 CPUs 8 to 64 or 128 rows by the L2, on AVX2 ones those of
// panel_avx2_takes).
//
// When B has no batch, A's batch dims fold into M: one [batch*M, K] x [K, N]
// product instead of a batch of small ones. Constant B is reordered once
// into the layout the primitive asks for.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "targets/onednn/ab_switch.h"
#include "targets/onednn/onednn_cache.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/float_copy.h"
#include "targets/onednn/onednn_step.h"
#include "targets/onednn/onednn_view.h"
#include "targets/onednn/panel_gemm.h"

namespace disco {

namespace {

using dnnl::memory;

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

std::vector<int64_t> pad_to(const std::vector<int64_t> &s, size_t rank) {
  std::vector<int64_t> p(rank - s.size(), 1);
  p.insert(p.end(), s.begin(), s.end());
  return p;
}

// Whether a strided tensor is row-major but for the strides of its dims of 1
// (a transposed [1, L, E] read as [L, 1, E] is): as a [..., K] operand, a
// dense [rows, K].
bool row_major(const StridedDims &s) {
  int64_t expect = 1;
  for (size_t d = s.dims.size(); d-- > 0;) {
    if (s.dims[d] == 1) continue;
    if (s.strides[d] != expect) return false;
    expect *= s.dims[d];
  }
  return true;
}

// The desc of a strided tensor padded with leading 1s to `rank`. A row_major
// one is plain: oneDNN 2.6's gemm matmul failed to execute a [1, 1, 5]
// result with strides [5, 1, 1] (a Linear of one row transposed, (0, 2, 1)).
memory::desc strided_desc(const StridedDims &s, size_t rank) {
  if (row_major(s)) return plain_desc(pad_to(s.dims, rank));
  int64_t span = 1;
  for (size_t i = 0; i < s.dims.size(); ++i) span = std::max(span, s.dims[i] * s.strides[i]);
  memory::dims dims(rank - s.dims.size(), 1), strides(rank - s.dims.size(), span);
  dims.insert(dims.end(), s.dims.begin(), s.dims.end());
  strides.insert(strides.end(), s.strides.begin(), s.strides.end());
  return memory::desc(dims, memory::data_type::f32, strides);
}

// The last two dims of a strided tensor.
StridedDims matrix_of(const StridedDims &s) {
  const size_t r = s.dims.size();
  return {{s.dims[r - 2], s.dims[r - 1]}, {s.strides[r - 2], s.strides[r - 1]}};
}

// oneDNN's reference implementations ("ref:any"), which run its primitives in plain loops.
bool reference_impl(const std::string &impl) { return impl.find("ref") != std::string::npos; }

OperandView read_view(const PlanStep &step, const std::string &x) {
  OperandView v;
  if (has_param(step, x + "_perm")) v.perm = param_ints(step, x + "_perm");
  if (has_param(step, x + "_reshape")) v.reshape = param_list(step, x + "_reshape");
  validate_view(v, "step " + step.label + " (" + step.extern_call + ") " + x);
  return v;
}

class MatmulKernel : public OnednnStep {
 public:
  explicit MatmulKernel(const PlanStep &step) : OnednnStep(step), cache_(kOnednnCacheCapacity) {
    trans_a_ = param_int(step, "trans_a") != 0;
    trans_b_ = param_int(step, "trans_b") != 0;
    a_view_ = read_view(step, "a");
    b_view_ = read_view(step, "b");
    if (has_param(step, "out_perm")) out_perm_ = param_ints(step, "out_perm");
    out_reshaped_ = param_flag(step, "out_reshaped");
    check(out_perm_.empty() || is_permutation(out_perm_), "out_perm ", shape_text(out_perm_),
          " is not a permutation");
    check(!(trans_a_ && a_view_.present()) && !(trans_b_ && b_view_.present()),
          "a transposed operand cannot also be a view");
  }
  size_t cached_shapes() const override { return cache_.size(); }
  void run(const ExternCall &call) override;

 private:
  // The memory layouts of one run's shapes.
  struct Layout {
    memory::desc src, wei, dst;
    std::vector<memory::desc> operands;
    bool flat = false;  // src and dst are 2-D: [rows, K] and [rows, N]
    // Set when A's rows (a view) are not dense: its strided desc,
    // reordered into the dense [rows, K] that `src` describes (rows_of).
    memory::desc src_view;
    // Set when the folded result is written transposed: its strided desc,
    // into which the dense [rows, N] that `dst` describes is reordered
    // (scatter_rows).
    memory::desc dst_view;
  };
  struct Entry {
    dnnl::primitive prim;
    memory src, wei, dst, bias_mem;  // wei: the user's B, unused when `packed` is set
    std::vector<std::pair<size_t, memory>> binary;  // epilogue operands read by binary post-ops
    int bias = -1, sum = -1;  // epilogue operands taken as the bias and as dst's initial value (Epilogue::lower)
    std::shared_ptr<memory> packed;  // constant B in the primitive's layout
    std::unordered_map<int, memory> args;
    std::string impl;
    // Set for panel_gemm.h's product instead of a primitive: the epilogue, and
    // per step the epilogue operand it reads (-1: none).
    bool panel = false;
    bool panel_avx2 = false;  // panel_gemm_avx2's panels of 16 columns, not panel_gemm's of 32
    std::vector<PanelOp> panel_ops;
    std::vector<int> panel_operand;
    struct alignas(64) Claims {
      int64_t claimed = 0;
    };
    std::vector<Claims> panel_claims;  // per pair of threads (panel_gemm_shared)
    // A product that oneDNN would run on its reference code, staged through
    // dense copies instead (make_matmul): operands broadcast into buffers of
    // the result's dims, and reorders of A, B or the result.
    struct Expanded {
      size_t operand;
      memory::dims from, to;
      std::vector<float> data;
    };
    std::vector<Expanded> expanded;
    struct Staged {
      dnnl::primitive reorder;  // null: not staged
      memory user;              // the strided tensor the reorder reads (A, B) or writes (the result)
      std::vector<float> dense;
      std::unordered_map<int, memory> args;
    };
    Staged staged_src, staged_wei, staged_dst;
  };
  Layout layout(const StridedDims &a, const StridedDims &b, const StridedDims &y, const Epilogue &e) const;
  Entry make_entry(const ExternTensor &b, const Layout &l, const Epilogue &e);
  bool make_inner_product(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en);
  bool make_panel(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en);
  void run_panel(Entry &en, const Epilogue &e, const float *a, float *y, int64_t rows) const;
  void make_matmul(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en);
  void rows_of(Entry &en, const Layout &l);
  void scatter_rows(Entry &en, const Layout &l);
  // Reorders between the user's tensor (`user`, strided) and the dense one the primitive reads or
  // writes; returns the reorder's implementation.
  std::string stage(Entry::Staged &st, const memory::desc &user, memory &dense, bool into_dense);
  // The primitive's execution arguments, their data set per run: A, Y and B
  // (laid out as `user_wei`; constant weights the primitive wants as
  // `primitive_wei` instead are reordered once), the bias (when en.bias is set,
  // laid out as `bias_desc`) and the binary post-ops' operands.
  void bind_args(Entry &en, const Layout &l, const ExternTensor &b, const memory::desc &user_wei,
                 const memory::desc &primitive_wei, const Epilogue::Lowered &post, const memory::desc &bias_desc);
  void clear_cache() override { cache_.clear(); }

  bool trans_a_ = false, trans_b_ = false;
  OperandView a_view_, b_view_;   // A and B read in place through a Reshape and Transpose
  std::vector<int64_t> out_perm_;  // the result written transposed; empty: as it is
  bool out_reshaped_ = false;      // ... and then reshaped, so the output's shape is not checked dim by dim
  ShapeLruCache<Entry> cache_;
  std::vector<Scratch> alias_copies_;  // per operand: one read from the result's own memory (run)
};

MatmulKernel::Layout MatmulKernel::layout(const StridedDims &a, const StridedDims &b, const StridedDims &y,
                                          const Epilogue &e) const {
  const std::vector<int64_t> &out = y.dims;
  const size_t r = out.size();
  const std::vector<int64_t> pb = pad_to(b.dims, r);
  const int64_t m = out[r - 2], n = out[r - 1], k = trans_a_ ? a.dims[0] : a.dims.back();
  // Folding A's batch into M needs B without batch, a dense result, and
  // operands that are either constant or full across batch and M. A read
  // through a view folds too (the input of torch's MultiheadAttention,
  // [B, L, E] transposed to [L, B, E] for its fused qkv Linear, otherwise a
  // batch of L products of one row each: vit_b_16's took twice the time of
  // its MLP's larger products): in place when its rows are dense, else
  // through a reorder into dense rows (rows_of).
  // A result written transposed folds too (convnext's Linear layers, whose
  // result is permuted back to channels first): the product writes dense
  // rows, which one reorder scatters (scatter_rows). Unfolded, such a product
  // was a batched matmul whose weights oneDNN left unpacked: 1.4x the time
  // at convnext's [49, 3072] x [3072, 768] (benchmarks/results/fold-transposed-2026-12-05.md).
  bool fold = r > 2 && product(pb, 0, r - 2) == 1;
  for (const auto &o : e.operands) {
    const bool ones = product(o.dims, 0, r - 1) == 1;
    bool full = true;
    for (size_t d = 0; d + 1 < r; ++d) full = full && o.dims[d] == out[d];
    fold = fold && (ones || full);
  }
  Layout l;
  const memory::desc wei2 =
      trans_b_ ? memory::desc({k, n}, memory::data_type::f32, memory::dims{1, k}) : strided_desc(matrix_of(b), 2);
  if (fold) {
    const int64_t rows = product(out, 0, r - 1);
    l.src = plain_desc({rows, k});
    if (a_view_.present() && !row_major(a)) l.src_view = strided_desc(a, a.dims.size());
    // (A permutation that leaves the result's memory dense, one row or one
    // column of h and w, needs no reorder.)
    if (!out_perm_.empty() && strided_desc(y, r) != plain_desc(out)) l.dst_view = strided_desc(y, r);
    l.wei = wei2;
    l.dst = plain_desc({rows, n});
    for (const auto &o : e.operands) l.operands.push_back(plain_desc({product(o.dims, 0, r - 1), o.dims[r - 1]}));
    l.flat = true;
    return l;
  }
  l.src = trans_a_ ? memory::desc({m, k}, memory::data_type::f32, memory::dims{1, m}) : strided_desc(a, r);
  l.wei = trans_b_ ? wei2 : strided_desc(b, r);
  l.dst = strided_desc(y, r);
  for (const auto &o : e.operands) l.operands.push_back(plain_desc(o.dims));
  l.flat = r == 2 && !a_view_.present() && out_perm_.empty();
  return l;
}

// Constant 2-D weights and a 2-D A: with the weights in cache, oneDNN 2.6's
// inner product runs these 1.2x (large M) to 5x (M = 1) faster than its
// matmul. Weights that stay in memory between runs (bert_layer's 2.4 and 9.4
// MB) change that for many rows: at 128 rows the matmul was 6% faster, at 32
// rows the inner product 3%, at 512 they tied. So the inner product takes
// small M, and any M with weights that fit in half of a 4 MiB L2.
// Its bias takes a leading Add of a [N] operand, and a sum post-op over a
// destination filled with the first full-size Add's operand replaces that
// binary post-op (with which 2.6 would fall back to a slower gemm-based one).
constexpr int64_t kInnerProductMaxRows = 64;
constexpr int64_t kInnerProductMaxColdWeights = 2 << 20;

bool MatmulKernel::make_inner_product(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en) {
  if (!b.constant || b.shape.size() != 2 || trans_a_ || b_view_.present() || !l.flat) return false;
  const memory::dims dst = l.dst.dims();
  const int64_t rows = dst[0], k = l.src.dims()[1], n = dst[1];
  if (rows > kInnerProductMaxRows && k * n * static_cast<int64_t>(sizeof(float)) > kInnerProductMaxColdWeights)
    return false;
  auto shaped = [&](size_t i, const memory::dims &want) { return l.operands[i].dims() == want; };
  if (!e.ops.empty() && e.ops[0].kind == OnednnPostOp::Add && shaped(0, {1, n})) en.bias = 0;
  for (size_t k2 = 0, i = 0; k2 < e.ops.size() && en.sum < 0; ++k2) {
    if (e.ops[k2].num_operands() == 0) continue;
    if (e.ops[k2].kind == OnednnPostOp::Add && static_cast<int>(i) != en.bias && shaped(i, dst))
      en.sum = static_cast<int>(i);
    ++i;
  }
  // B is [K, N] (or [N, K] when transposed); the inner product reads weights as [N, K].
  const memory::desc user_wei({n, k}, memory::data_type::f32, trans_b_ ? memory::dims{k, 1} : memory::dims{1, n});
  const memory::desc bias_desc = en.bias >= 0 ? plain_desc({n}) : memory::desc();
  Epilogue::Lowered post;
  dnnl::inner_product_forward::primitive_desc pd;
  // A sum after other post-ops (the residual added after a Relu, at one row)
  // came back as oneDNN's reference code: then the Add stays a binary
  // post-op; still reference code or no primitive, the matmul takes it.
  for (bool made = false; !made;) {
    post = e.lower(l.operands, en.bias, en.sum);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post.ops);
    user_scratchpad(attr);
    try {
      const memory::desc wei({n, k}, memory::data_type::f32, memory::format_tag::any);
      pd = dnnl::inner_product_forward::primitive_desc(
          dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, l.src, wei, bias_desc, l.dst), attr,
          onednn_engine());
      made = !reference_impl(pd.impl_info_str());
    } catch (const dnnl::error &) {
    }
    if (!made && en.sum >= 0) {
      en.sum = -1;
    } else if (!made) {
      en.bias = -1;
      return false;  // the matmul takes it, staged if it must be (make_matmul)
    }
  }
  made_primitive(pd);
  en.prim = dnnl::inner_product_forward(pd);
  en.impl = std::string("inner_product ") + pd.impl_info_str();
  bind_args(en, l, b, user_wei, pd.weights_desc(), post, bias_desc);
  add_scratchpad(pd, en.args);
  return true;
}

// 8 to 128 rows, constant 2-D weights and an epilogue of what panel_gemm.h
// applies: its product rather than oneDNN's. Measured in one process, two
// sessions alternating in blocks of 20-30 runs, weights warm (panel time over
// oneDNN's), on one thread: bert_layer at 16, 32, 64 and 128 rows 0.78,
// 0.80-0.88, 0.82 and 0.92-0.95; bert_small4 at 64 rows 0.96; mlp at 16 rows
// 0.91. At 256 rows it was even (0.98), at 512 slower (1.02), and at one row
// too (mlp: 1.09), where one row's two accumulators wait on each other.
// On two threads, the panels split in halves won or lost with the machine's
// state (bert_layer at 32 rows 0.89-1.06): one core of this VM often ran up
// to 30% slower than the other for minutes, and a static split waits for it.
// Shared by claiming (panel_gemm_shared), bert_layer at 32 rows ran at
// 0.82-0.95 of oneDNN's time in eight rounds of nine (1.02 in one), at 128
// rows 0.92-0.96; but with weights that stay in the L2 (bert_small4, 1 MB,
// 0.96-1.05) oneDNN's fetches cost nothing to hide, so teams of more than one
// thread take the panel product only for weights beyond that.
// Those measurements were on an AMD Zen 5 with a 1 MiB L2 per core. On an
// Intel Xeon with a 2 MiB L2 (AVX-512, 48 KiB L1d), oneDNN's brgemm matmul
// overtook the panel product between 64 and 96 rows, on one thread and two
// (t5, gpt2 and llama blocks at 16 to 128 rows; panel time over oneDNN's at
// 128 rows 1.04-1.08 on one thread, 1.05-1.09 on two; at 64, 0.87-1.04 and
// 0.95-1.06; at 32, 0.79-0.92 and 0.89-0.98;
// benchmarks/results/panel-rows-2026-12-06.md): a larger L2 keeps more of
// oneDNN's weight blocks near. So the row limit follows the L2.
constexpr int64_t kPanelMinRows = 8;
constexpr int64_t kPanelMaxRows = 128;
constexpr int64_t kPanelMaxRowsLargeL2 = 64;  // from a 2 MiB L2 per core
constexpr int64_t kPanelMinTeamWeights = 2 << 20;

// B [K, N] as ceil(N / width) panels of [K, width]: a blocked layout for
// oneDNN's reorder, which zero-fills the last panel's columns past N.
memory::desc panel_weights_desc(int64_t k, int64_t n, int64_t width) {
  dnnl_memory_desc_t md;
  const dnnl_dims_t dims = {k, n};
  dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab);
  auto &blk = md.format_desc.blocking;
  md.padded_dims[1] = (n + width - 1) / width * width;
  blk.inner_nblks = 1;
  blk.inner_blks[0] = width;
  blk.inner_idxs[0] = 1;
  blk.strides[0] = width;
  blk.strides[1] = k * width;
  return memory::desc(md);
}

// On AVX2 CPUs, the products with B's rows a multiple of 2 KiB apart (n a
// multiple of 512): there oneDNN 2.6's gemm:jit (more than 64 rows, weights
// over 2 MiB: make_inner_product), which packs B on every call, ran at about
// half its speed at other n. On this EPYC at 154 rows and K = 768,
// panel_gemm_avx2's time over gemm:jit's was 0.56-0.78 for n = 1024, 1536,
// 2048, 2560, 3072, 3584 and 4096, and 0.98-1.03 at 1280, 2304 and 2816,
// where the two kernels ran at one speed (those stayed with oneDNN until the
// unrolled kernel, below). So
// the AVX2 panel product takes the transformers' MLPs (n = 2048, 3072, and
// 512 from K = 2048) and fused qkv of 1536: 0.50-0.85 of gemm:jit's time at
// 128 to 256 rows on one thread, 0.45-0.99 on two. Against the inner
// product that [512, 512] weights (1 MiB) get, 0.72-0.80 at 128 to 256
// rows on one thread, 0.71-1.00 on two. At 394 rows (vit_b_16 at batch 2)
// it was mixed (0.67-1.10 in the quieter run, 0.76-1.32 in a loaded one),
// and up to 64 rows oneDNN's inner product won as often as it lost: those
// stay with oneDNN. benchmarks/results/panel-avx2-2026-12-02.md.
// With its k loop unrolled (results/panel-unroll-2026-12-02.md) the panel
// product also runs the other widths at 0.89-0.97 of gemm:jit's time on
// one thread (N = 768, 2304 and 384 at 128 to 256 rows: vit's qkv and
// projections, gpt2's, llama's; thread CPU time, interleaved), and at 1.00
// to 1.04 at N = 1000 (a last panel of 8 columns) and at 80 rows: so N a
// multiple of 16 (whole panels) is enough. Likewise up to 448 rows: 0.93-0.96
// at 394 (vit_b_16 at batch 2) and 448; at 512 and 600, 0.94-1.03.
constexpr int64_t kPanelAvx2MaxRows = 448;
constexpr int64_t kPanelAvx2Columns = 16;
constexpr int64_t kPanelAvx2MinWeights = 1 << 20;

// Also 2 to 8 rows (a classifier head at a small batch) with weights of
// 1 MiB and more, any n: 2.6's inner product packs B on every call from two
// rows on (960 x 1280 weights: 0.45 ms at 2 rows, 0.08 at one, hot), which
// the panel product's packed weights never do.
constexpr int64_t kPanelAvx2FewRows = 8;

// And 9 to 64 rows where n is a multiple of 512 (the inner product's gemm:jit
// is slow there too), weights of 1 MiB and more: once its tiles kept their
// accumulators in registers, the panel product ran these at 0.63-0.81 of the
// inner product's time on one thread (16, 32 and 64 rows; N = 512 to 3072,
// K = 512 to 2048; convnext_tiny's last stage, 49 x 768 x 3072 with GELU,
// 0.76-0.80), while at N = 768 and 2304 it was 0.90-1.07, so those stay.
// Thread CPU time, interleaved, loaded machine
// (benchmarks/results/convnext-2026-12-02.md).
constexpr int64_t kPanelAvx2WideColumns = 512;

bool panel_avx2_takes(int64_t rows, int64_t k, int64_t n) {
  const bool big = k * n * static_cast<int64_t>(sizeof(float)) >= kPanelAvx2MinWeights;
  if (rows < 2) return false;
  if (rows <= kPanelAvx2FewRows) return big;
  if (rows <= kInnerProductMaxRows) return big && n % kPanelAvx2WideColumns == 0;
  return rows <= kPanelAvx2MaxRows && big && n % kPanelAvx2Columns == 0;
}

// DISCO_PANEL_GEMM=0 (ab_switch.h) leaves the products to oneDNN.
bool MatmulKernel::make_panel(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en) {
  const bool avx512 = panel_gemm_cpu(), avx2 = !avx512 && panel_gemm_avx2_cpu();
  if (!b.constant || b.shape.size() != 2 || trans_a_ || b_view_.present() || !l.flat || !(avx512 || avx2) ||
      l.src != plain_desc(l.src.dims()) || switched_off("DISCO_PANEL_GEMM"))
    return false;
  const memory::dims dst = l.dst.dims();
  const int64_t rows = dst[0], k = l.src.dims()[1], n = dst[1];
  if (k == 0) return false;
  if (avx512) {
    if (rows < kPanelMinRows || rows > panel_max_rows() || n % kPanelColumns != 0) return false;
    if (omp_get_max_threads() > 1 && k * n * static_cast<int64_t>(sizeof(float)) <= kPanelMinTeamWeights) return false;
  } else if (!panel_avx2_takes(rows, k, n)) {
    return false;
  }
  // Built aside and kept only when every step is one panel_gemm applies.
  std::vector<PanelOp> ops;
  std::vector<int> operands;
  size_t operand = 0;
  for (const auto &op : e.ops) {
    PanelOp p;
    int reads = -1;
    if (!to_panel_op(op, &p)) return false;
    if (p.kind == PanelOp::Add || p.kind == PanelOp::Mul) {
      const memory::dims od = l.operands.at(operand).dims();
      if (od.size() != 2 || (od[0] != 1 && od[0] != rows) || (od[1] != 1 && od[1] != n)) return false;
      p.row_stride = od[0] == 1 ? 0 : od[1];
      p.col_stride = od[1] == 1 ? 0 : 1;
      reads = static_cast<int>(operand++);
    } else if (op.num_operands() != 0) {
      return false;
    }
    ops.push_back(p);
    operands.push_back(reads);
  }
  std::shared_ptr<memory> packed =
      packed_weights(l.wei, b.data, panel_weights_desc(k, n, avx512 ? kPanelColumns : kPanelColumnsAvx2));
  if (reinterpret_cast<uintptr_t>(packed->get_data_handle()) % 64 != 0) return false;  // panel_gemm's aligned loads
  en.packed = std::move(packed);
  en.panel_ops = std::move(ops);
  en.panel_operand = std::move(operands);
  en.panel = true;
  en.panel_avx2 = avx2;
  en.impl = avx2 ? "panel_gemm avx2" : "panel_gemm avx512";
  made_own_kernel();
  return true;
}

// The epilogue's operands are this run's: set in the entry's steps, not in a
// copy made per run.
void MatmulKernel::run_panel(Entry &en, const Epilogue &e, const float *a, float *y, int64_t rows) const {
  for (size_t i = 0; i < en.panel_ops.size(); ++i)
    if (en.panel_operand[i] >= 0) en.panel_ops[i].operand = e.operands[en.panel_operand[i]].data;
  const memory::dims wd = en.packed->get_desc().dims();
  PanelGemm g;
  g.a = a;
  g.panels = static_cast<const float *>(en.packed->get_data_handle());
  g.y = y;
  g.rows = rows;
  g.k = g.lda = wd[0];
  g.n = g.ldy = wd[1];
  g.ops = en.panel_ops.data();
  g.num_ops = static_cast<int>(en.panel_ops.size());
  const int64_t width = en.panel_avx2 ? kPanelColumnsAvx2 : kPanelColumns, panels = (g.n + width - 1) / width;
  // panel_gemm_avx2 keeps partial sums in y between blocks of K: an operand
  // in y's memory (a residual summed in place) takes K in one block.
  const float *y_end = y + rows * g.ldy;
  for (const PanelOp &op : en.panel_ops)
    if (op.operand && op.operand < y_end &&
        op.operand + (rows - 1) * op.row_stride + (g.n - 1) * op.col_stride >= y)
      g.k_block = g.k;
  auto alone = [&](int64_t first, int64_t last) {
    en.panel_avx2 ? panel_gemm_avx2(g, first, last) : panel_gemm(g, first, last);
  };
  const int team = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), panels));
  if (team <= 1) {
    alone(0, panels);
    return;
  }
  // Threads in pairs, each pair on a share of the panels in proportion to
  // its threads, the two of a pair balancing it between them.
  const int pairs = (team + 1) / 2;
  if (static_cast<int>(en.panel_claims.size()) < pairs) en.panel_claims.resize(pairs);
  for (int i = 0; i < pairs; ++i) en.panel_claims[i].claimed = 0;
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads(), pair = t / 2;
    const int64_t first = panels * (2 * pair) / nt, last = panels * std::min(2 * pair + 2, nt) / nt;
    if (2 * pair + 1 == nt)
      alone(first, last);
    else if (en.panel_avx2)
      panel_gemm_shared_avx2(g, first, last, t % 2 == 0, &en.panel_claims[pair].claimed);
    else
      panel_gemm_shared(g, first, last, t % 2 == 0, &en.panel_claims[pair].claimed);
  }
}

void MatmulKernel::bind_args(Entry &en, const Layout &l, const ExternTensor &b, const memory::desc &user_wei,
                             const memory::desc &primitive_wei, const Epilogue::Lowered &post,
                             const memory::desc &bias_desc) {
  const auto &eng = onednn_engine();
  en.src = memory(l.src, eng, nullptr);
  en.dst = memory(l.dst, eng, nullptr);
  en.wei = memory(user_wei, eng, nullptr);
  if (b.constant && primitive_wei != user_wei) en.packed = packed_weights(user_wei, b.data, primitive_wei);
  en.args = {{DNNL_ARG_SRC, en.src}, {DNNL_ARG_WEIGHTS, en.packed ? *en.packed : en.wei}, {DNNL_ARG_DST, en.dst}};
  if (en.bias >= 0) {
    en.bias_mem = memory(bias_desc, eng, nullptr);
    en.args[DNNL_ARG_BIAS] = en.bias_mem;
  }
  for (size_t i = 0; i < l.operands.size(); ++i)
    if (post.args[i]) {
      en.binary.emplace_back(i, memory(l.operands[i], eng, nullptr));
      en.args[post.args[i]] = en.binary.back().second;
    }
}

bool dense(const memory::desc &d) { return d == plain_desc(d.dims()); }

// A binary post-op operand of `od` into a result of `dd` that oneDNN's JIT
// gemm reads as it is: full, or varying along the last dim only.
bool operand_read_as_is(const memory::dims &od, const memory::dims &dd) {
  if (od == dd) return true;
  for (size_t d = 0; d + 1 < od.size(); ++d)
    if (od[d] != 1) return false;
  return true;
}

std::string MatmulKernel::stage(Entry::Staged &st, const memory::desc &user, memory &dense_mem, bool into_dense) {
  const auto &eng = onednn_engine();
  st.user = memory(user, eng, nullptr);
  st.dense.resize(static_cast<size_t>(product(dense_mem.get_desc().dims(), 0, user.dims().size())));
  dense_mem.set_data_handle(st.dense.data());
  const memory &from = into_dense ? st.user : dense_mem, &to = into_dense ? dense_mem : st.user;
  auto pd = guarded("create a reorder", [&] { return dnnl::reorder::primitive_desc(from, to); });
  st.reorder = dnnl::reorder(pd);
  st.args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return pd.impl_info_str();
}

// oneDNN 2.6 on AVX2 runs some matmul forms on its reference code, 100x to
// 1000x slower than its JIT gemm: a result whose last dim is not contiguous
// (a Linear whose result is transposed, as in convnext: 148 s a run for 18
// such products), and binary post-op operands broadcast in some patterns
// (t5's position bias [1, 8, 77, 77] over a batch of 2: 1.9 s for a product
// that the JIT gemm runs in about 0.5 ms). Probed over every broadcast of an operand into
// [2, 3, 5, 7]: full, scalar and [.., 1, N] operands ran the JIT gemm; most
// others, [1, 1, M, N], [1, H, M, N] or [B, 1, M, 1] among them, did not.
// So when the primitive comes back as a reference implementation, the
// product is staged: first such operands broadcast into dense copies, then
// also a dense result that a reorder scatters, then also dense copies of A
// and a variable B; the first staging that gets a JIT kernel is kept (if
// none does, the direct form, without copies). For convnext's transposed
// Linear results this measured a little faster than leaving the Transpose to
// the host backend (benchmarks/results/onednn-ref-2026-12-02.md): the reorder
// costs about what the host kernel's strided reads did.
void MatmulKernel::make_matmul(const ExternTensor &b, const Layout &l, const Epilogue &e, Entry &en) {
  // A leading Add of a [.., 1, N] operand is the primitive's bias rather than
  // a binary post-op: 1-5% faster on bert_layer at 128 and 512 rows (same
  // process, same packed weights, alternating).
  const memory::dims dst_dims = l.dst.dims();
  memory::dims bias_dims(dst_dims.size(), 1);
  bias_dims.back() = dst_dims.back();
  const int bias = !e.ops.empty() && e.ops[0].kind == OnednnPostOp::Add && l.operands[0].dims() == bias_dims ? 0 : -1;
  struct Attempt {
    Layout l;
    std::vector<size_t> expand;  // operands broadcast into dense copies
    int bias;
    Epilogue::Lowered post;
    dnnl::matmul::primitive_desc pd;
  };
  auto attempt = [&](const Layout &sl, const std::vector<size_t> &expand) {
    Attempt a{sl, expand, bias, {}, {}};
    // Constant weights: let oneDNN pick their layout, then reorder them once.
    const memory::desc wei =
        b.constant ? memory::desc(sl.wei.dims(), memory::data_type::f32, memory::format_tag::any) : sl.wei;
    auto make_pd = [&] {
      dnnl::primitive_attr attr;
      attr.set_post_ops(a.post.ops);
      user_scratchpad(attr);
      const memory::desc bias_desc = a.bias >= 0 ? plain_desc(bias_dims) : memory::desc();
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(sl.src, wei, bias_desc, sl.dst), attr, onednn_engine());
    };
    a.post = e.lower(sl.operands, a.bias, -1);
    try {
      a.pd = make_pd();
    } catch (const dnnl::error &) {
      a.bias = -1;  // all as post-ops
      a.post = e.lower(sl.operands, -1, -1);
      a.pd = guarded("create a matmul primitive", make_pd);
    }
    return a;
  };
  Attempt chosen = attempt(l, {});
  Layout staged = l;
  std::vector<size_t> expand;
  for (int step = 1; step <= 3 && reference_impl(chosen.pd.impl_info_str()); ++step) {
    bool changed = false;
    if (step == 1) {
      for (size_t i = 0; i < l.operands.size(); ++i)
        if (static_cast<int>(i) != bias && !operand_read_as_is(l.operands[i].dims(), dst_dims)) {
          expand.push_back(i);
          staged.operands[i] = plain_desc(dst_dims);
          changed = true;
        }
    } else if (step == 2) {
      changed = !dense(staged.dst);
      staged.dst = plain_desc(dst_dims);
    } else {
      changed = !dense(staged.src) || (!b.constant && !dense(staged.wei));
      staged.src = plain_desc(staged.src.dims());
      if (!b.constant) staged.wei = plain_desc(staged.wei.dims());
    }
    if (!changed) continue;
    Attempt a = attempt(staged, expand);
    if (!reference_impl(a.pd.impl_info_str())) chosen = std::move(a);
  }
  const Layout &cl = chosen.l;
  en.bias = chosen.bias;
  made_primitive(chosen.pd);
  en.prim = dnnl::matmul(chosen.pd);
  en.impl = std::string("matmul ") + chosen.pd.impl_info_str();
  bind_args(en, cl, b, b.constant ? l.wei : cl.wei, chosen.pd.weights_desc(), chosen.post, plain_desc(bias_dims));
  add_scratchpad(chosen.pd, en.args);
  std::string staging;
  for (size_t i : chosen.expand) {
    en.expanded.push_back(
        {i, l.operands[i].dims(), dst_dims, std::vector<float>(product(dst_dims, 0, dst_dims.size()))});
    staging += " operand " + std::to_string(i) + " broadcast;";
  }
  auto note = [&](const char *what, const std::string &reorder) {
    staging += std::string(" ") + what + " by reorder " + reorder + ";";
  };
  if (cl.src != l.src) note("dense A", stage(en.staged_src, l.src, en.src, true));
  if (!b.constant && cl.wei != l.wei) note("dense B", stage(en.staged_wei, l.wei, en.wei, true));
  if (cl.dst != l.dst) note("dense result", stage(en.staged_dst, l.dst, en.dst, false));
  if (!staging.empty()) en.impl += " (staged:" + staging.substr(0, staging.size() - 1) + ")";
}

MatmulKernel::Entry MatmulKernel::make_entry(const ExternTensor &b, const Layout &l, const Epilogue &e) {
  Entry en;
  if (!make_panel(b, l, e, en) && !make_inner_product(b, l, e, en)) make_matmul(b, l, e, en);
  if (l.src_view) rows_of(en, l);
  if (l.dst_view) scatter_rows(en, l);
  return en;
}

// A folded result written transposed: the product writes the dense rows of
// staged_dst, then a reorder scatters them into the user's strided result.
void MatmulKernel::scatter_rows(Entry &en, const Layout &l) {
  memory rows(plain_desc(l.dst_view.dims()), onednn_engine(), nullptr);
  const std::string impl = stage(en.staged_dst, l.dst_view, rows, false);
  if (!en.panel) en.dst.set_data_handle(en.staged_dst.dense.data());
  en.impl += " (result's rows by reorder " + impl + ")";
}

// A viewed A whose rows are not row_major, reordered per run into the
// dense [rows, K] that the product reads (about 1% of the product's time at
// vit_b_16's [197, 2, 768]).
void MatmulKernel::rows_of(Entry &en, const Layout &l) {
  memory rows(plain_desc(l.src_view.dims()), onednn_engine(), nullptr);
  const std::string impl = stage(en.staged_src, l.src_view, rows, true);
  if (!en.panel) en.src.set_data_handle(en.staged_src.dense.data());
  en.impl += " (A's rows by reorder " + impl + ")";
}

void MatmulKernel::run(const ExternCall &call) {
  const ExternTensor &a = input(call, 0, "A"), &b = input(call, 1, "B");
  check(call.outputs.size() == 1 && call.outputs[0].dtype == DType::F32, "expects one float32 output");
  const ExternTensor &y = call.outputs[0];
  StridedDims va, vb;
  try {
    va = a_view_.apply(a.shape, "A");
    vb = b_view_.apply(b.shape, "B");
  } catch (const Error &err) {
    error(err.what());
  }
  const std::vector<int64_t> &sa = va.dims, &sb = vb.dims;  // A and B as the MatMul sees them
  const size_t ra = sa.size(), rb = sb.size();
  check(ra >= 2 && rb >= 2, "A ", shape_text(sa), " and B ", shape_text(sb), " must have rank >= 2");
  check((!trans_a_ || ra == 2) && (!trans_b_ || rb == 2), "transposed operands must be 2-D");
  const int64_t m = trans_a_ ? sa[1] : sa[ra - 2], k = trans_a_ ? sa[0] : sa[ra - 1];
  const int64_t kb = trans_b_ ? sb[1] : sb[rb - 2], n = trans_b_ ? sb[0] : sb[rb - 1];
  check(k == kb, "A ", shape_text(sa), " and B ", shape_text(sb), " disagree on K (", k, " vs ", kb, ")");
  const size_t r = std::max(ra, rb);
  const std::vector<int64_t> pa = pad_to(sa, r), pb = pad_to(sb, r);
  std::vector<int64_t> out(r);
  for (size_t d = 0; d + 2 < r; ++d) {
    check(pa[d] == pb[d] || pa[d] == 1 || pb[d] == 1, "batch dim ", d, " of A ", shape_text(sa), " and B ",
          shape_text(sb), " does not broadcast");
    out[d] = pa[d] == 1 ? pb[d] : pa[d];
  }
  out[r - 2] = m;
  out[r - 1] = n;
  StridedDims vy = dense_layout(out);
  if (out_perm_.empty()) {
    check(y.shape == out, "output is ", shape_text(y.shape), ", expected ", shape_text(out));
  } else {
    check(out_perm_.size() == r, "out_perm ", shape_text(out_perm_), " does not fit the result ", shape_text(out));
    vy = scattered_layout(out, out_perm_);
    const std::vector<int64_t> t = permuted(out, out_perm_);
    check(out_reshaped_ ? y.num_elements() == product(t, 0, r) : y.shape == t, "output is ", shape_text(y.shape),
          ", expected the result ", shape_text(out), " transposed to ", shape_text(t),
          out_reshaped_ ? " and reshaped" : "");
  }
  if (y.num_elements() == 0) return;
  Epilogue e = epilogue(call, 2, out);
  float *dst = static_cast<float *>(y.data);
  if (k == 0) {  // an empty sum: zeros, then the epilogue
    std::vector<float> dense(static_cast<size_t>(y.num_elements()), 0.0f);
    apply_post_ops_scalar(dense.data(), out, e.ops, e.operands);
    copy_to_layout(dense.data(), dst, vy);
    return;
  }
  use_team(team_for(2.0 * static_cast<double>(y.num_elements()) * static_cast<double>(k)));
  const std::vector<int64_t> key = shape_key(call);
  Entry *en = cache_.find(key);
  if (!en) en = &cache_.insert(key, make_entry(b, layout(va, vb, vy, e), e));
  // Staged operands and results (make_matmul, rows_of) keep their dense buffers as the primitive's memory.
  if (en->staged_src.reorder) {
    en->staged_src.user.set_data_handle(a.data);
    execute(en->staged_src.reorder, en->staged_src.args);
  } else if (!en->panel) {
    en->src.set_data_handle(a.data);
  }
  // A staged result (make_matmul, scatter_rows): the product writes its dense buffer, then a reorder the result.
  float *product_dst = en->staged_dst.reorder ? en->staged_dst.dense.data() : dst;
  auto scatter = [&] {
    if (!en->staged_dst.reorder) return;
    en->staged_dst.user.set_data_handle(dst);
    execute(en->staged_dst.reorder, en->staged_dst.args);
  };
  if (en->panel) {
    const float *rows = en->staged_src.reorder ? en->staged_src.dense.data() : static_cast<const float *>(a.data);
    run_panel(*en, e, rows, product_dst, y.num_elements() / n);
    scatter();
    ran(en->impl);
    return;
  }
  if (en->staged_wei.reorder) {
    en->staged_wei.user.set_data_handle(b.data);
    execute(en->staged_wei.reorder, en->staged_wei.args);
  } else if (!en->packed) {
    en->wei.set_data_handle(b.data);
  }
  if (!en->staged_dst.reorder) en->dst.set_data_handle(dst);
  // The bias and binary operands are read apart from the result (at one row
  // a [1, N] residual is the bias): apart_from_result.
  const size_t out_bytes = static_cast<size_t>(y.num_elements()) * sizeof(float);
  if (alias_copies_.size() < e.operands.size()) alias_copies_.resize(e.operands.size());
  auto unaliased = [&](void *data, size_t bytes, size_t operand) {
    return const_cast<void *>(apart_from_result(data, bytes, dst, out_bytes, alias_copies_[operand]));
  };
  if (en->bias >= 0) {
    void *bias = const_cast<float *>(e.operands[en->bias].data);
    en->bias_mem.set_data_handle(unaliased(bias, en->bias_mem.get_desc().get_size(), en->bias));
  }
  for (auto &[i, mem] : en->binary) {
    void *data = const_cast<float *>(e.operands[i].data);
    for (auto &x : en->expanded)
      if (x.operand == i) broadcast_to_dense(e.operands[i].data, x.from, x.to, x.data.data()), data = x.data.data();
    mem.set_data_handle(unaliased(data, mem.get_desc().get_size(), i));
  }
  if (en->sum >= 0 && e.operands[en->sum].data != product_dst)
    copy_floats(static_cast<float *>(product_dst), static_cast<const float *>(e.operands[en->sum].data),
                y.num_elements());
  execute(en->prim, en->args);
  scatter();
  ran(en->impl);
}

}  // namespace

int64_t panel_max_rows() {
  static const int64_t rows = sysconf(_SC_LEVEL2_CACHE_SIZE) >= (2 << 20) ? kPanelMaxRowsLargeL2 : kPanelMaxRows;
  return rows;
}

std::unique_ptr<ExternKernel> make_onednn_matmul_kernel(const PlanStep &step) {
  return std::make_unique<MatmulKernel>(step);
}

}  // namespace disco
