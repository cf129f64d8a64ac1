// Symbolic shape inference tested through graphs: the Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains of exported transformers, reshape
// round trips, and the facts each op records. The store itself is tested in
// shape_store_test.cc.
#include <gtest/gtest.h>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "lowering/shape_store.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim b = Dim::symbol("b"), s = Dim::symbol("s"), n = Dim::symbol("n");

struct Inferred {
  Graph g;
  ShapeStore store;
  const Shape &shape(const std::string &value) const { return *g.value(g.find_value(value)).shape; }
  bool has_check(RuntimeCheck::Kind kind, const Dim &a, const Dim &b) const {
    for (const auto &c : store.checks())
      if (c.kind == kind && store.canonical(c.a) == store.canonical(a) && store.canonical(c.b) == store.canonical(b))
        return true;
    return false;
  }
};

Inferred infer(GraphBuilder &gb, ShapeStore store = {}) {
  Inferred r{gb.build(), std::move(store)};
  infer_shapes(r.g, r.store);
  return r;
}

void expect_infer_error(GraphBuilder &gb, const std::string &node, const std::string &what) {
  testing::expect_error_naming([&] { infer(gb); }, node, what);
}

// dim `index` of the input's shape, as a 1-element tensor, the way torch exports `x.size(i)`.
std::string size_of(GraphBuilder &gb, const std::string &x, int64_t index, int opset) {
  auto shp = gb.op("Shape", {x});
  auto d = gb.op("Gather", {shp, gb.constant(x + "_i" + std::to_string(index), i64({}, {index}))});
  if (opset >= 13) return gb.op("Unsqueeze", {d, gb.constant(x + "_ax" + std::to_string(index), i64({1}, {0}))});
  return gb.op("Unsqueeze", {d}, attrs({{"axes", attr_ints({0})}}));
}

// ---- Graphs: symbolic reshape targets ------------------------------------------------------

TEST(ShapeInference, ShapeGatherUnsqueezeConcatReshapeGivesASymbolicTarget) {
  for (int opset : {11, 13, 17}) {
    GraphBuilder gb(opset);
    auto x = gb.input("x", DType::F32, {b, s, 768});
    auto heads = gb.constant("heads", i64({2}, {12, 64}));
    auto target = gb.op("Concat", {size_of(gb, x, 0, opset), size_of(gb, x, 1, opset), heads},
                        attrs({{"axis", attr_int(0)}}));
    auto y = gb.op("Reshape", {x, target});
    gb.output(y);
    Inferred r = infer(gb);
    EXPECT_EQ(shape_str(r.shape(y)), "[b, s, 12, 64]") << "opset " << opset;
    EXPECT_TRUE(r.store.same_num_elements(r.shape(x), r.shape(y)));
    EXPECT_TRUE(r.store.checks().empty()) << "nothing to check at run time";
  }
}

TEST(ShapeInference, ReshapeRoundTripIsProvenToKeepTheShape) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, 768});
  // [b, s, 768] -> [b*s, 768] with b*s computed by Mul on shape values.
  auto bs = gb.op("Mul", {size_of(gb, x, 0, 13), size_of(gb, x, 1, 13)});
  auto flat = gb.op("Reshape", {x, gb.op("Concat", {bs, gb.constant("c768", i64({1}, {768}))},
                                         attrs({{"axis", attr_int(0)}}))});
  auto back = gb.op("Reshape", {flat, gb.op("Shape", {x})});
  gb.output(back);
  Inferred r = infer(gb);
  EXPECT_EQ(shape_str(r.shape(flat)), "[b*s, 768]");
  EXPECT_TRUE(r.store.same_shape(r.shape(back), r.shape(x)));
  EXPECT_TRUE(r.store.same_num_elements(r.shape(x), r.shape(flat)));
}

