#include "targets/host/kernel_key.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "frontend/content_hash.h"
#include "lowering/known_values.h"

namespace disco {

namespace {

std::string exact(double x) {  // floats as hex: no two values print alike
  char b[40];
  std::snprintf(b, sizeof b, "%a", x);
  return b;
}

std::string attribute_text(const Attribute &a) {
  std::string s;
  switch (a.kind) {
    case Attribute::Float: return "f" + exact(a.f);
    case Attribute::Int: return "i" + std::to_string(a.i);
    case Attribute::String: return "s" + std::to_string(a.s.size()) + ":" + a.s;
    case Attribute::Floats:
      for (float f : a.floats) s += exact(f) + ",";
      return "F[" + s + "]";
    case Attribute::Ints:
      for (int64_t i : a.ints) s += std::to_string(i) + ",";
      return "I[" + s + "]";
    case Attribute::Strings:
      for (const auto &x : a.strings) s += std::to_string(x.size()) + ":" + x + ",";
      return "S[" + s + "]";
    case Attribute::Tensor: return "T" + tensor_digest(a.t);
    case Attribute::GraphAttr: {
      // A subgraph is never the same as another's: the kernel is never shared.
      char b[32];
      std::snprintf(b, sizeof b, "G%p", static_cast<const void *>(a.g.get()));
      return b;
    }
  }
  return "?";
}

std::string shape_text(const ShapeStore &store, const Value &v) {
  if (!v.shape) return "?";
  std::string s = "[";
  for (const auto &d : *v.shape) s += store.canonical(d).str() + ",";
  return s + "]";
}

}  // namespace

std::string kernel_key(const Graph &g, const ShapeStore &store, const FusionGroup &group, const LoweredKernel &k,
                       bool pattern, const std::vector<std::string> &symbols, const std::string &schedule,
                       const std::string &target) {
  std::string key = "target " + target + "\nkind " + group_kind_name(group.kind) + "\nschedule " + schedule + "\n";
  key += pattern ? "shapes pattern\n" : "shapes model\n";
  // Values by role: kernel argument i, output o of the group's node n, or a
  // value the kernel embeds (an empty constant, a folded shape value).
  std::map<int, std::string> ref;
  for (size_t i = 0; i < k.input_values.size(); ++i) {
    const Value &v = g.value(k.input_values[i]);
    ref[k.input_values[i]] = "a" + std::to_string(i);
    key += "arg " + std::to_string(i) + " " + std::to_string(static_cast<int>(v.dtype)) + " " + shape_text(store, v);
    // A constant argument's elements are not code; its shape is (the kernel fixes its extents).
    key += v.sym_value && !v.constant ? " " + value_digest(v) + "\n" : "\n";
  }
  auto name_of = [&](int vid) -> std::string {
    if (vid < 0) return "-";
    if (auto it = ref.find(vid); it != ref.end()) return it->second;
    const Value &v = g.value(vid);
    return "e(" + std::to_string(static_cast<int>(v.dtype)) + " " + shape_text(store, v) + " " + value_digest(v) + ")";
  };
  for (size_t n = 0; n < group.nodes.size(); ++n) {
    const Node &node = g.nodes[group.nodes[n]];
    key += "node " + node.domain + "/" + node.op_type + "/" + std::to_string(node.opset) + " (";
    for (int in : node.inputs) key += name_of(in) + " ";
    key += ") {";
    for (const auto &[name, a] : node.attrs) key += name + "=" + attribute_text(a) + " ";
    key += "} ->";
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int vid = node.outputs[o];
      if (vid < 0) {
        key += " -";
        continue;
      }
      const Value &v = g.value(vid);
      ref[vid] = "n" + std::to_string(n) + "." + std::to_string(o);
      key += " " + std::to_string(static_cast<int>(v.dtype)) + shape_text(store, v);
      if (v.constant || v.sym_value) key += "=" + value_digest(v);
    }
    key += "\n";
  }
  key += "outputs";
  for (int vid : k.output_values) key += " " + name_of(vid);
  key += "\nsymbols";
  for (const std::string &sym : symbols) {
    const SymbolFacts &f = store.facts(sym);
    key += " " + sym + "(min " + std::to_string(f.min) + " div " + std::to_string(f.divisor) +
           (f.not_one ? " not1" : "") + " likely";
    for (int64_t l : f.likely) key += " " + std::to_string(l);
    key += ")";
  }
  key += "\nargs";  // the symbols the kernel takes, in its ABI order
  for (const auto &[sym, p] : k.syms.used()) key += " " + sym;
  key += "\nbroadcast";
  for (const auto &d : k.maybe_broadcast) key += " " + d.str();
  key += "\nreads " + k.value_notes + "\n";
  return key;
}

}  // namespace disco
