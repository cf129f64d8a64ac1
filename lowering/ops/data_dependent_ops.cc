// Ops whose output sizes depend on the data: NonZero, Compress, Unique,
// NonMaxSuppression, and TopK when its k is computed from the data
// (TopKDynamic). Inference gives each data-dependent extent a fresh symbol;
// the runtime runs the op on the host (runtime/host_ops.h) and binds those
// symbols, so the kernels after it stay shape-generic.
#include "lowering/ops/data_dependent_ops.h"

#include <algorithm>

#include "lowering/infer_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

Dim data_dependent(InferContext &c, const std::string &what) {
  return c.store().fresh_symbol(c.node().name + "_" + what, c.where() + " output (data-dependent)");
}

void infer_nonzero(InferContext &c) {
  c.set_output(0, DType::I64, {Dim(c.rank(0)), data_dependent(c, "nnz")});
}

void infer_compress(InferContext &c) {
  if (c.rank(1) != 1) c.fail("condition must be 1-D, got rank ", c.rank(1));
  if (c.dtype(1) != DType::Bool) c.fail("condition must be bool");
  Dim kept = data_dependent(c, "kept");
  if (!c.attrs().has("axis")) return c.set_output(0, c.dtype(0), {kept});
  Shape s = c.shape(0);
  s[normalize_axis(c, c.attrs().get_int("axis"), c.rank(0))] = kept;
  c.set_output(0, c.dtype(0), s);
}

void infer_unique(InferContext &c) {
  Dim u = data_dependent(c, "unique");
  Shape y = {u};
  Dim n = num_elements(c.shape(0));
  if (c.attrs().has("axis")) {
    int64_t axis = normalize_axis(c, c.attrs().get_int("axis"), c.rank(0));
    y = c.shape(0);
    n = y[axis];
    y[axis] = u;
  }
  c.set_output(0, c.dtype(0), y);
  c.set_output(1, DType::I64, {u});
  c.set_output(2, DType::I64, {n});
  c.set_output(3, DType::I64, {u});
}

void infer_nms(InferContext &c) {
  if (c.dtype(0) != DType::F32 || c.dtype(1) != DType::F32) c.fail("boxes and scores must be float32");
  if (c.rank(0) != 3 || c.rank(1) != 3) c.fail("boxes and scores must be 3-D");
  c.require_equal(c.shape(0)[0], c.shape(1)[0], "boxes and scores batch sizes");
  c.require_equal(c.shape(0)[1], c.shape(1)[2], "boxes and scores box counts");
  c.set_output(0, DType::I64, {data_dependent(c, "selected"), Dim(3)});
}

// TopK with k computed from the data (runtime/host_ops.cc: topk_dynamic).
void infer_topk_dynamic(InferContext &c) {
  if (c.rank(0) < 1) c.fail("X must have rank >= 1");
  if (c.rank(1) > 1) c.fail("K must be a scalar or hold one value");
  Shape out = c.shape(0);
  // A folded k (min(300, anchors)) keeps its dims; one from the data binds a fresh symbol.
  const auto k = c.dims_value(1);
  out[normalize_axis(c, c.attrs().get_int("axis", -1), c.rank(0))] =
      k && k->size() == 1 ? k->at(0) : data_dependent(c, "k");
  c.set_output(0, c.dtype(0), out);
  c.set_output(1, DType::I64, out);
}

}  // namespace

bool route_data_dependent_topk(Graph &g, Node &node) {
  if (!node.domain.empty() || node.op_type != "TopK" || node.opset < 10 || node.inputs.size() < 2) return false;
  const int k = node.inputs[1];
  if (k < 0 || std::find(g.inputs.begin(), g.inputs.end(), k) != g.inputs.end()) return false;
  const Value &v = g.value(k);
  if (v.constant || v.producer < 0) return false;  // a symbolic sym_value too: TopK's kernels take k as a constant
  node.domain = "disco";
  node.op_type = "TopKDynamic";
  node.opset = 1;
  return true;
}

void register_data_dependent_ops(OpRegistry &r) {
  r.add("NonZero", 9, OpKind::Host, infer_nonzero, nullptr);
  r.add("Compress", 9, OpKind::Host, infer_compress, nullptr);
  r.add("Unique", 11, OpKind::Host, infer_unique, nullptr);
  r.add("NonMaxSuppression", 10, OpKind::Host, infer_nms, nullptr);
  r.add(OpDef("disco", "TopKDynamic", 1, kAnyLaterOpset, OpKind::Host, infer_topk_dynamic, nullptr));
}

}  // namespace disco