TEST(ShapeInference, ReshapeRoundTripWithMinusOneKeepsTheShape) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, 768});
  auto flat = gb.op("Reshape", {x, gb.constant("t1", i64({2}, {-1, 768}))});
  // Back with the batch from x's shape and -1 for the sequence.
  auto target = gb.op("Concat", {size_of(gb, x, 0, 13), gb.constant("t2", i64({2}, {-1, 768}))},
                      attrs({{"axis", attr_int(0)}}));
  auto back = gb.op("Reshape", {flat, target});
  gb.output(back);
  Inferred r = infer(gb);
  EXPECT_EQ(shape_str(r.shape(flat)), "[b*s, 768]");
  EXPECT_TRUE(r.store.same_num_elements(r.shape(x), r.shape(flat)));
  EXPECT_TRUE(r.store.same_shape(r.shape(back), r.shape(x)));
  EXPECT_TRUE(r.store.checks().empty()) << "768*b*s divides by 768 and by 768*b";
}

TEST(ShapeInference, MinusOneThatMayNotDivideAddsADivisibilityCheck) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {n});
  auto y = gb.op("Reshape", {x, gb.constant("t", i64({2}, {-1, 3}))});
  gb.output(y);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(y), (Shape{floor_div(n, 3), 3}));
  EXPECT_TRUE(r.has_check(RuntimeCheck::Divisible, n, 3));
  // 3*(n/3) equals n only because of that check; the store knows it.
  EXPECT_TRUE(r.store.same_num_elements(r.shape(x), r.shape(y)));
}

TEST(ShapeInference, ReshapeZeroCopiesTheInputDimUnlessAllowzero) {
  GraphBuilder gb(14);
  auto x = gb.input("x", DType::F32, {b, 0, 4});
  auto y = gb.op("Reshape", {x, gb.constant("t", i64({3}, {0, 4, 0}))});
  auto z = gb.op("Reshape", {x, gb.constant("u", i64({3}, {0, 4, 0}))}, attrs({{"allowzero", attr_int(1)}}));
  gb.output(y);
  gb.output(z);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(y), (Shape{b, 4, 4}));
  EXPECT_EQ(r.shape(z), (Shape{0, 4, 0}));
}

TEST(ShapeInference, ReshapeToAnotherSymbolMergesTheSymbols) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {n});
  auto y = gb.input("y", DType::F32, {s});
  auto z = gb.op("Reshape", {x, gb.op("Shape", {y})});
  gb.output(z);
  Inferred r = infer(gb);
  EXPECT_TRUE(r.store.same_dim(n, s));
  EXPECT_TRUE(r.has_check(RuntimeCheck::Equal, n, s));
}

TEST(ShapeInference, ReshapeToADifferentConstantElementCountFails) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {2, 3});
  gb.output(gb.op("Reshape", {x, gb.constant("t", i64({2}, {4, 2}))}));
  expect_infer_error(gb, "Reshape_0", "element count");
}

// torch 1.13 exported GPT-J's rotate_every_two (a stack after a transpose)
// as a flatten whose target repeats dims: [b, 2, 8, s, 32] to
// [b, 2, 8, -1, 8, s, 32], where -1 would be 1/8 at every shape. The Reshape
// fails, naming itself; it had inferred b*s*512 / (b*s*4096) and left the
// error to a later Mul's broadcast.
TEST(ShapeInference, MinusOneThatWouldBeAFractionAtEveryShapeFails) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 2, 8, s, 32});
  auto target = gb.op("Concat",
                      {size_of(gb, x, 0, 13), gb.constant("mid", i64({3}, {2, 8, -1})),
                       gb.constant("eight", i64({1}, {8})), size_of(gb, x, 3, 13), gb.constant("last", i64({1}, {32}))},
                      attrs({{"axis", attr_int(0)}}));
  gb.output(gb.op("Reshape", {x, target}));
  expect_infer_error(gb, "Reshape", "hold 8 times the input's");
}

// A broadcast that fails at compile time names the dim, both extents and
// both shapes (it read "cannot broadcast broadcast dim 1 (3 vs 4): 3 vs 4").
TEST(ShapeInference, ABroadcastOfDifferingConstantsFailsNamingBothShapes) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 3});
  auto y = gb.input("y", DType::F32, {4});
  gb.output(gb.op("Add", {x, y}));
  expect_infer_error(gb, "Add", "cannot broadcast dim 1 (3 vs 4) of [b, 3] and [4]");
}

TEST(ShapeInference, ReshapeWithTwoMinusOnesFails) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {2, 3});
  gb.output(gb.op("Reshape", {x, gb.constant("t", i64({2}, {-1, -1}))}));
  expect_infer_error(gb, "Reshape_0", "more than one -1");
}

