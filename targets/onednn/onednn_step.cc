#include "targets/onednn/onednn_step.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "targets/onednn/onednn_weights.h"

namespace disco {

dnnl::engine &onednn_engine() {
  static auto *e = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed: kernels may outlive statics
  return *e;
}

dnnl::memory::dims plain_strides(const dnnl::memory::dims &dims) {
  dnnl::memory::dims s(dims.size());
  dnnl::memory::dim step = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = step;
    step *= std::max<dnnl::memory::dim>(dims[i], 1);
  }
  return s;
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims &dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plain_strides(dims));
}

std::ostream &operator<<(std::ostream &os, const ShapeText &t) {
  os << "[";
  for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? ", " : "") << t.shape[i];
  return os << "]";
}

namespace {

// OpenMP's own team size (OMP_NUM_THREADS, else the processors), read before any step changes it.
int openmp_default_team() {
  static const int n = omp_get_max_threads();
  return n;
}

dnnl::algorithm eltwise_algorithm(OnednnPostOp::Kind k) {
  switch (k) {
    case OnednnPostOp::Relu:
      return dnnl::algorithm::eltwise_relu;
    case OnednnPostOp::GeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case OnednnPostOp::Sigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case OnednnPostOp::Tanh:
      return dnnl::algorithm::eltwise_tanh;
    case OnednnPostOp::Swish:  // alpha: the sigmoid's scaling
      return dnnl::algorithm::eltwise_swish;
    case OnednnPostOp::HardSwish:  // alpha and beta ignored in 2.6: x * relu6(x + 3) / 6
      return dnnl::algorithm::eltwise_hardswish;
    case OnednnPostOp::Clip:
      return dnnl::algorithm::eltwise_clip;
    case OnednnPostOp::Linear:
      return dnnl::algorithm::eltwise_linear;
    default:
      return dnnl::algorithm::undef;
  }
}

dnnl::algorithm binary_algorithm(OnednnPostOp::Kind k) {
  switch (k) {
    case OnednnPostOp::Add:
      return dnnl::algorithm::binary_add;
    case OnednnPostOp::Sub:
      return dnnl::algorithm::binary_sub;
    case OnednnPostOp::Mul:
      return dnnl::algorithm::binary_mul;
    case OnednnPostOp::Div:
      return dnnl::algorithm::binary_div;
    case OnednnPostOp::Max:
      return dnnl::algorithm::binary_max;
    case OnednnPostOp::Min:
      return dnnl::algorithm::binary_min;
    default:
      return dnnl::algorithm::undef;
  }
}

}  // namespace

Epilogue::Lowered Epilogue::lower(const std::vector<dnnl::memory::desc> &operand_descs, int bias, int sum) const {
  Lowered l;
  l.args.assign(operands.size(), 0);
  int next = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const OnednnPostOp &op = ops[k];
    if (op.num_operands() == 0) {
      l.ops.append_eltwise(1.0f, eltwise_algorithm(op.kind), static_cast<float>(op.a), static_cast<float>(op.b));
      continue;
    }
    const int i = next++;
    if (i == bias) {
      if (k != 0 || op.kind != OnednnPostOp::Add) fail("internal: the bias must be the first post-op, an Add");
      continue;
    }
    if (i == sum) {
      if (op.kind != OnednnPostOp::Add) fail("internal: only an Add can become a sum post-op");
      l.ops.append_sum(1.0f);
      continue;
    }
    l.args[i] = DNNL_ARG_ATTR_MULTIPLE_POST_OP(l.ops.len()) | DNNL_ARG_SRC_1;
    l.ops.append_binary(binary_algorithm(op.kind), operand_descs.at(i));
  }
  return l;
}

OnednnStep::OnednnStep(const PlanStep &step) : label_(step.label), call_(step.extern_call), stream_(onednn_engine()) {
  openmp_default_team();  // before any run sets a team
  post_ops_ = parse_post_ops(param_str(step, "post_ops"), "step " + step.label + " (" + step.extern_call + ")");
}

