// panel_gemm_avx2 (targets/onednn/panel_gemm.h) with a bias and, optionally,
// GELU against the oneDNN product the matmul step would otherwise run with
// the same post-ops (an inner product up to 64 rows or for weights of 2 MiB
// or less, else a matmul; weights packed once), optionally followed on both
// sides by a reorder of the [M, N] result into [N, M] (convnext's Linear
// whose result is permuted back to NCHW). One thread; thread CPU time, so
// that a loaded machine's preemptions do not count; interleaved: each round
// runs the panel product and then oneDNN's, and the result is the median of
// the rounds' ratios (panel over oneDNN) with its quartiles. Weights rotate
// through copies of up to 64 MiB, as a model's layers come from memory.
// benchmarks/results/convnext-2026-12-02.md.
//
// panel_epilogue_bench ROUNDS M,K,N,GELU,TRANSPOSED ...   (GELU, TRANSPOSED: 0 or 1)
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <vector>

#include "targets/onednn/panel_gemm.h"

namespace {

using dnnl::memory;
using tag = memory::format_tag;

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

float *aligned_floats(size_t n) { return static_cast<float *>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void measure(int64_t m, int64_t k, int64_t n, bool gelu, bool transposed, int rounds, dnnl::engine &eng,
             dnnl::stream &strm) {
  const int64_t width = disco::kPanelColumnsAvx2, panels = (n + width - 1) / width;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(m * k), b(k * n), bias(n), yt(m * n);
  for (auto &v : a) v = u(rng);
  for (auto &v : b) v = u(rng) * 0.1f;
  for (auto &v : bias) v = u(rng);
  const int copies = static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(16, (64 << 20) / (k * n * 4))));
  const memory::desc ad({m, k}, memory::data_type::f32, tag::ab), yd({m, n}, memory::data_type::f32, tag::ab);
  dnnl::post_ops po;
  if (gelu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0, 0);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  // As onednn_matmul.cc: a transposed result is not flat, so the matmul takes it.
  const bool inner = !transposed && (m <= 64 || k * n * 4 <= (2 << 20));
  const memory::desc bias_desc = inner ? memory::desc({n}, memory::data_type::f32, tag::a)
                                       : memory::desc({1, n}, memory::data_type::f32, tag::ab);
  dnnl::primitive prim;
  memory::desc want, user;
  if (inner) {
    user = memory::desc({n, k}, memory::data_type::f32, memory::dims{1, n});
    auto pd = dnnl::inner_product_forward::primitive_desc(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, ad,
                                          memory::desc({n, k}, memory::data_type::f32, tag::any), bias_desc, yd),
        attr, eng);
    want = pd.weights_desc();
    prim = dnnl::inner_product_forward(pd);
  } else {
    user = memory::desc({k, n}, memory::data_type::f32, tag::ab);
    auto pd = dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(ad, memory::desc({k, n}, memory::data_type::f32, tag::any), bias_desc, yd), attr, eng);
    want = pd.weights_desc();
    prim = dnnl::matmul(pd);
  }
  memory dense(yd, eng, nullptr), scattered(memory::desc({m, n}, memory::data_type::f32, memory::dims{1, m}), eng,
                                            yt.data());
  dnnl::reorder to_transposed(dnnl::reorder::primitive_desc(dense, scattered));
  std::vector<memory> packed;
  std::vector<float *> pans;
  float *yp = aligned_floats(m * n), *yo = aligned_floats(m * n);
  memory src(user, eng, b.data());
  for (int c = 0; c < copies; ++c) {
    packed.emplace_back(want, eng);
    dnnl::reorder(src, packed.back()).execute(strm, src, packed.back());
    float *p = aligned_floats(panels * k * width);
    std::fill(p, p + panels * k * width, 0.0f);
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < width && q * width + j < n; ++j) p[(q * k + kk) * width + j] = b[kk * n + q * width + j];
    pans.push_back(p);
  }
  strm.wait();
  memory am(ad, eng, a.data()), ym(yd, eng, nullptr), bm(bias_desc, eng, bias.data());
  disco::PanelOp ops[2];
  ops[0].kind = disco::PanelOp::Add, ops[0].operand = bias.data(), ops[0].row_stride = 0, ops[0].col_stride = 1;
  ops[1].kind = disco::PanelOp::GeluErf;
  auto run_panel = [&](int c) {
    disco::PanelGemm g;
    g.a = a.data(), g.panels = pans[c], g.y = yp, g.rows = m, g.k = g.lda = k, g.n = g.ldy = n;
    g.ops = ops, g.num_ops = gelu ? 2 : 1;
    disco::panel_gemm_avx2(g, 0, panels);
    if (transposed) dense.set_data_handle(yp), to_transposed.execute(strm, dense, scattered), strm.wait();
  };
  auto run_onednn = [&](int c) {
    ym.set_data_handle(yo);
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, packed[c]}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
    if (transposed) dense.set_data_handle(yo), to_transposed.execute(strm, dense, scattered);
    strm.wait();
  };
  std::vector<double> tp, to, ratio;
  for (int r = -2; r < rounds; ++r) {  // two warm-up rounds
    const int c = (r + 2) % copies;
    const double t0 = thread_cpu_ms();
    run_panel(c);
    const double t1 = thread_cpu_ms();
    run_onednn(c);
    const double t2 = thread_cpu_ms();
    if (r >= 0) tp.push_back(t1 - t0), to.push_back(t2 - t1), ratio.push_back((t1 - t0) / (t2 - t1));
  }
  double diff = 0;
  for (int64_t i = 0; i < m * n; ++i) diff = std::max(diff, static_cast<double>(std::fabs(yp[i] - yo[i])));
  std::vector<double> sorted = ratio;
  std::sort(sorted.begin(), sorted.end());
  const double mflop = 2.0 * m * k * n / 1e6;
  std::printf("| %5ld | %5ld | %5ld | %s | %s | %7.3f (%5.1f) | %-13s %7.3f (%5.1f) | **%.2f** | %.2f-%.2f | %.1e |\n", m, k,
              n, gelu ? "bias, GELU" : "bias", transposed ? "yes" : "no", median(tp), mflop / median(tp),
              inner ? "inner_product" : "matmul", median(to), mflop / median(to), median(ratio),
              sorted[sorted.size() / 4], sorted[sorted.size() * 3 / 4], diff);
  std::fflush(stdout);
  for (float *p : pans) std::free(p);
  std::free(yp), std::free(yo);
}

}  // namespace

int main(int argc, char **argv) {
  if (!disco::panel_gemm_avx2_cpu()) {
    std::fprintf(stderr, "needs AVX2 and FMA\n");
    return 1;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: panel_epilogue_bench ROUNDS M,K,N,GELU,TRANSPOSED ...\n");
    return 1;
  }
  const int rounds = std::atoi(argv[1]);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  omp_set_num_threads(1);
  std::printf("| M | K | N | epilogue | result transposed | panel ms (GFLOP/s) | oneDNN ms (GFLOP/s) | panel / oneDNN | quartiles | max diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 2; i < argc; ++i) {
    long m = 0, k = 0, n = 0;
    int gelu = 0, transposed = 0;
    if (std::sscanf(argv[i], "%ld,%ld,%ld,%d,%d", &m, &k, &n, &gelu, &transposed) != 5) {
      std::fprintf(stderr, "bad shape '%s' (M,K,N,GELU,TRANSPOSED)\n", argv[i]);
      return 1;
    }
    measure(m, k, n, gelu != 0, transposed != 0, rounds, eng, strm);
  }
  return 0;
}
