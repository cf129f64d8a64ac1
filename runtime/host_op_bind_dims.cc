#include "runtime/host_op_bind_dims.h"

#include "frontend/errors.h"

namespace disco {

std::vector<TensorData> run_time_dims(const std::vector<const TensorData *> &in, const HostAttrs &) {
  DISCO_CHECK(in.size() == 1 && in[0], "RunTimeDims takes one integer tensor");
  const TensorData &x = *in[0];
  std::vector<TensorData> out{x};
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t v = x.int_at(i);
    // Bound into int32 kernel arguments, as every symbol is.
    DISCO_CHECK(v >= 0 && v <= INT32_MAX, "RunTimeDims: element ", i, " of a shape value computed at run time is ", v,
                "; disco binds it as an extent, which must lie in [0, 2^31)");
    out.emplace_back(DType::U8, std::vector<int64_t>{v});
  }
  return out;
}

}  // namespace disco
