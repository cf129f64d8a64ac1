#include "targets/vitis_ai/region_executor.h"

#include "frontend/errors.h"

namespace disco::vitis_ai {

RegionExecutor::RegionExecutor(QProgram program, std::string label)
    : program_(std::move(program)), label_(std::move(label)) {}

void RegionExecutor::prepare(const std::function<ConstView(int)> &constant) {
  if (prepared_) return;
  weights_.resize(program_.ops.size());
  biases_.resize(program_.ops.size());
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const QOp &op = program_.ops[i];
    if (op.kind != UnitKind::Conv && op.kind != UnitKind::Gemm) continue;
    const FoldedWeights f = fold_op_weights(op, constant);
    weights_[i] = quantize_tensor(f.w.data(), f.shape, op.wfix);
    biases_[i] = quantize_tensor(f.b.data(), {static_cast<int64_t>(f.b.size())}, op.bfix);
  }
  prepared_ = true;
}

std::vector<Int8Tensor> RegionExecutor::run(std::vector<Int8Tensor> inputs) const {
  DISCO_CHECK(prepared_, label_, ": the weights are not prepared");
  DISCO_CHECK(static_cast<int>(inputs.size()) == program_.num_inputs, label_, ": ", inputs.size(),
              " inputs for a region of ", program_.num_inputs);
  std::vector<Int8Tensor> slots(program_.fix.size());
  for (size_t i = 0; i < inputs.size(); ++i) slots[i] = std::move(inputs[i]);
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const QOp &op = program_.ops[i];
    const Int8Tensor &x = slots.at(op.in.at(0));
    const int fo = program_.fix[op.out];
    const auto &g = op.geom;
    try {
      switch (op.kind) {
        case UnitKind::Conv: {
          DISCO_CHECK(g.size() == 9, "conv geometry has ", g.size(), " values");
          ConvGeometry geo{g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8]};
          slots[op.out] = conv2d(x, weights_[i], biases_[i], geo, op.act, fo);
          break;
        }
        case UnitKind::Gemm: slots[op.out] = gemm(x, weights_[i], biases_[i], op.act, fo); break;
        case UnitKind::MaxPool:
        case UnitKind::AvgPool: {
          DISCO_CHECK(g.size() == 8, "pool geometry has ", g.size(), " values");
          ConvGeometry geo;
          geo.stride_h = g[2], geo.stride_w = g[3], geo.pad_top = g[4], geo.pad_left = g[5];
          geo.pad_bottom = g[6], geo.pad_right = g[7];
          slots[op.out] =
              pool2d(x, op.kind == UnitKind::MaxPool ? PoolKind::Max : PoolKind::Average, g[0], g[1], geo, fo);
          break;
        }
        case UnitKind::GlobalAvgPool: slots[op.out] = global_average_pool(x, fo); break;
        case UnitKind::Add: slots[op.out] = add(x, slots.at(op.in.at(1)), op.act, fo); break;
        case UnitKind::Concat: {
          std::vector<const Int8Tensor *> xs;
          for (int s : op.in) xs.push_back(&slots.at(s));
          slots[op.out] = concat(xs, static_cast<int>(g.at(0)), fo);
          break;
        }
        case UnitKind::Resize: slots[op.out] = resize_nearest(x, g.at(0), g.at(1)); break;
        case UnitKind::Flatten: {
          Int8Tensor y = x;
          int64_t inner = 1;
          for (size_t d = 1; d < x.shape.size(); ++d) inner *= x.shape[d];
          y.shape = {x.shape.at(0), inner};
          slots[op.out] = std::move(y);
          break;
        }
      }
    } catch (const Error &e) {
      fail(label_, ": op ", op.label, " (", unit_kind_name(op.kind), "): ", e.what());
    }
    DISCO_CHECK(slots[op.out].fix == fo, label_, ": op ", op.label, " wrote fix ", slots[op.out].fix, ", the program says ",
                fo);
  }
  return slots;
}

}  // namespace disco::vitis_ai