void OnednnStep::set_num_threads(int n) {
  if (n == threads_) return;
  threads_ = n;
  clear_cache();  // primitives plan their work for the team size they were made with
}

int OnednnStep::team_for(double flops) const {
  if (flops < kSerialFlops) return 1;
  return threads_ > 0 ? threads_ : openmp_default_team();
}

void OnednnStep::use_team(int team) const {
  if (omp_get_max_threads() != team) omp_set_num_threads(team);
}

const ExternTensor &OnednnStep::input(const ExternCall &call, size_t i, const char *what) const {
  check(i < call.inputs.size() && call.inputs[i].dtype != DType::Undefined, "input ", i, " (", what, ") is missing");
  const ExternTensor &t = call.inputs[i];
  check(t.dtype == DType::F32, what, " has dtype ", dtype_name(t.dtype), ", expected float32");
  return t;
}

std::vector<int64_t> OnednnStep::shape_key(const ExternCall &call) {
  std::vector<int64_t> key;
  for (const auto &t : call.inputs) {
    key.push_back(t.dtype != DType::Undefined ? static_cast<int64_t>(t.shape.size()) : -1);
    key.insert(key.end(), t.shape.begin(), t.shape.end());
  }
  return key;
}

Epilogue OnednnStep::epilogue(const ExternCall &call, size_t first, const std::vector<int64_t> &dst) {
  Epilogue e;
  const size_t rank = dst.size();
  size_t next = first, owned = 0;
  // Operand data that the kernel computes itself, kept until the next run.
  auto own = [&](size_t n) -> std::vector<float> & {
    if (owned_.size() <= owned) owned_.resize(owned + 1);
    owned_[owned].resize(n);
    return owned_[owned++];
  };
  auto scalar_op = [&](OnednnPostOp::Kind kind, double v) {
    std::vector<float> &s = own(1);
    s[0] = static_cast<float>(v);
    e.ops.push_back({kind});
    e.operands.push_back({s.data(), std::vector<int64_t>(rank, 1)});
    e.inputs.push_back(-1);
  };
  auto padded = [&](const std::vector<int64_t> &dims, size_t operand) {
    check(dims.size() <= rank, "post-op operand ", operand, " ", shape_text(dims),
          " has a higher rank than the result ", shape_text(dst));
    std::vector<int64_t> p(rank - dims.size(), 1);
    p.insert(p.end(), dims.begin(), dims.end());
    for (size_t d = 0; d < rank; ++d)
      check(p[d] == 1 || p[d] == dst[d], "post-op operand ", operand, " ", shape_text(dims),
            " does not broadcast to the result ", shape_text(dst));
    return p;
  };
  for (const auto &op : post_ops_) {
    if (op.num_operands() == 0) {
      // oneDNN 2.6's JIT post-ops give every eltwise post-op of one algorithm
      // the parameters of one of them (seen with linear(2, 0) then linear(1, 1)
      // in a brgemm matmul), so a repeat with other parameters becomes binary
      // ops with scalar operands, which each read their own memory.
      const OnednnPostOp *same = nullptr;
      for (const auto &p : e.ops)
        if (p.kind == op.kind && !same) same = &p;
      if (!same || (same->a == op.a && same->b == op.b)) {
        e.ops.push_back(op);
      } else if (op.kind == OnednnPostOp::Linear) {
        if (op.a != 1) scalar_op(OnednnPostOp::Mul, op.a);
        if (op.b != 0) scalar_op(OnednnPostOp::Add, op.b);
      } else if (op.kind == OnednnPostOp::Clip) {
        if (!std::isinf(op.a)) scalar_op(OnednnPostOp::Max, op.a);
        if (!std::isinf(op.b)) scalar_op(OnednnPostOp::Min, op.b);
      } else {
        error("two ", post_ops_to_string({*same}), " and ", post_ops_to_string({op}),
              " post-ops with different parameters, which oneDNN 2.6 cannot run in one chain");
      }
      continue;
    }
    if (op.kind != OnednnPostOp::BatchNorm) {
      e.ops.push_back(op);
      e.inputs.push_back(static_cast<int>(next));
      const ExternTensor &t = input(call, next++, "a post-op operand");
      e.operands.push_back({static_cast<const float *>(t.data), padded(t.shape, next - 1 - first)});
      continue;
    }
    // y = (x - mean) / sqrt(var + eps) * scale + B = x * a + b, per channel (dim 1).
    check(rank >= 2, "BatchNormalization needs a result of rank >= 2");
    const int64_t c = dst[1];
    const float *p[4];
    for (int i = 0; i < 4; ++i) {
      const ExternTensor &t = input(call, next++, "BatchNormalization parameter");
      check(t.shape.size() == 1 && t.shape[0] == c, "BatchNormalization parameter ", i + 1, " is ", shape_text(t.shape),
            ", expected [", c, "]");
      p[i] = static_cast<const float *>(t.data);
    }
    own(c);
    own(c);  // may move the first vector (its data stays put): index them afterwards
    std::vector<float> &a = owned_[owned - 2], &b = owned_[owned - 1];
    for (int64_t k = 0; k < c; ++k) {
      a[k] = p[0][k] / std::sqrt(p[3][k] + static_cast<float>(op.a));
      b[k] = p[1][k] - p[2][k] * a[k];
    }
    std::vector<int64_t> dims(rank, 1);
    dims[1] = c;
    e.ops.push_back({OnednnPostOp::Mul});
    e.operands.push_back({a.data(), dims});
    e.ops.push_back({OnednnPostOp::Add});
    e.operands.push_back({b.data(), dims});
    e.inputs.insert(e.inputs.end(), {-1, -1});
  }
  check(next == call.inputs.size(), "has ", call.inputs.size(), " inputs, its post-ops read ", next);
  return e;
}

