// panel_gemm_avx2 (targets/onednn/panel_gemm.h) against the oneDNN product
// that the matmul step runs without it, on the Linear shapes of the zoo's
// transformers (vit_b_16, gpt2/llama/t5/conformer blocks), interleaved:
// each round runs the panel product and then oneDNN's on the same A, and the
// result is the median of the rounds' ratios (panel time over oneDNN's).
// oneDNN's side is what onednn_matmul.cc chose before the AVX2 panel product:
// an inner product up to 64 rows or for weights of 2 MiB or less, else a
// matmul, its weights reordered once into the layout it asks for. Weights
// rotate through copies of 64 MiB in all, as a model's layers come from
// memory rather than from the L3; so do both sides' results.
//
// panel_avx2_bench [threads,...] [rounds] [M,K,N ...]   (default 1,2, 15 and
// the list below)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "targets/onednn/panel_gemm.h"

namespace {

using dnnl::memory;
using tag = memory::format_tag;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Shape {
  const char *models;
  int64_t rows, k, n;
};

float *aligned_floats(size_t n) {
  void *p = std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  return static_cast<float *>(p);
}

// One shape on `threads`: the median ratio and both median times.
void measure(const Shape &s, int threads, int rounds, dnnl::engine &eng, dnnl::stream &strm) {
  const int64_t m = s.rows, k = s.k, n = s.n, panels = (n + disco::kPanelColumnsAvx2 - 1) / disco::kPanelColumnsAvx2;
  const int64_t wbytes = k * n * 4;
  const int copies = static_cast<int>(std::min<int64_t>(16, std::max<int64_t>(2, (64 << 20) / wbytes)));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(m * k), b(k * n);
  for (auto &v : a) v = u(rng);
  for (auto &v : b) v = u(rng) * 0.05f;
  const bool inner = m <= 64 || wbytes <= (2 << 20);
  const memory::desc ad({m, k}, memory::data_type::f32, tag::ab), yd({m, n}, memory::data_type::f32, tag::ab);
  dnnl::primitive prim;
  memory::desc want, user;
  if (inner) {
    user = memory::desc({n, k}, memory::data_type::f32, memory::dims{1, n});
    auto pd = dnnl::inner_product_forward::primitive_desc(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, ad,
                                          memory::desc({n, k}, memory::data_type::f32, tag::any), yd),
        eng);
    want = pd.weights_desc();
    prim = dnnl::inner_product_forward(pd);
  } else {
    user = memory::desc({k, n}, memory::data_type::f32, tag::ab);
    auto pd = dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(ad, memory::desc({k, n}, memory::data_type::f32, tag::any), yd), eng);
    want = pd.weights_desc();
    prim = dnnl::matmul(pd);
  }
  // Per copy: oneDNN's packed weights, the panels, and a result for each.
  std::vector<memory> packed;
  std::vector<float *> pans, ys_p, ys_o;
  memory src(user, eng, b.data());
  for (int c = 0; c < copies; ++c) {
    packed.emplace_back(want, eng);
    dnnl::reorder(src, packed.back()).execute(strm, src, packed.back());
    float *p = aligned_floats(panels * k * disco::kPanelColumnsAvx2);
    std::fill(p, p + panels * k * disco::kPanelColumnsAvx2, 0.0f);
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < disco::kPanelColumnsAvx2 && q * disco::kPanelColumnsAvx2 + j < n; ++j)
          p[(q * k + kk) * disco::kPanelColumnsAvx2 + j] = b[kk * n + q * disco::kPanelColumnsAvx2 + j];
    pans.push_back(p);
    ys_p.push_back(aligned_floats(m * n));
    ys_o.push_back(aligned_floats(m * n));
  }
  strm.wait();
  omp_set_num_threads(threads);
  memory am(ad, eng, a.data()), ym(yd, eng, nullptr);
  int64_t claimed = 0;
  auto run_panel = [&](int c) {
    disco::PanelGemm g;
    g.a = a.data(), g.panels = pans[c], g.y = ys_p[c], g.rows = m, g.k = g.lda = k, g.n = g.ldy = n;
    if (threads == 1) return disco::panel_gemm_avx2(g, 0, panels);
    claimed = 0;
#pragma omp parallel num_threads(2)
    disco::panel_gemm_shared_avx2(g, 0, panels, omp_get_thread_num() == 0, &claimed);
  };
  auto run_onednn = [&](int c) {
    ym.set_data_handle(ys_o[c]);
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, packed[c]}, {DNNL_ARG_DST, ym}});
    strm.wait();
  };
  std::vector<double> tp, to, ratio;
  for (int r = -2; r < rounds; ++r) {  // two warm-up rounds
    const int c = (r + 2) % copies;
    const double t0 = now_ms();
    run_panel(c);
    const double t1 = now_ms();
    run_onednn(c);
    const double t2 = now_ms();
    if (r >= 0) tp.push_back(t1 - t0), to.push_back(t2 - t1), ratio.push_back((t1 - t0) / (t2 - t1));
  }
  double diff = 0;
  for (int64_t i = 0; i < m * n; ++i) diff = std::max(diff, static_cast<double>(std::abs(ys_p[0][i] - ys_o[0][i])));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> sorted = ratio;
  std::sort(sorted.begin(), sorted.end());
  const double gflop = 2.0 * m * k * n / 1e6;
  std::printf("| %-22s | %4ld | %4ld | %4ld | %d | %7.3f (%5.1f) | %-13s %7.3f (%5.1f) | **%.2f** | %.2f-%.2f | %.1e |\n", s.models,
              m, k, n, threads, median(tp), gflop / median(tp), inner ? "inner_product" : "matmul", median(to),
              gflop / median(to), median(ratio), sorted[sorted.size() / 4], sorted[sorted.size() * 3 / 4], diff);
  std::fflush(stdout);
  for (int c = 0; c < copies; ++c) std::free(pans[c]), std::free(ys_p[c]), std::free(ys_o[c]);
}

}  // namespace