// ---- Graphs: facts recorded by other ops ---------------------------------------------------

TEST(ShapeInference, ConcatMergesTheOtherDims) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 4});
  auto y = gb.input("y", DType::F32, {s, 2});
  auto z = gb.op("Concat", {x, y}, attrs({{"axis", attr_int(1)}}));
  gb.output(z);
  Inferred r = infer(gb);
  EXPECT_TRUE(r.store.same_dim(b, s));
  EXPECT_EQ(r.shape(z), (Shape{b, 6}));
}

TEST(ShapeInference, ConcatOfShapeValuesFoldsToDims) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto c = gb.op("Concat", {gb.op("Shape", {x}), gb.constant("one", i64({1}, {1}))}, attrs({{"axis", attr_int(0)}}));
  gb.output(c);
  Inferred r = infer(gb);
  const Value &v = r.g.value(r.g.find_value(c));
  ASSERT_TRUE(v.sym_value);
  EXPECT_EQ(*v.sym_value, (std::vector<Dim>{b, s, 1}));
}

TEST(ShapeInference, SqueezingASymbolicDimPinsItToOne) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto y = gb.op("Squeeze", {x, gb.constant("axes", i64({1}, {1}))});
  gb.output(y);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(y), (Shape{b}));
  EXPECT_EQ(r.store.canonical(s), Dim(1));
}

TEST(ShapeInference, SqueezeWithoutAxesRefusesADimThatMayBeOne) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 1});
  gb.output(gb.op("Squeeze", {x}));
  expect_infer_error(gb, "Squeeze_0", "cannot tell whether dim 0");
}

TEST(ShapeInference, GatherOnASymbolicDimChecksTheIndexAtRunTime) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto y = gb.op("Gather", {x, gb.constant("i", i64({}, {-2}))}, attrs({{"axis", attr_int(1)}}));
  gb.output(y);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(y), (Shape{b}));
  EXPECT_TRUE(r.has_check(RuntimeCheck::AtLeast, s, 2));
}

TEST(ShapeInference, UnsqueezeWithARepeatedAxisFails) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b});
  gb.output(gb.op("Unsqueeze", {x, gb.constant("axes", i64({2}, {0, -3}))}));
  expect_infer_error(gb, "Unsqueeze_0", "repeated");
}

TEST(ShapeInference, SplitOfASymbolicDimChecksEvenness) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto outs = gb.op_n("Split", {x}, 3, attrs({{"axis", attr_int(1)}}));
  gb.output(outs[0]);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(outs[2]), (Shape{b, floor_div(s, 3)}));
  EXPECT_TRUE(r.has_check(RuntimeCheck::Divisible, s, 3));
}

TEST(ShapeInference, SplitSizesMustAddUpToAFixedDim) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 4});
  auto outs = gb.op_n("Split", {x, gb.constant("split", i64({2}, {1, 2}))}, 2, attrs({{"axis", attr_int(1)}}));
  gb.output(outs[0]);
  expect_infer_error(gb, "Split_0", "sum of the split sizes");
}

TEST(ShapeInference, ExportedExpandWithAMinusOneGuardFolds) {
  // torch's expand(b, -1) exports as Where(Equal(sizes, -1), ones, sizes).
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto y = gb.input("y", DType::F32, {1, 3});
  auto sizes = gb.op("Concat", {size_of(gb, x, 0, 13), gb.constant("m1", i64({1}, {-1}))},
                     attrs({{"axis", attr_int(0)}}));
  auto is_neg = gb.op("Equal", {sizes, gb.constant("neg", i64({}, {-1}))});
  auto fixed = gb.op("Where", {is_neg, gb.op("ConstantOfShape", {gb.constant("two", i64({1}, {2}))},
                                             attrs({{"value", attr_tensor(i64({1}, {1}))}})),
                               sizes});
  auto z = gb.op("Expand", {y, fixed});
  gb.output(z);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(z), (Shape{b, 3}));
}

