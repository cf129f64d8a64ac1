// oneDNN's Winograd convolution against its direct one, 3x3 stride 1 with a
// bias and a ReLU, over the shapes of the zoo's CNNs (ResNet stages at 224
// and 160, SqueezeNet's expand convs, FCN's head), at 1 and 2 threads,
// alternating run by run: the table targets/onednn/conv_winograd.h's rule
// was read from (benchmarks/results/winograd-2026-12-04.md); for several
// images also one image's Winograd primitive run once per image
// (winograd-per-image-2026-12-04.md). Both take X and
// Y blocked (format any), as disco's conv steps do, and weights already in the
// primitive's layout. Also the largest difference between the two results,
// as a share of the output's largest magnitude.
//
//   winograd_bench [--threads 1,2] [--rounds N] [N,C,K,H ...]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;

struct Conv {
  dnnl::convolution_forward prim;
  std::unordered_map<int, memory> args;
  memory dst;
  std::string impl;
};

// A primitive of `alg` over [n, c, h, h] -> [n, k, h, h] with its operands
// filled from one seeded sequence (the same values for both algorithms).
bool make(const dnnl::engine &eng, dnnl::stream &s, const int *sh, dnnl::algorithm alg, Conv &out) {
  const memory::dims src{sh[0], sh[1], sh[3], sh[3]}, wei{sh[2], sh[1], 3, 3}, dst{sh[0], sh[2], sh[3], sh[3]};
  const memory::dims bias{sh[2]};
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, memory::desc(src, f32, tag::any),
                                        memory::desc(wei, f32, tag::any), memory::desc(bias, f32, tag::a),
                                        memory::desc(dst, f32, tag::any), {1, 1}, {1, 1}, {1, 1}),
        attr, eng);
  } catch (const dnnl::error &) {
    return false;
  }
  out.impl = pd.impl_info_str();
  memory S(pd.src_desc(), eng), W(pd.weights_desc(), eng), B({bias, f32, tag::a}, eng);
  out.dst = memory(pd.dst_desc(), eng);
  unsigned state = 1;
  auto next = [&] {
    state = state * 1103515245u + 12345u;
    return static_cast<float>((state >> 8) & 0xffff) / 65536.f - 0.5f;
  };
  auto fill = [&](const memory::dims &d, tag t, memory &into, float scale) {
    memory plain({d, f32, t}, eng);
    float *p = static_cast<float *>(plain.get_data_handle());
    for (size_t i = 0; i < plain.get_desc().get_size() / sizeof(float); ++i) p[i] = next() * scale;
    dnnl::reorder(plain, into).execute(s, plain, into);
  };
  // Each from its own seed: W and the bias do not depend on the batch (make_per_image's are direct's).
  state = 1, fill(src, tag::nchw, S, 2.f);
  state = 2, fill(wei, tag::oihw, W, 0.1f);
  state = 3, fill(bias, tag::a, B, 0.1f);
  out.prim = dnnl::convolution_forward(pd);
  out.args = {{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_BIAS, B}, {DNNL_ARG_DST, out.dst}};
  return true;
}

// One image's Winograd primitive run once per image, each run on its image
// of whole-batch X and Y (nChw16c, images outermost): disco's per-image
// Winograd (targets/onednn/conv_winograd.h). X is the direct primitive's.
struct PerImage {
  Conv one;
  memory src, dst;  // every image
  std::vector<std::unordered_map<int, memory>> args;
};

bool make_per_image(const dnnl::engine &eng, dnnl::stream &s, const int *sh, Conv &direct, PerImage &out) {
  const int one[4] = {1, sh[1], sh[2], sh[3]};
  if (!make(eng, s, one, dnnl::algorithm::convolution_winograd, out.one)) return false;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const memory::desc sd = out.one.args.at(DNNL_ARG_SRC).get_desc(), dd = out.one.dst.get_desc();
  if (sd != memory::desc({1, sh[1], sh[3], sh[3]}, f32, tag::nChw16c) ||
      dd != memory::desc({1, sh[2], sh[3], sh[3]}, f32, tag::nChw16c))
    return false;
  out.src = memory({{sh[0], sh[1], sh[3], sh[3]}, f32, tag::nChw16c}, eng);
  out.dst = memory({{sh[0], sh[2], sh[3], sh[3]}, f32, tag::nChw16c}, eng);
  memory &x = direct.args.at(DNNL_ARG_SRC);
  dnnl::reorder(x, out.src).execute(s, x, out.src);
  for (int i = 0; i < sh[0]; ++i) {
    auto a = out.one.args;
    a[DNNL_ARG_SRC] = memory(sd, eng, static_cast<char *>(out.src.get_data_handle()) + i * sd.get_size());
    a[DNNL_ARG_DST] = memory(dd, eng, static_cast<char *>(out.dst.get_data_handle()) + i * dd.get_size());
    out.args.push_back(a);
  }
  return true;
}

