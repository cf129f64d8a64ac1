#include "driver/aot/extern_steps.h"

#include "driver/aot/c_text.h"

namespace disco::aot {

namespace {

// The extern steps' indices in g_extern[], by plan step.
std::map<size_t, int> extern_index(const Plan &plan) {
  std::map<size_t, int> idx;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (!plan.steps[i].extern_call.empty()) idx[i] = static_cast<int>(idx.size());
  return idx;
}

std::string label_of(const PlanStep &st) { return st.label.size() > 160 ? st.label.substr(0, 157) + "..." : st.label; }

}  // namespace

bool has_extern_steps(const Plan &plan) {
  for (const auto &st : plan.steps)
    if (!st.extern_call.empty()) return true;
  return false;
}

void emit_extern_decls(std::ostream &o, const Plan &plan, const ExternLayout &l,
                       const std::vector<std::string> &install_functions) {
  const auto idx = extern_index(plan);
  o << "/* Extern steps: runtime/extern_c_abi.h of disco, whose glue is in this archive. */\n"
    << "typedef struct disco_extern_tensor {\n  void *data;\n  int32_t dtype;\n  int32_t rank;\n"
    << "  const int64_t *shape;\n  int32_t constant;\n} disco_extern_tensor;\n"
    << "typedef struct disco_extern_step disco_extern_step;\n"
    << "extern disco_extern_step *disco_extern_create(const char *, const char *, int, const char *const *,\n"
    << "                                              const char *const *, char *, size_t);\n"
    << "extern int disco_extern_run(disco_extern_step *, int, const disco_extern_tensor *, int,\n"
    << "                            const disco_extern_tensor *, int, const char *const *, const int64_t *, int,\n"
    << "                            char *, size_t);\n";
  for (const auto &f : install_functions) o << "extern void " << f << "(void);\n";
  // Every symbol, in the order of the driver's `s` array.
  std::vector<std::string> names(l.slots.size());
  for (const auto &[sym, slot] : l.slots) names[slot] = sym;
  o << "static const char *const k_symbol_names[" << std::max<size_t>(names.size(), 1) << "] = {";
  for (size_t i = 0; i < names.size(); ++i) o << (i ? ", " : "") << c_string(names[i]);
  if (names.empty()) o << "NULL";
  o << "};\n";
  for (const auto &[step, k] : idx) {
    const PlanStep &st = plan.steps[step];
    const size_t n = std::max<size_t>(st.params.size(), 1);
    o << "static const char *const k_extern" << k << "_keys[" << n << "] = {";
    std::string sep;
    for (const auto &[key, value] : st.params) o << sep << c_string(key), sep = ", ";
    if (st.params.empty()) o << "NULL";
    o << "};\nstatic const char *const k_extern" << k << "_values[" << n << "] = {";
    sep.clear();
    for (const auto &[key, value] : st.params) o << sep << c_string(value), sep = ", ";
    if (st.params.empty()) o << "NULL";
    o << "};\n";
  }
  o << "static disco_extern_step *g_extern[" << std::max<size_t>(idx.size(), 1) << "];\n"
    << "static char g_extern_failure[1024];  /* why a step could not be made, if one could not */\n"
    << "static pthread_once_t g_extern_once = PTHREAD_ONCE_INIT;\n"
    << "static int g_extern_threads;  /* NAME_set_num_threads' count; 0: the glue's default */\n\n"
    << "static void disco_extern_init(void) {\n";
  for (const auto &f : install_functions) o << "  " << f << "();\n";
  for (const auto &[step, k] : idx) {
    const PlanStep &st = plan.steps[step];
    o << "  g_extern[" << k << "] = disco_extern_create(" << c_string(st.extern_call) << ", "
      << c_string(label_of(st)) << ", " << st.params.size() << ", k_extern" << k << "_keys, k_extern" << k
      << "_values, g_extern_failure, sizeof g_extern_failure);\n  if (!g_extern[" << k << "]) return;\n";
  }
  o << "}\n\n";
}

void emit_extern_call(std::ostream &o, const Plan &plan, size_t i, const ExternLayout &l, bool gpu) {
  const PlanStep &st = plan.steps[i];
  const int k = extern_index(plan).at(i);
  auto tensor = [&](int b) -> std::string {
    if (b < 0) return "{NULL, 0, 0, NULL, 0}";  // an omitted optional input
    const PlanBuffer &pb = plan.buffers[b];
    return "{hb[" + std::to_string(b) + "].host, " + std::to_string(static_cast<int>(pb.dtype)) + ", " +
           std::to_string(pb.shape.size()) + ", sh + " + std::to_string(l.extents_at[b]) + ", " +
           (pb.kind == PlanBuffer::Constant ? "1" : "0") + "}";
  };
  // A failure: the message, then out (GPU: through the device clean-up).
  auto fail = [&](const std::string &args) {
    return gpu ? "{ disco_rc = disco_fail(" + args + "); goto disco_device_done; }" : "return disco_fail(" + args + ");";
  };
  o << "    char why[1024];\n";
  if (gpu)
    for (int b : st.inputs) {
      if (b < 0 || plan.buffers[b].kind == PlanBuffer::Constant) continue;
      o << "    if ((hb[" << b << "].flags & 2) && halide_copy_to_host(NULL, &hb[" << b << "]) != 0)\n      "
        << fail("\"copying %s from the GPU for step %s failed: %s\", " + c_string("'" + plan.buffers[b].name + "'") +
                ", " + c_string(st.extern_call) + ", disco_aot_halide_message()")
        << "\n";
    }
  o << "    const disco_extern_tensor ti[" << std::max<size_t>(st.inputs.size(), 1) << "] = {";
  for (size_t j = 0; j < st.inputs.size(); ++j) o << (j ? ", " : "") << tensor(st.inputs[j]);
  if (st.inputs.empty()) o << "{NULL, 0, 0, NULL, 0}";
  o << "};\n    const disco_extern_tensor to[" << std::max<size_t>(st.outputs.size(), 1) << "] = {";
  for (size_t j = 0; j < st.outputs.size(); ++j) o << (j ? ", " : "") << tensor(st.outputs[j]);
  if (st.outputs.empty()) o << "{NULL, 0, 0, NULL, 0}";
  o << "};\n    if (!g_extern[" << k << "]) " << fail("\"%s\", g_extern_failure") << "\n"
    << "    if (disco_extern_run(g_extern[" << k << "], " << st.inputs.size() << ", ti, " << st.outputs.size()
    << ", to, " << l.slots.size() << ", k_symbol_names, s, __atomic_load_n(&g_extern_threads, __ATOMIC_RELAXED), why,\n                         sizeof why) != 0)\n"
    << "      " << fail("\"step %s (%s) failed: %s\", " + c_string(st.extern_call) + ", " + c_string(label_of(st)) + ", why")
    << "\n";
  if (gpu)
    for (int b : st.outputs)
      o << "    hb[" << b << "].flags = 1; /* written on the host: the next kernel copies it to the GPU */\n";
}

}  // namespace disco::aot