TEST(ShapeInference, RangeUpToASymbolicLimitHasASymbolicLength) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto seq = gb.op("Gather", {gb.op("Shape", {x}), gb.constant("one", i64({}, {1}))});
  auto r1 = gb.op("Range", {gb.constant("zero", i64({}, {0})), seq, gb.constant("d1", i64({}, {1}))});
  auto r2 = gb.op("Range", {gb.constant("st", i64({}, {0})), seq, gb.constant("d2", i64({}, {2}))});
  gb.output(r1);
  gb.output(r2);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(r1), (Shape{s}));
  EXPECT_EQ(r.shape(r2), (Shape{floor_div(s + 1, 2)}));
}

TEST(ShapeInference, ConstantOfShapeTakesTheSymbolicShape) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s});
  auto y = gb.op("ConstantOfShape", {gb.op("Shape", {x})});
  gb.output(y);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(y), (Shape{b, s}));
  EXPECT_EQ(r.g.value(r.g.find_value(y)).dtype, DType::F32);
}

// ---- Graphs: Slice extents ---------------------------------------------------------------

Shape slice_shape(const Dim &d, int64_t start, int64_t end, int64_t step, ShapeStore store = {}) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {d});
  auto y = gb.op("Slice", {x, gb.constant("s", i64({1}, {start})), gb.constant("e", i64({1}, {end})),
                           gb.constant("a", i64({1}, {0})), gb.constant("st", i64({1}, {step}))});
  gb.output(y);
  return infer(gb, std::move(store)).shape(y);
}

TEST(ShapeInference, SliceToTheEndOfASymbolicDim) {
  EXPECT_EQ(slice_shape(s, 0, kIntMax, 1), (Shape{s}));
  EXPECT_EQ(slice_shape(s, -1, kIntMin, -1), (Shape{s})) << "a full reverse";
  EXPECT_EQ(slice_shape(s, 1, kIntMax, 1), (Shape{s - min(Dim(1), s)}));
  // A known lower bound removes the clamp.
  ShapeStore st;
  st.declare_symbol("s", "input 'x' dim 0");
  st.facts("s").min = 3;
  EXPECT_EQ(slice_shape(s, 1, kIntMax, 1, st), (Shape{s - 1}));
  EXPECT_EQ(slice_shape(s, -3, kIntMax, 1, st), (Shape{3}));
  EXPECT_EQ(slice_shape(s, 0, -1, 2, st), (Shape{floor_div(s, 2)}));
}

// Python's slice semantics, by enumerating the indices it visits.
int64_t reference_slice_len(int64_t len, int64_t start, int64_t stop, int64_t step) {
  int64_t first;
  if (step > 0) first = start < 0 ? std::max<int64_t>(start + len, 0) : std::min(start, len);
  else first = start < 0 ? start + len : std::min(start, len - 1);
  int64_t last = stop < 0 && stop > -(int64_t(1) << 40) ? stop + len : stop;  // exclusive
  int64_t count = 0;
  for (int64_t i = first; i >= 0 && i < len; i += step) {
    if ((step > 0 && i >= last) || (step < 0 && i <= last)) break;
    ++count;
  }
  return count;
}

TEST(ShapeInference, SymbolicSliceExtentsMatchPythonSlicing) {
  const std::vector<int64_t> bounds{kIntMin, -7, -3, -1, 0, 1, 2, 5, kIntMax};
  for (int64_t step : {1, 2, 3, -1, -2})
    for (int64_t start : bounds)
      for (int64_t stop : bounds) {
        Dim len = slice_shape(s, start, stop, step)[0];
        for (int64_t v = 0; v <= 6; ++v)
          EXPECT_EQ(len.eval({{"s", v}}), reference_slice_len(v, start, stop, step))
              << "x[" << start << ":" << stop << ":" << step << "] with len(x) = " << v << ", extent " << len.str();
      }
}

TEST(ShapeInference, ShapeAtOpset15SlicesTheDims) {
  GraphBuilder gb(15);
  auto x = gb.input("x", DType::F32, {b, s, 768});
  auto y = gb.op("Shape", {x}, attrs({{"start", attr_int(1)}, {"end", attr_int(-1)}}));
  gb.output(y);
  Inferred r = infer(gb);
  const Value &v = r.g.value(r.g.find_value(y));
  EXPECT_EQ(*v.shape, (Shape{1}));
  EXPECT_EQ(*v.sym_value, (std::vector<Dim>{s}));
}