void OnednnStep::add_scratchpad(const dnnl::primitive_desc_base &pd, std::unordered_map<int, dnnl::memory> &args) {
  const dnnl::memory::desc d = pd.scratchpad_desc();
  if (d.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(d, onednn_engine(), nullptr);
}

void OnednnStep::execute(dnnl::primitive &p, const std::unordered_map<int, dnnl::memory> &args) {
  const auto pad = args.find(DNNL_ARG_SCRATCHPAD);
  if (pad != args.end())
    pad->second.set_data_handle(scratchpad_.get(pad->second.get_desc().get_size() / sizeof(float) + 1));
  guarded("run the primitive", [&] {
    p.execute(stream_, args);
    stream_.wait();
  });
}

std::shared_ptr<dnnl::memory> OnednnStep::packed_weights(const dnnl::memory::desc &user, const void *data,
                                                         const dnnl::memory::desc &want) {
  packed_.erase(std::remove_if(packed_.begin(), packed_.end(), [](const Packed &p) { return p.mem.expired(); }),
                packed_.end());
  for (const auto &p : packed_)
    if (p.data == data && p.want == want) return p.mem.lock();
  auto mem = guarded("reorder the weights", [&] { return shared_packed_weights(user, data, want, stream_); });
  packed_.push_back({want, data, mem});
  return mem;
}

void OnednnStep::made_primitive(const dnnl::primitive_desc_base &pd) {
  ++created_;
  impl_ = pd.impl_info_str();
  fresh_ = true;
}

void OnednnStep::ran(const std::string &impl) {
  impl_ = impl;
  static const bool verbose = [] {
    const char *v = std::getenv("DISCO_ONEDNN_VERBOSE");
    return v && *v && std::string(v) != "0";
  }();
  if (verbose && fresh_)
    std::fprintf(stderr, "disco onednn: step %s (%s): %s\n", label_.c_str(), call_.c_str(), impl.c_str());
  fresh_ = false;
}

}  // namespace disco
