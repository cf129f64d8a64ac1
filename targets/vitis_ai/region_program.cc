// Text form of a QProgram: one line per item, space-separated fields.
//   inputs N / fix f0 f1 ... / outputs s0 s1 ...
//   op KIND out=S in=a,b consts=i,j geom=... act=K,n wfix=F bfix=F eps=E alpha=A beta=B label=REST OF LINE
#include "targets/vitis_ai/region_program.h"

#include <cstdio>
#include <sstream>

#include "frontend/errors.h"
#include "runtime/extern_kernel.h"

namespace disco::vitis_ai {
namespace {

std::string ints(const std::vector<int> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s.empty() ? "-" : s;
}

std::string ints64(const std::vector<int64_t> &v) { return v.empty() ? "-" : join_ints(v); }

std::string exact(double d) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", d);
  return b;
}

template <typename T>
std::vector<T> parse_ints(const std::string &s, const std::string &label) {
  std::vector<T> out;
  if (s == "-") return out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      out.push_back(static_cast<T>(std::stoll(item)));
    } catch (...) {
      fail(label, ": bad integer '", item, "' in the vitis_ai program");
    }
  }
  return out;
}

UnitKind kind_of(const std::string &name, const std::string &label) {
  for (UnitKind k : {UnitKind::Conv, UnitKind::Gemm, UnitKind::MaxPool, UnitKind::AvgPool, UnitKind::GlobalAvgPool,
                     UnitKind::Add, UnitKind::Concat, UnitKind::Resize, UnitKind::Flatten})
    if (name == unit_kind_name(k)) return k;
  fail(label, ": unknown op '", name, "' in the vitis_ai program");
}

}  // namespace

std::string serialize_program(const QProgram &p) {
  std::ostringstream os;
  os << "inputs " << p.num_inputs << "\n";
  os << "fix " << ints(p.fix) << "\n";
  os << "outputs " << ints(p.outputs) << "\n";
  for (const QOp &op : p.ops) {
    os << "op " << unit_kind_name(op.kind) << " out=" << op.out << " in=" << ints(op.in)
       << " consts=" << ints(op.consts) << " geom=" << ints64(op.geom) << " act="
       << static_cast<int>(op.act.kind) << "," << op.act.leaky_num << " wfix=" << op.wfix << " bfix=" << op.bfix
       << " eps=" << exact(op.eps) << " alpha=" << exact(op.alpha) << " beta=" << exact(op.beta)
       << " label=" << op.label << "\n";
  }
  return os.str();
}

QProgram parse_program(const std::string &text, const std::string &label) {
  QProgram p;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::stringstream ls(line);
    std::string head;
    ls >> head;
    if (head == "inputs") {
      ls >> p.num_inputs;
    } else if (head == "fix" || head == "outputs") {
      std::string v;
      ls >> v;
      (head == "fix" ? p.fix : p.outputs) = parse_ints<int>(v, label);
    } else if (head == "op") {
      QOp op;
      std::string kind, field;
      ls >> kind;
      op.kind = kind_of(kind, label);
      while (ls >> field) {
        const size_t eq = field.find('=');
        DISCO_CHECK(eq != std::string::npos, label, ": bad field '", field, "' in the vitis_ai program");
        const std::string key = field.substr(0, eq), val = field.substr(eq + 1);
        if (key == "label") {
          std::string rest;
          std::getline(ls, rest);
          op.label = val + rest;
          break;
        }
        if (key == "out") op.out = parse_ints<int>(val, label).at(0);
        else if (key == "in") op.in = parse_ints<int>(val, label);
        else if (key == "consts") op.consts = parse_ints<int>(val, label);
        else if (key == "geom") op.geom = parse_ints<int64_t>(val, label);
        else if (key == "act") {
          const auto a = parse_ints<int>(val, label);
          DISCO_CHECK(a.size() == 2 && a[0] >= 0 && a[0] <= 3, label, ": bad activation '", val, "'");
          op.act.kind = static_cast<ActKind>(a[0]), op.act.leaky_num = a[1];
        } else if (key == "wfix") op.wfix = parse_ints<int>(val, label).at(0);
        else if (key == "bfix") op.bfix = parse_ints<int>(val, label).at(0);
        else if (key == "eps") op.eps = std::stod(val);
        else if (key == "alpha") op.alpha = std::stod(val);
        else if (key == "beta") op.beta = std::stod(val);
        else fail(label, ": unknown field '", key, "' in the vitis_ai program");
      }
      p.ops.push_back(std::move(op));
    } else {
      fail(label, ": unknown line '", head, "' in the vitis_ai program");
    }
  }
  const int slots = static_cast<int>(p.fix.size());
  DISCO_CHECK(p.num_inputs >= 0 && p.num_inputs <= slots, label, ": the vitis_ai program has ", p.num_inputs,
              " inputs and ", slots, " slots");
  auto check_slot = [&](int s) { DISCO_CHECK(s >= 0 && s < slots, label, ": slot ", s, " out of range"); };
  for (const QOp &op : p.ops) {
    check_slot(op.out);
    for (int s : op.in) check_slot(s);
  }
  for (int s : p.outputs) check_slot(s);
  return p;
}

const char *unit_kind_name(UnitKind k) {
  switch (k) {
    case UnitKind::Conv: return "conv";
    case UnitKind::Gemm: return "gemm";
    case UnitKind::MaxPool: return "maxpool";
    case UnitKind::AvgPool: return "avgpool";
    case UnitKind::GlobalAvgPool: return "gap";
    case UnitKind::Add: return "add";
    case UnitKind::Concat: return "concat";
    case UnitKind::Resize: return "resize";
    case UnitKind::Flatten: return "flatten";
  }
  return "?";
}

FoldedWeights fold_op_weights(const QOp &op, const std::function<ConstView(int)> &constant) {
  auto get = [&](size_t i) { return i < op.consts.size() && op.consts[i] >= 0 ? constant(op.consts[i]) : ConstView{}; };
  if (op.kind == UnitKind::Conv) {
    const ConstView bn[4] = {get(2), get(3), get(4), get(5)};
    return fold_conv(get(0), get(1), bn, op.eps);
  }
  DISCO_CHECK(op.kind == UnitKind::Gemm, "vitis_ai: op ", op.label, " has no weights");
  return fold_gemm(get(0), !op.geom.empty() && op.geom[0] != 0, get(1), op.alpha, op.beta);
}

}  // namespace disco::vitis_ai