int main(int argc, char **argv) {
  if (!disco::panel_gemm_avx2_cpu()) {
    std::fprintf(stderr, "needs AVX2 and FMA\n");
    return 1;
  }
  std::vector<int> thread_counts = {1, 2};
  if (argc > 1) {
    thread_counts.clear();
    for (const char *p = argv[1]; *p;) {
      thread_counts.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
  // Rows: vit_b_16 at batch 1 and 2 (197, 394); the blocks at (1, 128),
  // (2, 77) and (4, 64); and 32 and 64 for fewer.
  std::vector<Shape> shapes;
  const struct {
    const char *models;
    int64_t k, n;
  } products[] = {{"vit/gpt2 qkv", 768, 2304},  {"vit/gpt2 fc1", 768, 3072},  {"vit/gpt2 fc2", 3072, 768},
                  {"vit/gpt2/llama d x d", 768, 768}, {"llama gate/up", 768, 2048}, {"llama down", 2048, 768},
                  {"t5/conformer ff1", 512, 2048}, {"t5/conformer ff2", 2048, 512}, {"conformer qkv", 512, 1536},
                  {"t5/conformer d x d", 512, 512}};
  for (int i = 3; i < argc; ++i) {  // M,K,N given: those shapes instead
    long m = 0, k = 0, n = 0;
    if (std::sscanf(argv[i], "%ld,%ld,%ld", &m, &k, &n) == 3) shapes.push_back({"given", m, k, n});
  }
  if (shapes.empty())
    for (int64_t rows : {32, 64, 128, 154, 197, 256, 394})
      for (const auto &p : products) shapes.push_back({p.models, rows, p.k, p.n});
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("| product | rows | K | N | threads | panel ms (GFLOP/s) | oneDNN ms (GFLOP/s) | panel / oneDNN | quartiles | max diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int threads : thread_counts)
    for (const Shape &s : shapes) measure(s, threads, rounds, eng, strm);
  return 0;
}
