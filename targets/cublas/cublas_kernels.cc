#include "targets/cublas/cublas_kernels.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

#include "frontend/errors.h"
#include "targets/cublas/cublas_backend.h"
#include "targets/cublas/cuda_api.h"

namespace disco {

namespace {

std::string shape_text(const std::vector<int64_t> &s) { return "[" + join_ints(s) + "]"; }

int64_t product(const std::vector<int64_t> &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

int to_int(int64_t v, const std::string &label, const char *what) {
  DISCO_CHECK(v >= 0 && v <= INT_MAX, label, ": ", what, " is ", v, ", beyond cuBLAS's 32-bit int");
  return static_cast<int>(v);
}

}  // namespace

CublasGemmArgs plan_cublas_gemm(bool gemm, bool trans_a, bool trans_b, const std::vector<int64_t> &a,
                                const std::vector<int64_t> &b, const std::vector<int64_t> &y, const std::string &label) {
  const size_t ra = a.size(), rb = b.size();
  DISCO_CHECK(ra >= 2 && rb >= 2, label, ": A ", shape_text(a), " and B ", shape_text(b), " must be at least 2-D");
  DISCO_CHECK(!gemm || (ra == 2 && rb == 2), label, ": Gemm's A and B must be 2-D");
  const int64_t M = trans_a ? a[ra - 1] : a[ra - 2], K = trans_a ? a[ra - 2] : a[ra - 1];
  const int64_t Kb = trans_b ? b[rb - 1] : b[rb - 2], N = trans_b ? b[rb - 2] : b[rb - 1];
  DISCO_CHECK(K == Kb, label, ": A ", shape_text(a), " has K = ", K, " but B ", shape_text(b), " has K = ", Kb);
  std::vector<int64_t> want;
  int64_t rows = M, batch = 1, stride_a = M * K, stride_b = K * N;
  if (rb == 2) {  // A's batch dims fold into its rows: one GEMM
    want.assign(a.begin(), a.end() - 2);
    rows = product(a, 0, ra - 2) * M;
    stride_a = stride_b = 0;
  } else if (ra == 2) {  // A shared by every batch of B
    want.assign(b.begin(), b.end() - 2);
    batch = product(b, 0, rb - 2);
    stride_a = 0;
  } else {
    DISCO_CHECK(ra == rb && std::equal(a.begin(), a.end() - 2, b.begin()), label, ": the batch dims of A ",
                shape_text(a), " and B ", shape_text(b), " differ (cuBLAS does not broadcast them)");
    want.assign(a.begin(), a.end() - 2);
    batch = product(a, 0, ra - 2);
  }
  want.push_back(M);
  want.push_back(N);
  DISCO_CHECK(y == want, label, ": output is ", shape_text(y), ", A ", shape_text(a), " times B ", shape_text(b),
              " gives ", shape_text(want));
  CublasGemmArgs g;
  g.op_first = trans_b ? 1 : 0;
  g.op_second = trans_a ? 1 : 0;
  g.m = to_int(N, label, "N");
  g.n = to_int(rows, label, "M");
  g.k = to_int(K, label, "K");
  g.ld_first = to_int(trans_b ? K : N, label, "B's leading dim");
  g.ld_second = to_int(trans_a ? M : K, label, "A's leading dim");
  g.ldc = g.m;
  g.stride_first = stride_b;
  g.stride_second = stride_a;
  g.stride_c = batch > 1 ? M * N : 0;
  g.batch = to_int(batch, label, "the batch");
  return g;
}

std::vector<EpilogueStep> parse_epilogue(const std::string &text, const std::string &label) {
  std::vector<EpilogueStep> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string tok = text.substr(pos, end - pos);
    pos = end + 1;
    if (tok == "relu") {
      out.push_back({true, 1.0});
      continue;
    }
    char *stop = nullptr;
    const double scale = tok.rfind("add:", 0) == 0 ? std::strtod(tok.c_str() + 4, &stop) : 0;
    DISCO_CHECK(stop && stop != tok.c_str() + 4 && *stop == '\0', label, ": unknown epilogue op '", tok, "'");
    out.push_back({false, scale});
  }
  return out;
}

void apply_epilogue(const std::vector<EpilogueStep> &steps, const std::vector<const ExternTensor *> &operands,
                    const ExternTensor &y, const std::string &label) {
  float *out = static_cast<float *>(y.data);
  const int64_t total = y.num_elements();
  size_t next = 0;
  for (const EpilogueStep &s : steps) {
    if (s.relu) {
      for (int64_t i = 0; i < total; ++i) out[i] = std::max(out[i], 0.0f);
      continue;
    }
    DISCO_CHECK(next < operands.size() && operands[next]->data, label, ": epilogue add ", next, " has no operand");
    const ExternTensor &o = *operands[next++];
    DISCO_CHECK(o.dtype == DType::F32, label, ": epilogue operand is ", dtype_name(o.dtype), ", expected float32");
    // Strides of the operand over y's dims: 0 where it broadcasts.
    const size_t rank = y.shape.size();
    DISCO_CHECK(o.shape.size() <= rank, label, ": epilogue operand ", shape_text(o.shape), " does not broadcast into ",
                shape_text(y.shape));
    std::vector<int64_t> stride(rank, 0);
    int64_t s_acc = 1;
    for (size_t i = 0; i < o.shape.size(); ++i) {
      const size_t od = o.shape.size() - 1 - i, yd = rank - 1 - i;
      DISCO_CHECK(o.shape[od] == 1 || o.shape[od] == y.shape[yd], label, ": epilogue operand ", shape_text(o.shape),
                  " does not broadcast into ", shape_text(y.shape));
      stride[yd] = o.shape[od] == 1 ? 0 : s_acc;
      s_acc *= o.shape[od];
    }
    const float *in = static_cast<const float *>(o.data);
    const float scale = static_cast<float>(s.scale);
    if (total == 0) continue;
    // Walk y row by row (its last dim), the operand's row offset from the outer index.
    const int64_t cols = rank ? y.shape[rank - 1] : 1, col_stride = rank ? stride[rank - 1] : 0;
    std::vector<int64_t> idx(rank, 0);
    for (int64_t row = 0; row < total / cols; ++row) {
      int64_t off = 0;
      for (size_t d = 0; d + 1 < rank; ++d) off += idx[d] * stride[d];
      float *yr = out + row * cols;
      for (int64_t c = 0; c < cols; ++c) yr[c] += scale * in[off + c * col_stride];
      for (size_t d = rank - 1; d-- > 0;) {  // next row index over the outer dims
        if (++idx[d] < y.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
}

namespace {

// A weight kept on the device across runs: uploaded at the first run (and
// again only if its host copy moves, which a plan's constants never do).
struct ResidentTensor {
  const void *host = nullptr;
  size_t bytes = 0;
  DeviceBuffer buf;
};

class CublasMatMul : public ExternKernel {
 public:
  explicit CublasMatMul(const PlanStep &step)
      : label_("step " + step.label + " (cublas.matmul)"),
        gemm_(param_int(step, "gemm") != 0),
        trans_a_(param_int(step, "trans_a") != 0),
        trans_b_(param_int(step, "trans_b") != 0),
        alpha_(static_cast<float>(param_float(step, "alpha"))),
        epilogue_(parse_epilogue(step.params.count("epilogue") ? step.params.at("epilogue") : "", label_)) {}

  void run(const ExternCall &call) override {
    size_t adds = 0;
    for (const auto &e : epilogue_) adds += e.relu ? 0 : 1;
    DISCO_CHECK(call.inputs.size() == 2 + adds && call.outputs.size() == 1, label_, ": expects A, B, ", adds,
                " epilogue operands and one output");
    const ExternTensor &a = call.inputs[0], &b = call.inputs[1], &y = call.outputs[0];
    for (const ExternTensor *t : {&a, &b, &y})
      DISCO_CHECK(t->dtype == DType::F32, label_, ": a tensor is ", dtype_name(t->dtype), ", expected float32");
    const CublasGemmArgs g = plan_cublas_gemm(gemm_, trans_a_, trans_b_, a.shape, b.shape, y.shape, label_);
    if (g.k == 0)
      std::memset(y.data, 0, y.num_elements() * sizeof(float));  // an empty sum; cuBLAS would leave Y alone
    else
      run_on_device(g, a, b, y);
    std::vector<const ExternTensor *> operands;
    for (size_t i = 2; i < call.inputs.size(); ++i) operands.push_back(&call.inputs[i]);
    apply_epilogue(epilogue_, operands, y, label_);
  }

 private:
  void run_on_device(const CublasGemmArgs &g, const ExternTensor &a, const ExternTensor &b, const ExternTensor &y) {
    try {
      CudaDevice &dev = CudaDevice::shared();
      std::lock_guard<std::mutex> lock(dev.mutex());
      dev.make_current();
      const auto d_b = operand(dev, b, resident_b_, scratch_b_);
      const auto d_a = operand(dev, a, resident_a_, scratch_a_);
      const size_t y_bytes = y.num_elements() * sizeof(float);
      const auto d_y = scratch_y_.ensure(dev, y_bytes);
      dev.sgemm(static_cast<CudaDevice::Op>(g.op_first), static_cast<CudaDevice::Op>(g.op_second), g.m, g.n, g.k,
                alpha_, d_b, g.ld_first, g.stride_first, d_a, g.ld_second, g.stride_second, 0.0f, d_y, g.ldc, g.stride_c,
                g.batch);
      dev.download(y.data, d_y, y_bytes);
    } catch (const Error &e) {
      fail(label_, ": ", e.what());
    }
  }

  // The device copy of an operand: a weight stays resident, anything else goes through scratch.
  CudaDevice::DevicePtr operand(CudaDevice &dev, const ExternTensor &t, ResidentTensor &resident, DeviceBuffer &scratch) {
    const size_t bytes = t.num_elements() * sizeof(float);
    if (!t.constant) {
      const auto p = scratch.ensure(dev, bytes);
      dev.upload(p, t.data, bytes);
      return p;
    }
    if (resident.host != t.data || resident.bytes != bytes) {
      resident.host = nullptr;  // stays invalid if the upload fails
      const auto p = resident.buf.ensure(dev, bytes);
      dev.upload(p, t.data, bytes);
      resident.host = t.data;
      resident.bytes = bytes;
    }
    return resident.buf.ptr();
  }

  std::string label_;
  bool gemm_, trans_a_, trans_b_;
  float alpha_;
  std::vector<EpilogueStep> epilogue_;
  ResidentTensor resident_a_, resident_b_;
  DeviceBuffer scratch_a_, scratch_b_, scratch_y_;
};

}  // namespace

void install_cublas_runtime() {
  ExternKernelRegistry::global().add("cublas.matmul",
                                     [](const PlanStep &s) { return std::make_unique<CublasMatMul>(s); });
}

}  // namespace disco
