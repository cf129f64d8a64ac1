#include "lowering/weight_layout.h"

#include <cstring>
#include <map>

namespace disco {

namespace {

TensorData transposed(const TensorData &t) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const size_t size = dtype_size(t.dtype);
  TensorData out(t.dtype, {cols, rows});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(out.mutable_data() + static_cast<size_t>(c * rows + r) * size,
                  t.data() + static_cast<size_t>(r * cols + c) * size, size);
  return out;
}

}  // namespace

int transpose_constant_weights(Graph &g) {
  int count = 0;
  std::map<int, int> transposed_of;  // a weight that several Gemms read is transposed once
  for (auto &n : g.nodes) {
    if (n.op_type != "Gemm" || !n.domain.empty() || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    if (AttrReader(n.attrs, n.where()).get_int("transB", 0) == 0) continue;
    const Value &b = g.value(n.inputs[1]);
    if (!b.constant || b.constant->shape.size() != 2) continue;
    auto [it, fresh] = transposed_of.emplace(n.inputs[1], -1);
    if (fresh) {
      TensorData t = transposed(*b.constant);
      const DType dtype = b.dtype;
      const std::string name = b.name + "/transposed";
      it->second = g.add_value(name, dtype);  // b dangles from here on
      g.value(it->second).shape = Shape{Dim(t.shape[0]), Dim(t.shape[1])};
      g.value(it->second).constant = std::move(t);
      ++count;
    }
    n.inputs[1] = it->second;
    n.attrs["transB"].kind = Attribute::Int;
    n.attrs["transB"].i = 0;
  }
  return count;
}

}  // namespace disco