TEST(ShapeInference, SlicesOfShapeValuesFoldToDims) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, 768});
  auto shp = gb.op("Shape", {x});
  auto tail = gb.op("Slice", {shp, gb.constant("one", i64({1}, {1})), gb.constant("big", i64({1}, {kIntMax}))});
  auto rev = gb.op("Slice", {shp, gb.constant("m1", i64({1}, {-1})), gb.constant("min", i64({1}, {kIntMin})),
                             gb.constant("ax", i64({1}, {0})), gb.constant("st", i64({1}, {-2}))});
  gb.output(tail);
  gb.output(rev);
  Inferred r = infer(gb);
  EXPECT_EQ(*r.g.value(r.g.find_value(tail)).sym_value, (std::vector<Dim>{s, 768}));
  EXPECT_EQ(*r.g.value(r.g.find_value(rev)).sym_value, (std::vector<Dim>{768, b}));
}

// x [b, s] padded along s to whole windows of 7, as Swin pads each map:
// (7 - s % 7) % 7 columns, from the shape. `len` is s as a shape value.
struct PaddedToWindows {
  std::string x, len, y;
};
PaddedToWindows pad_to_whole_windows(GraphBuilder &gb) {
  auto x = gb.input("x", DType::F32, {b, s});
  auto len =
      gb.op("Slice", {gb.op("Shape", {x}), gb.constant("one", i64({1}, {1})), gb.constant("two", i64({1}, {2}))});
  auto seven = gb.constant("seven", i64({1}, {7}));
  auto pad = gb.op("Mod", {gb.op("Sub", {seven, gb.op("Mod", {len, seven})}), seven});
  auto y = gb.op(
      "Pad", {x, gb.op("Concat", {gb.constant("zeros", i64({3}, {0, 0, 0})), pad}, attrs({{"axis", attr_int(0)}}))});
  return {x, len, y};
}

TEST(ShapeInference, ModOfShapeValuesFoldsSoAPadToWholeWindowsStaysSymbolic) {
  // Swin pads each map to whole 7x7 windows: (7 - s % 7) % 7 rows. Mod of
  // shape values did not fold, and the Pad wanted its pads at compile time.
  GraphBuilder gb(13);
  const auto [x, len, y] = pad_to_whole_windows(gb);
  gb.output(y);
  // C's remainder (fmod = 1) of -s and Python's (fmod = 0) of s - 9, by 4.
  auto four = gb.constant("four", i64({1}, {4}));
  auto c_mod = gb.op("Mod", {gb.op("Neg", {len}), four}, attrs({{"fmod", attr_int(1)}}));
  auto py_mod = gb.op("Mod", {gb.op("Sub", {len, gb.constant("nine", i64({1}, {9}))}), four});
  gb.output(c_mod);
  gb.output(py_mod);
  Inferred r = infer(gb);
  const Dim rows = r.shape(y)[1];
  for (int64_t at : {1, 7, 10, 14, 15}) EXPECT_EQ(rows.eval({{"s", at}}), (at + 6) / 7 * 7) << "s = " << at;
  const Dim c = (*r.g.value(r.g.find_value(c_mod)).sym_value)[0],
            py = (*r.g.value(r.g.find_value(py_mod)).sym_value)[0];
  EXPECT_EQ(c.eval({{"s", 7}}), -3);   // C: -7 % 4
  EXPECT_EQ(py.eval({{"s", 2}}), 1);   // Python: -7 % 4
  EXPECT_EQ(py.eval({{"s", 12}}), 3);  // Python: 3 % 4
}