double run_ms(PerImage &c, dnnl::stream &s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (auto &a : c.args) c.one.prim.execute(s, a);
  s.wait();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double run_ms(Conv &c, dnnl::stream &s) {
  const auto t0 = std::chrono::steady_clock::now();
  c.prim.execute(s, c.args);
  s.wait();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<float> nchw(const dnnl::engine &eng, dnnl::stream &s, memory &m) {
  memory plain({m.get_desc().dims(), memory::data_type::f32, memory::format_tag::nchw}, eng);
  dnnl::reorder(m, plain).execute(s, m, plain);
  s.wait();
  const float *p = static_cast<const float *>(plain.get_data_handle());
  return {p, p + plain.get_desc().get_size() / sizeof(float)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<int> threads = {1, 2};
  int rounds = 21;
  std::vector<std::string> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("usage: winograd_bench [--threads 1,2] [--rounds N] [N,C,K,H ...]\n"
                  "oneDNN's Winograd 3x3 stride-1 convolution against its direct one, alternating run by run;\n"
                  "and, for several images, one image's Winograd primitive run once per image; prints a markdown\n"
                  "row per shape and thread count (median ms of each, the ratios to direct, the impls, and the\n"
                  "largest differences from direct's result over the output's largest magnitude).\n");
      return 0;
    } else if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      for (const char *p = argv[++i]; *p; ++p)
        if (*p != ',') threads.push_back(std::atoi(p)), p += std::strcspn(p, ",") - 1;
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      shapes.push_back(a);
    }
  }
  if (shapes.empty())
    shapes = {"1,64,64,56",   "1,128,128,28", "1,256,256,14", "1,512,512,7",  "2,64,64,40",   "2,128,128,20",
              "2,256,256,10", "2,512,512,5",  "1,16,64,55",   "1,32,128,27",  "1,48,192,13",  "1,64,256,13",
              "2,16,64,39",   "2,32,128,19",  "2,48,192,9",   "2,64,256,9",   "1,128,128,14", "2,128,128,10",
              "1,1024,256,14", "1,2048,512,28", "1,64,64,112", "1,32,32,56"};
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  std::printf("| N,C,K,H | threads | direct ms | winograd ms | winograd / direct | per-image ms | per-image / direct | "
              "per-image max diff / max |out| | direct impl | winograd impl | max diff / max |out| | per-image impl |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int t : threads) {
    omp_set_num_threads(t);
    for (const std::string &shape : shapes) {
      int sh[4];
      if (std::sscanf(shape.c_str(), "%d,%d,%d,%d", &sh[0], &sh[1], &sh[2], &sh[3]) != 4) {
        std::fprintf(stderr, "winograd_bench: '%s' is not N,C,K,H\n", shape.c_str());
        return 2;
      }
      Conv direct, wino;
      make(eng, s, sh, dnnl::algorithm::convolution_direct, direct);
      if (!make(eng, s, sh, dnnl::algorithm::convolution_winograd, wino)) {
        std::printf("| %s | %d | - | - | - | %s | none | - |\n", shape.c_str(), t, direct.impl.c_str());
        continue;
      }
      PerImage per;
      const bool has_per = sh[0] > 1 && make_per_image(eng, s, sh, direct, per);
      for (int w = 0; w < 3; ++w) run_ms(direct, s), run_ms(wino, s);
      std::vector<double> td, tw, tp;
      for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) td.push_back(run_ms(direct, s)), tw.push_back(run_ms(wino, s));
        else tw.push_back(run_ms(wino, s)), td.push_back(run_ms(direct, s));
        if (has_per) tp.push_back(run_ms(per, s));
      }
      const std::vector<float> a = nchw(eng, s, direct.dst);
      auto worst = [&](memory &m) {
        const std::vector<float> b = nchw(eng, s, m);
        double diff = 0, top = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
          top = std::max(top, static_cast<double>(std::fabs(a[i])));
        }
        return top > 0 ? diff / top : diff;
      };
      const double d = median(td), w = median(tw), diff = worst(wino.dst);
      char per_cells[160] = "- | - | -";
      if (has_per)
        std::snprintf(per_cells, sizeof per_cells, "%.3f | **%.2f** | %.1e", median(tp), median(tp) / d,
                      worst(per.dst));
      std::printf("| %s | %d | %.3f | %.3f | **%.2f** | %s | %s | %s | %.1e | %s |\n", shape.c_str(), t, d, w, w / d,
                  per_cells, direct.impl.c_str(), wino.impl.c_str(), diff, has_per ? per.one.impl.c_str() : "-");
    }
  }
  return 0;
}
