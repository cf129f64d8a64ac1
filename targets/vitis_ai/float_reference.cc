#include "targets/vitis_ai/float_reference.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "frontend/attributes.h"

namespace disco::vitis_ai {
namespace {

using Ints = std::vector<int64_t>;

int64_t count(const Ints &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Env {
  const Graph &g;
  std::map<int, FloatTensor> values;
  const FloatTensor *get(int vid) {
    if (vid < 0) return nullptr;
    if (auto it = values.find(vid); it != values.end()) return &it->second;
    const Value &v = g.value(vid);
    if (!v.constant) return nullptr;
    FloatTensor t{v.constant->shape, {}};
    t.data.resize(static_cast<size_t>(v.constant->num_elements()));
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(v.constant->float_at(i));
    return &(values[vid] = std::move(t));
  }
};

struct Window {
  Ints k, s, p, d;
};

Window window(const AttrReader &a, Ints kernel) {
  Window w{kernel, a.get_ints_opt("strides").value_or(Ints{1, 1}), a.get_ints_opt("pads").value_or(Ints{0, 0, 0, 0}),
           a.get_ints_opt("dilations").value_or(Ints{1, 1})};
  if (a.get_string("auto_pad", "NOTSET") == "VALID") w.p = {0, 0, 0, 0};
  return w;
}

int64_t out_extent(int64_t in, const Window &w, int axis) {
  const int64_t room = in + w.p[axis] + w.p[axis + 2] - w.d[axis] * (w.k[axis] - 1) - 1;
  return room < 0 ? 0 : room / w.s[axis] + 1;
}

FloatTensor conv(const FloatTensor &x, const FloatTensor &w, const FloatTensor *b, const Window &win, int64_t group) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3], Mg = M / group;
  FloatTensor y{{N, M, out_extent(H, win, 0), out_extent(W, win, 1)}, {}};
  const int64_t OH = y.shape[2], OW = y.shape[3];
  y.data.assign(static_cast<size_t>(count(y.shape)), 0.0f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      float *out = &y.data[((n * M + m) * OH) * OW];
      const float bias = b ? b->data[m] : 0.0f;
      std::fill(out, out + OH * OW, bias);
      for (int64_t cg = 0; cg < Cg; ++cg) {
        const int64_t c = (m / Mg) * Cg + cg;
        const float *in = &x.data[((n * C + c) * H) * W];
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const float wv = w.data[((m * Cg + cg) * KH + kh) * KW + kw];
            for (int64_t oh = 0; oh < OH; ++oh) {
              const int64_t ih = oh * win.s[0] + kh * win.d[0] - win.p[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t iw = ow * win.s[1] + kw * win.d[1] - win.p[1];
                if (iw >= 0 && iw < W) out[oh * OW + ow] += wv * in[ih * W + iw];
              }
            }
          }
      }
    }
  return y;
}

// Max or average (count_include_pad decides the divisor) over the window.
FloatTensor pool(const FloatTensor &x, const Window &win, bool is_max, bool include_pad) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  FloatTensor y{{N, C, out_extent(H, win, 0), out_extent(W, win, 1)}, {}};
  const int64_t OH = y.shape[2], OW = y.shape[3];
  y.data.resize(static_cast<size_t>(count(y.shape)));
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = is_max ? -INFINITY : 0.0f;
        int64_t n_in = 0;
        for (int64_t kh = 0; kh < win.k[0]; ++kh)
          for (int64_t kw = 0; kw < win.k[1]; ++kw) {
            const int64_t ih = oh * win.s[0] + kh - win.p[0], iw = ow * win.s[1] + kw - win.p[1];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const float v = x.data[(nc * H + ih) * W + iw];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++n_in;
          }
        y.data[(nc * OH + oh) * OW + ow] = is_max ? acc : acc / (include_pad ? win.k[0] * win.k[1] : n_in);
      }
  return y;
}

FloatTensor unary(const FloatTensor &x, float (*f)(float, float, float), float a, float b) {
  FloatTensor y = x;
  for (float &v : y.data) v = f(v, a, b);
  return y;
}