TEST(ShapeInference, ReductionsOfShapeValuesFoldSoAFlattenStaysSymbolic) {
  // Keras' Flatten through tf2onnx: Reshape(x, [b, ReduceProd(Shape(x)[1:])]);
  // and a sum, a max and a min of the same dims. Without the fold the Reshape's
  // target was a run-time value and every input shape compiled its own.
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, n});
  auto shape = gb.op("Shape", {x});
  auto rest = gb.op("Slice", {shape, gb.constant("one", i64({1}, {1})), gb.constant("three", i64({1}, {3}))});
  auto first = gb.op("Slice", {shape, gb.constant("zero", i64({1}, {0})), gb.constant("one_", i64({1}, {1}))});
  auto prod = gb.op("ReduceProd", {rest}, attrs({{"keepdims", attr_int(1)}}));
  auto flat = gb.op("Reshape", {x, gb.op("Concat", {first, prod}, attrs({{"axis", attr_int(0)}}))});
  gb.output(flat);
  auto sum = gb.op("ReduceSum", {rest, gb.constant("axes", i64({1}, {0}))}, attrs({{"keepdims", attr_int(0)}}));
  auto most = gb.op("ReduceMax", {shape}, attrs({{"keepdims", attr_int(0)}}));
  auto least =
      gb.op("ReduceMin", {gb.op("Concat", {rest, gb.constant("four", i64({1}, {4}))}, attrs({{"axis", attr_int(0)}}))},
            attrs({{"keepdims", attr_int(0)}}));
  for (auto v : {sum, most, least}) gb.output(v);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(flat), (Shape{b, s * n}));
  auto value = [&](const std::string &v) { return (*r.g.value(r.g.find_value(v)).sym_value).at(0); };
  const std::map<std::string, int64_t> at{{"b", 2}, {"s", 9}, {"n", 3}};
  EXPECT_EQ(value(sum).eval(at), 12);
  EXPECT_EQ(value(most).eval(at), 9);
  EXPECT_EQ(value(least).eval(at), 3);
}

TEST(ShapeInference, AProductOfStridedExtentsFoldsPastAFewHundredCharacters) {
  // A detector's anchors per level, s[0] * s[1] * s[2] of a map six stride-2
  // stages down, sized a ConstantOfShape; its text is several hundred
  // characters. A fold cap of 160 left it to run time, and each input shape
  // compiled its own (torchvision's Faster R-CNN).
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, n});
  auto shape = gb.op("Shape", {x});
  auto one = gb.constant("one", i64({1}, {1})), two = gb.constant("two", i64({1}, {2}));
  auto dims = shape;
  for (int i = 0; i < 6; ++i) dims = gb.op("Add", {gb.op("Div", {gb.op("Add", {dims, one}), two}), one});
  auto prod = gb.op("ReduceProd", {dims}, attrs({{"keepdims", attr_int(1)}}));
  auto y = gb.op("ConstantOfShape", {prod});
  gb.output(y);
  Inferred r = infer(gb);
  const Dim count = r.shape(y).at(0);
  EXPECT_GT(count.str().size(), 160u) << count.str();
  // Each stage maps d to (d + 1) / 2 + 1.
  auto stage = [](int64_t d) {
    for (int i = 0; i < 6; ++i) d = (d + 1) / 2 + 1;
    return d;
  };
  EXPECT_EQ(count.eval({{"b", 3}, {"s", 800}, {"n", 1333}}), stage(3) * stage(800) * stage(1333));
}

TEST(ShapeInference, ARollOfAPaddedMapCroppedBackIsTheMapsOwnExtent) {
  // Swin's shifted windows: pad s to whole windows of 7, roll by 3 (exported
  // as y[-3:] ++ y[:-3]), crop back to s. The roll's length was
  // min(3, n) + max(0, n - 3), which no bound reduced to n, so the crop's
  // extent nested each stage's in the next and the dynamic-spatial export
  // compiled each input shape in.
  GraphBuilder gb(13);
  const auto [x, len, y] = pad_to_whole_windows(gb);
  auto axis = gb.constant("axis", i64({1}, {1}));
  auto tail =
      gb.op("Slice", {y, gb.constant("minus3", i64({1}, {-3})), gb.constant("big", i64({1}, {INT64_MAX})), axis});
  auto head = gb.op("Slice", {y, gb.constant("zero", i64({1}, {0})), gb.constant("minus3_", i64({1}, {-3})), axis});
  auto rolled = gb.op("Concat", {tail, head}, attrs({{"axis", attr_int(1)}}));
  auto crop = gb.op("Slice", {rolled, gb.constant("zero_", i64({1}, {0})), len, axis});
  gb.output(crop);
  Inferred r = infer(gb);
  EXPECT_EQ(shape_str(r.shape(crop)), shape_str({b, s}));
}

