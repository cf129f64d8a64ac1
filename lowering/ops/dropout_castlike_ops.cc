// Ops that pass their input through, or convert it: Dropout, which is the
// identity at inference (and in training with ratio 0), and CastLike, which
// is Cast with the target dtype taken from a second input.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// ---- Dropout ------------------------------------------------------------------

// Fails unless this Dropout is the identity. Before opset 12 an inference
// runtime runs it in inference mode (as ONNX Runtime does, is_test or not);
// from 12 on, training_mode and ratio are inputs whose values must be known:
// training with ratio 0 is still the identity, any other ratio draws random
// numbers.
void require_identity_dropout(InferContext &c) {
  if (c.opset() < 12 || !c.has_input(2)) return;
  if (c.required_ints(2, "training_mode").at(0) == 0) return;
  float ratio = c.has_input(1) ? static_cast<float>(c.required_floats(1, "ratio").at(0)) : 0.5f;
  if (ratio != 0.0f) c.fail("training-mode Dropout with ratio ", ratio, " draws random numbers, which disco does not");
}

void infer_dropout(InferContext &c) {
  require_identity_dropout(c);
  c.set_output(0, c.dtype(0), c.shape(0));
  // The mask has X's dtype before opset 10, bool since.
  if (c.has_output(1)) c.set_output(1, c.opset() < 10 ? c.dtype(0) : DType::Bool, c.shape(0));
}

void lower_dropout(LowerContext &c) {
  c.set_output(0, c.in(0).f);
  if (!c.has_output(1)) return;
  auto v = c.vars(c.in(0).rank());
  c.define_output(1, v, Halide::cast(halide_type(c.out_dtype(1)), 1));
}

// ---- CastLike -------------------------------------------------------------------

void infer_castlike(InferContext &c) { c.set_output(0, c.dtype(1), c.shape(0)); }

// Cast's lowering reads only the input and the output's dtype, so CastLike
// shares it rather than repeating its rounding rules.
void lower_castlike(LowerContext &c) {
  std::string why;
  const OpDef *cast = OpRegistry::global().find("", "Cast", c.opset(), &why);
  if (!cast || !cast->lower) c.fail("no Cast lowering to share: ", why);
  cast->lower(c);
}

}  // namespace

void register_dropout_castlike_ops(OpRegistry &r) {
  r.add("Dropout", 1, OpKind::Elementwise, infer_dropout, lower_dropout);
  r.add("CastLike", 15, OpKind::Elementwise, infer_castlike, lower_castlike);
}

}  // namespace disco