std::optional<FloatTensor> eval_node(Env &env, const Node &n) {
  const AttrReader a(n.attrs, n.where());
  std::vector<const FloatTensor *> in;
  for (int vid : n.inputs) in.push_back(env.get(vid));
  if (n.inputs.empty() || !in[0]) return std::nullopt;
  const FloatTensor &x = *in[0];
  const std::string &op = n.op_type;
  if (op == "Identity") return x;
  if (op == "Relu") return unary(x, [](float v, float, float) { return std::max(v, 0.0f); }, 0, 0);
  if (op == "LeakyRelu")
    return unary(x, [](float v, float al, float) { return v < 0 ? v * al : v; }, a.get_float("alpha", 0.01f), 0);
  if (op == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (n.opset < 11) {
      lo = a.get_float("min", lo), hi = a.get_float("max", hi);
    } else {
      if (in.size() > 1 && in[1]) lo = in[1]->data.at(0);
      if (in.size() > 2 && in[2]) hi = in[2]->data.at(0);
    }
    return unary(x, [](float v, float l, float h) { return std::min(std::max(v, l), h); }, lo, hi);
  }
  if (op == "Conv" && x.shape.size() == 4 && in[1]) {
    const FloatTensor *b = in.size() > 2 ? in[2] : nullptr;
    return conv(x, *in[1], b, window(a, {in[1]->shape[2], in[1]->shape[3]}), a.get_int("group", 1));
  }
  if (op == "BatchNormalization" && x.shape.size() >= 2 && in.size() == 5) {
    for (int i = 1; i < 5; ++i)
      if (!in[i]) return std::nullopt;
    FloatTensor y = x;
    const int64_t C = x.shape[1], inner = count(x.shape) / (x.shape[0] * C);
    const double eps = a.get_float("epsilon", 1e-5f);
    for (int64_t i = 0; i < count(x.shape); ++i) {
      const int64_t c = (i / inner) % C;
      y.data[i] = static_cast<float>((x.data[i] - in[3]->data[c]) / std::sqrt(in[4]->data[c] + eps) *
                                         in[1]->data[c] + in[2]->data[c]);
    }
    return y;
  }
  if ((op == "MaxPool" || op == "AveragePool") && x.shape.size() == 4)
    return pool(x, window(a, a.get_ints("kernel_shape")), op == "MaxPool", a.get_int("count_include_pad", 0) != 0);
  if (op == "GlobalAveragePool" && x.shape.size() == 4) {
    Window w{{x.shape[2], x.shape[3]}, {1, 1}, {0, 0, 0, 0}, {1, 1}};
    return pool(x, w, false, true);
  }
  if (op == "Add" && in.size() == 2 && in[1]) {
    const FloatTensor &y2 = *in[1];
    if (x.shape == y2.shape) {
      FloatTensor y = x;
      for (size_t i = 0; i < y.data.size(); ++i) y.data[i] += y2.data[i];
      return y;
    }
    return std::nullopt;
  }
  if (op == "Concat") {
    const int rank = static_cast<int>(x.shape.size());
    int64_t axis = a.get_int("axis");
    if (axis < 0) axis += rank;
    FloatTensor y{x.shape, {}};
    y.shape[axis] = 0;
    for (const FloatTensor *t : in) {
      if (!t) return std::nullopt;
      y.shape[axis] += t->shape[axis];
    }
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape[d];
    for (int64_t o = 0; o < outer; ++o)
      for (const FloatTensor *t : in) {
        const int64_t chunk = count(t->shape) / std::max<int64_t>(outer, 1);
        y.data.insert(y.data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
      }
    return y;
  }
  if ((op == "Gemm" || op == "MatMul") && x.shape.size() == 2 && in[1] && in[1]->shape.size() == 2) {
    const bool ta = op == "Gemm" && a.get_int("transA", 0), tb = op == "Gemm" && a.get_int("transB", 0);
    const double alpha = op == "Gemm" ? a.get_float("alpha", 1.0f) : 1.0, beta = op == "Gemm" ? a.get_float("beta", 1.0f) : 1.0;
    const FloatTensor &w = *in[1];
    const int64_t M = ta ? x.shape[1] : x.shape[0], K = ta ? x.shape[0] : x.shape[1], N = tb ? w.shape[0] : w.shape[1];
    const FloatTensor *c = in.size() > 2 ? in[2] : nullptr;
    FloatTensor y{{M, N}, std::vector<float>(static_cast<size_t>(M * N))};
    for (int64_t m = 0; m < M; ++m)
      for (int64_t nn = 0; nn < N; ++nn) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<double>(ta ? x.data[k * M + m] : x.data[m * K + k]) *
                 (tb ? w.data[nn * K + k] : w.data[k * N + nn]);
        double bias = 0;
        if (c) bias = count(c->shape) == 1 ? c->data[0] : c->data[count(c->shape) == N ? nn : m * N + nn];
        y.data[m * N + nn] = static_cast<float>(alpha * acc + beta * bias);
      }
    return y;
  }
  if (op == "Flatten") {
    int64_t axis = a.get_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
    return FloatTensor{{outer, count(x.shape) / std::max<int64_t>(outer, 1)}, x.data};
  }
  if (op == "Reshape" && in.size() > 1 && in[1]) {
    Ints shape;
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < in[1]->data.size(); ++d) {
      int64_t v = static_cast<int64_t>(in[1]->data[d]);
      if (v == 0 && d < x.shape.size()) v = x.shape[d];
      if (v == -1) infer = static_cast<int64_t>(d);
      else known *= v;
      shape.push_back(v);
    }
    if (infer >= 0) shape[infer] = known ? count(x.shape) / known : 0;
    return FloatTensor{shape, x.data};
  }
  if (op == "Resize" && x.shape.size() == 4 && in.size() > 2 && in[2] && in[2]->data.size() == 4) {
    const int64_t sh = static_cast<int64_t>(in[2]->data[2]), sw = static_cast<int64_t>(in[2]->data[3]);
    if (sh < 1 || sw < 1) return std::nullopt;
    const int64_t H = x.shape[2], W = x.shape[3];
    FloatTensor y{{x.shape[0], x.shape[1], H * sh, W * sw}, {}};
    for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc)
      for (int64_t oh = 0; oh < H * sh; ++oh)
        for (int64_t ow = 0; ow < W * sw; ++ow) y.data.push_back(x.data[(nc * H + oh / sh) * W + ow / sw]);
    return y;
  }
  return std::nullopt;
}

}  // namespace

std::map<int, FloatTensor> evaluate_float(const Graph &g, const std::map<int, FloatTensor> &inputs) {
  Env env{g, inputs};
  for (const Node &n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] < 0 || g.value(n.outputs[0]).constant) continue;
    std::optional<FloatTensor> y;
    try {
      y = eval_node(env, n);
    } catch (const std::exception &) {
      y.reset();  // malformed attributes: leave the value absent
    }
    if (y) env.values[n.outputs[0]] = std::move(*y);
  }
  for (auto it = env.values.begin(); it != env.values.end();)
    it = g.value(it->first).constant ? env.values.erase(it) : std::next(it);
  return std::move(env.values);
}

}  // namespace disco::vitis_ai