TEST(ShapeInference, ASliceFromTheBackToTheEndIsAtMostItsLengthAndNotNegative) {
  // x[-3:] of s rows has min(s, 3): a length the store knows is not negative
  // (Swin's masks compare it with -1), where s - max(s - 3, 0) it did not.
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {s, 4});
  auto y = gb.op("Slice", {x, gb.constant("m3", i64({1}, {-3})), gb.constant("big", i64({1}, {kIntMax}))});
  gb.output(y);
  Inferred r = infer(gb);
  const Dim rows = r.shape(y)[0];
  EXPECT_TRUE(r.store.is_nonnegative(rows)) << rows.str();
  for (int64_t at : {0, 1, 3, 10}) EXPECT_EQ(rows.eval({{"s", at}}), std::min<int64_t>(at, 3)) << "s = " << at;
}

TEST(ShapeInference, FlattenAndTileKeepSymbolicProducts) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, s, 768});
  auto f = gb.op("Flatten", {x}, attrs({{"axis", attr_int(-1)}}));
  auto reps = gb.op("Concat", {size_of(gb, x, 1, 13), gb.constant("ones", i64({2}, {1, 2}))},
                    attrs({{"axis", attr_int(0)}}));
  auto t = gb.op("Tile", {x, reps});
  gb.output(f);
  gb.output(t);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(f), (Shape{b * s, 768}));
  EXPECT_TRUE(r.store.same_num_elements(r.shape(f), r.shape(x)));
  EXPECT_EQ(r.shape(t), (Shape{b * s, s, 1536}));
}

TEST(ShapeInference, LegacyAttributesOfOpset1) {
  GraphBuilder gb(1);
  auto x = gb.input("x", DType::F32, {b, 2});
  auto y = gb.input("y", DType::F32, {b, 3});
  auto c = gb.op("Concat", {x, y});  // opset 1 defaults the axis to 1
  auto p = gb.op("Pad", {x}, attrs({{"paddings", attr_ints({1, 0, 0, 2})}}));
  gb.output(c);
  gb.output(p);
  Inferred r = infer(gb);
  EXPECT_EQ(r.shape(c), (Shape{b, 5}));
  EXPECT_EQ(r.shape(p), (Shape{b + 1, 4}));
}

TEST(ShapeInference, OpsOutsideTheirOpsetRangeAreRejected) {
  GraphBuilder gb(10);
  auto x = gb.input("x", DType::I64, {b});
  gb.output(gb.op("LessOrEqual", {x, x}));
  expect_infer_error(gb, "LessOrEqual_0", "not supported at opset 10");
}

// Constant view ops fold by a copy (not the JIT): the values are the input's, in
// order, under the new shape, and small integer results become shape values.
TEST(ShapeInference, ConstantViewOpsFoldToTheirInputsValues) {
  GraphBuilder gb(13);
  auto x = gb.input("x", DType::F32, {b, 6});
  auto w = gb.constant("w", f32({2, 3}, {1.5f, -2, 3, 4, 5.25f, -6}));
  auto id = gb.op("Identity", {w});
  auto r = gb.op("Reshape", {id, gb.constant("t", i64({2}, {3, 2}))});
  auto u = gb.op("Unsqueeze", {gb.op("Flatten", {r}, attrs({{"axis", attr_int(0)}})),
                               gb.constant("ax", i64({1}, {0}))});
  auto k = gb.op("Squeeze", {gb.constant("k", i64({1, 2}, {7, -1})), gb.constant("ax0", i64({1}, {0}))});
  gb.output(gb.op("Mul", {x, gb.op("Reshape", {u, gb.constant("t6", i64({1}, {6}))})}));
  gb.output(gb.op("Reshape", {x, k}));
  Inferred res = infer(gb);
  const Value &uv = res.g.value(res.g.find_value(u));
  ASSERT_TRUE(uv.constant);
  EXPECT_EQ(uv.constant->shape, (std::vector<int64_t>{1, 1, 6}));
  EXPECT_EQ(floats(*uv.constant), (std::vector<double>{1.5, -2, 3, 4, 5.25, -6}));
  const Value &kv = res.g.value(res.g.find_value(k));
  ASSERT_TRUE(kv.constant && kv.sym_value);
  EXPECT_EQ(kv.constant->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(*kv.sym_value, (std::vector<Dim>{Dim(7), Dim(-1)}));
}

}  // namespace
}  // namespace disco
