#include "driver/aot/driver_gen.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "frontend/errors.h"
#include "runtime/memory_plan.h"
#include "driver/aot/c_text.h"
#include "driver/aot/driver_prelude.h"
#include "driver/aot/extern_steps.h"

namespace disco::aot {

namespace {

// Where each buffer's extents (ONNX order) live in the driver's flat `sh` array.
struct Layout {
  std::vector<int> off, rank;
  int total = 0;
  std::map<std::string, int> sym;  // symbol -> slot in `s`, in order of binding
  std::vector<int> temp_of;        // buffer id -> arena slot, or -1
  std::vector<BufferLifetime> lives;
};

Layout make_layout(const Plan &plan) {
  Layout l;
  for (const auto &b : plan.buffers) {
    l.off.push_back(l.total);
    l.rank.push_back(static_cast<int>(b.shape.size()));
    l.total += static_cast<int>(b.shape.size());
  }
  for (const auto &in : plan.inputs)
    for (const Dim &d : in.shape)
      if (d.is_symbol() && !l.sym.count(d.symbol_name())) {
        const int slot = static_cast<int>(l.sym.size());
        l.sym[d.symbol_name()] = slot;
      }
  l.lives = temp_lifetimes(plan);
  l.temp_of.assign(plan.buffers.size(), -1);
  for (size_t t = 0; t < l.lives.size(); ++t) l.temp_of[l.lives[t].buffer] = static_cast<int>(t);
  // A buffer that takes another's bytes (shared_buffers) takes its arena slot.
  const std::vector<int> shared = shared_buffers(plan);
  for (size_t b = 0; b < shared.size(); ++b)
    if (shared[b] != static_cast<int>(b)) l.temp_of[b] = l.temp_of[shared[b]];
  return l;
}

ExternLayout extern_layout(const Layout &l) { return {l.off, l.sym}; }

std::string sh_at(const Layout &l, int buffer) { return "sh + " + std::to_string(l.off[buffer]); }
std::string n_or_1(size_t n) { return std::to_string(std::max<size_t>(n, 1)); }

std::string type_args(DType t) {
  const HalideTypeCode h = halide_type_of(t);
  return std::string(h.code) + ", " + std::to_string(h.bits) + ", " + c_string(dtype_name(t));
}

// Binding, as runtime/shape_binder.cc does it, with the same messages.
void emit_bind(std::ostream &o, const Plan &plan, const Layout &l) {
  o << "/* Binds the symbols from the input extents and checks them against the model. */\n"
    << "static int bind(const halide_buffer_t *const *in, int64_t *s, int64_t *sh) {\n";
  std::map<std::string, std::string> bound_by;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const InputSpec &in = plan.inputs[i];
    const int b = plan.input_buffers[i];
    const std::string what = "input '" + in.name + "'";
    o << "  if (disco_check_arg(" << "in[" << i << "]" << ", " << c_string(what) << ", " << in.shape.size() << ", "
      << type_args(in.dtype) << ", " << sh_at(l, b) << ")) return -1;\n";
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const Dim &decl = in.shape[d];
      const std::string v = "sh[" + std::to_string(l.off[b] + static_cast<int>(d)) + "]";
      const std::string here = what + " dim " + std::to_string(d);
      if (decl.is_const()) {
        o << "  if (" << v << " != " << decl.as_const() << ") return disco_fail(\"%s is %lld, expected "
          << decl.as_const() << " (fixed by the model)\", " << c_string(here) << ", (long long)" << v << ");\n";
      } else if (decl.is_symbol()) {
        const std::string &sname = decl.symbol_name();
        const std::string slot = "s[" + std::to_string(l.sym.at(sname)) + "]";
        if (!bound_by.count(sname)) {
          bound_by[sname] = here;
          o << "  " << slot << " = " << v << ";  /* " << c_identifier(sname) << " */\n";
        } else {
          o << "  if (" << v << " != " << slot
            << ") return disco_fail(\"%s is %lld, expected %lld (symbol '%s', the same as %s)\", " << c_string(here)
            << ", (long long)" << v << ", (long long)" << slot << ", " << c_string(sname) << ", "
            << c_string(bound_by[sname]) << ");\n";
        }
      } else {
        fail(here, ": declared dim '", decl.str(), "' is not a constant or a symbol");
      }
    }
  }
  for (const auto &c : plan.checks) {
    std::set<std::string> syms;
    c.a.collect_symbols(syms);
    c.b.collect_symbols(syms);
    bool all_bound = true;
    for (const auto &s : syms) all_bound = all_bound && l.sym.count(s);
    if (!all_bound) continue;
    const char *cond = c.kind == RuntimeCheck::Equal           ? "x == y"
                       : c.kind == RuntimeCheck::Broadcastable ? "x == y || x == 1 || y == 1"
                       : c.kind == RuntimeCheck::Divisible     ? "y != 0 && x % y == 0"
                                                               : "x >= y";
    o << "  {\n    const int64_t x = " << c_dim_expr(c.a, l.sym) << ", y = " << c_dim_expr(c.b, l.sym) << ";\n"
      << "    (void)y;\n    if (!(" << cond << ")) return disco_fail(";
    if (c.b.is_const())
      o << "\"%s (got %s = %lld)\", " << c_string(c.message) << ", " << c_string(c.a.str()) << ", (long long)x";
    else
      o << "\"%s (got %s = %lld, %s = %lld)\", " << c_string(c.message) << ", " << c_string(c.a.str())
        << ", (long long)x, " << c_string(c.b.str()) << ", (long long)y";
    o << ");\n  }\n";
  }
  o << "  return 0;\n}\n\n";
}

void emit_shapes(std::ostream &o, const Plan &plan, const Layout &l) {
  o << "/* Every other buffer's extents (ONNX order), from the symbols. */\n"
    << "static int shapes(const int64_t *s, int64_t *sh) {\n  (void)s;\n  g_div0 = 0;\n";
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer &pb = plan.buffers[b];
    if (pb.kind == PlanBuffer::Input) continue;
    for (size_t d = 0; d < pb.shape.size(); ++d)
      o << "  sh[" << l.off[b] + static_cast<int>(d) << "] = " << c_dim_expr(pb.shape[d], l.sym) << ";\n";
  }
  o << "  if (g_div0) return disco_fail(\"a buffer size divides by zero at these input shapes\");\n";
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer &pb = plan.buffers[b];
    if (pb.kind == PlanBuffer::Temp || pb.kind == PlanBuffer::Output)
      o << "  if (disco_check_sizes(" << sh_at(l, static_cast<int>(b)) << ", " << l.rank[b] << ", "
        << c_string(pb.name) << ")) return -1;\n";
  }
  o << "  return 0;\n}\n\n";
}

std::string elements(const Layout &l, int b) {
  return "disco_elements(" + sh_at(l, b) + ", " + std::to_string(l.rank[b]) + ")";
}

// `gpu`: the kernels leave outputs on the device (CUDA, OpenCL). Every buffer
// starts without a device allocation, inputs and constants marked as written
// on the host; outputs come back to the host at the end, and every device
// allocation is freed on every exit, failures included.
void emit_steps(std::ostream &o, const Plan &plan, const Layout &l, const std::string &name, const std::string &gpu_api) {
  const bool gpu = !gpu_api.empty();
  const size_t nt = l.lives.size();
  o << "static struct disco_life const k_life[" << n_or_1(nt) << "] = {";
  for (size_t t = 0; t < nt; ++t) o << (t ? ", " : "") << "{" << l.lives[t].first << ", " << l.lives[t].last << "}";
  if (nt == 0) o << "{0, 0}";
  o << "};\n"
    << "#define DISCO_TEMPS " << nt << "\n";
  if (gpu)  // Halide's GPU runtimes were not tried with concurrent runs of one library yet
    o << "static pthread_mutex_t g_gpu_mu = PTHREAD_MUTEX_INITIALIZER;\n";
  o << "\n/* The kernels in order; temporaries in this run's arena, laid out again only when sizes change. */\n"
    << "static int run_steps(const halide_buffer_t *const *in, halide_buffer_t *const *out, const int64_t *s, "
       "const int64_t *sh, struct disco_arena *a) {\n"
    << "  halide_buffer_t hb[" << n_or_1(plan.buffers.size()) << "];\n"
    << "  halide_dimension_t hd[" << std::max(l.total, 1) << "];\n  (void)s;\n  (void)hd;\n  (void)a;\n";
  if (gpu) o << "  int disco_rc = 0;\n  memset(hb, 0, sizeof hb);\n";
  if (gpu_api == "cuda")  // Halide's own message lists every missing driver function
    o << "  if (!disco_cuda_driver_present())\n    return disco_fail(\"no usable GPU: this library runs its kernels "
         "with CUDA, and the CUDA driver (libcuda.so) cannot be loaded\");\n";
  if (nt > 0) {
    o << "  int64_t bytes[" << nt << "];\n";
    for (size_t t = 0; t < nt; ++t) {
      const int b = l.lives[t].buffer;
      const PlanBuffer &pb = plan.buffers[b];
      // A buffer allocated with its channels padded (PlanBuffer::channel_multiple) has a constant channel count.
      std::string n = elements(l, b);
      if (pb.channel_multiple > 1) {
        DISCO_CHECK(pb.shape.size() >= 2 && pb.shape[1].is_const() && pb.shape[1].as_const() > 0, "buffer '",
                    pb.name, "' has its channels padded, but not a constant channel count");
        const int64_t c = pb.shape[1].as_const();
        n = "(" + n + " / " + std::to_string(c) + " * " + std::to_string(allocated_channels(pb, c)) + ")";
      }
      o << "  bytes[" << t << "] = " << n << " * " << dtype_size(pb.dtype) << ";\n";
    }
    o << "  int64_t *const laid_bytes = a->slots, *const off = a->slots + " << nt << ";\n"
      << "  if (!a->laid_out || memcmp(bytes, laid_bytes, sizeof bytes) != 0) {\n"
      << "    int order[" << nt << "];\n    int64_t begin[" << nt << "], end[" << nt << "];\n"
      << "    const int64_t total = disco_place(" << nt << ", k_life, bytes, off, order, begin, end);\n"
      << "    if (total > a->cap) {\n      void *p = NULL;\n      free(a->mem);\n      a->mem = NULL;\n"
      << "      a->cap = 0;\n      a->laid_out = 0;\n"
      << "      if (posix_memalign(&p, 64, (size_t)total) != 0)\n"
      << "        return disco_fail(\"cannot allocate %lld bytes for temporaries\", (long long)total);\n"
      << "      a->mem = (uint8_t *)p;\n      a->cap = total;\n    }\n"
      << "    memcpy(laid_bytes, bytes, sizeof bytes);\n    a->laid_out = 1;\n  }\n";
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer &pb = plan.buffers[b];
    const HalideTypeCode h = halide_type_of(pb.dtype);
    const std::string ref = "hb[" + std::to_string(b) + "]";
    const std::string dims = "hd + " + std::to_string(l.off[b]);
    const std::string tail = std::string(", ") + h.code + ", " + std::to_string(h.bits) + ", " +
                             sh_at(l, static_cast<int>(b)) + ", " + std::to_string(l.rank[b]) + ");";
    switch (pb.kind) {
      case PlanBuffer::Input:
        o << "  " << ref << " = *in[" << pb.io_index << "];\n  if (!" << ref << ".host) " << ref
          << ".host = g_empty_storage;\n";
        break;
      case PlanBuffer::Output: o << "  " << ref << " = *out[" << pb.io_index << "];\n"; break;
      case PlanBuffer::Constant:
        o << "  disco_set_buffer(&" << ref << ", " << dims << ", " << name << "__disco_constants + " << pb.offset
          << tail << "\n";
        break;
      case PlanBuffer::Temp:
        if (l.temp_of[b] < 0) break;  // written and read by no step
        o << "  disco_set_buffer(&" << ref << ", " << dims << ", a->mem + off[" << l.temp_of[b] << "]" << tail
          << "\n";
        break;
    }
  }
  if (gpu) {
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const PlanBuffer::Kind k = plan.buffers[b].kind;
      if (k == PlanBuffer::Temp) continue;
      o << "  hb[" << b << "].device = 0;\n  hb[" << b << "].device_interface = NULL;\n  hb[" << b
        << "].flags = " << (k == PlanBuffer::Output ? 0 : 1) << "; /* host dirty */\n";
    }
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &st = plan.steps[i];
    std::string label = st.label.size() > 160 ? st.label.substr(0, 157) + "..." : st.label;
    o << "  /* step " << i << ": " << c_identifier(st.kernel.empty() ? st.extern_call : st.kernel) << " */\n";
    std::string any;
    for (int b : st.outputs) any += (any.empty() ? "" : " || ") + elements(l, b) + " > 0";
    o << "  if (" << (any.empty() ? "1" : any) << ") {\n";
    if (!st.extern_call.empty()) {  // a library backend's step (extern_steps.h)
      emit_extern_call(o, plan, i, extern_layout(l), gpu);
      o << "  }\n";
      continue;
    }
    // A symbol, or an extent the kernel takes as a parameter (a division by 0 gives 0, as in the kernel).
    for (size_t k = 0; k < st.symbols.size(); ++k)
      o << "    int32_t v" << k << " = (int32_t)" << c_dim_expr(st.symbols[k], l.sym) << ";\n";
    o << "    void *args[] = {";
    std::string sep;
    for (int b : st.inputs) o << sep << "&hb[" << b << "]", sep = ", ";
    for (size_t k = 0; k < st.symbols.size(); ++k) o << sep << "&v" << k, sep = ", ";
    for (int b : st.outputs) o << sep << "&hb[" << b << "]", sep = ", ";
    o << "};\n    int rc;\n    disco_aot_halide_message()[0] = 0;\n    rc = " << st.kernel << "_argv(args);\n"
      << "    if (rc != 0) " << (gpu ? "{ disco_rc = " : "return ") << "disco_fail(\"kernel %s (%s) failed with code %d: %s\", "
      << c_string(st.kernel) << ", " << c_string(label) << ", rc, disco_aot_halide_message());"
      << (gpu ? " goto disco_device_done; }" : "") << "\n  }\n";
  }
  if (!gpu) {
    o << "  return 0;\n}\n\n";
    return;
  }
  for (int b : plan.output_buffers)
    o << "  if ((hb[" << b << "].flags & 2) && halide_copy_to_host(NULL, &hb[" << b << "]) != 0) {\n"
      << "    disco_rc = disco_fail(\"copying output %s from the GPU failed: %s\", "
      << c_string("'" + plan.buffers[b].name + "'") << ", disco_aot_halide_message());\n"
      << "    goto disco_device_done;\n  }\n";
  o << "disco_device_done:\n"
    << "  for (size_t b = 0; b < sizeof hb / sizeof hb[0]; ++b)\n"
    << "    if (hb[b].device) halide_device_free(NULL, &hb[b]);\n"
    << "  return disco_rc;\n}\n\n";
}

// The C parameters of NAME_run and NAME_output_shapes: inputs, then outputs.
std::string params(const Plan &plan) {
  std::string p;
  for (size_t i = 0; i < plan.inputs.size(); ++i) p += (p.empty() ? "" : ", ") + std::string("const halide_buffer_t *in") + std::to_string(i);
  for (size_t i = 0; i < plan.output_names.size(); ++i) p += (p.empty() ? "" : ", ") + std::string("halide_buffer_t *out") + std::to_string(i);
  return p.empty() ? "void" : p;
}

// The positional entry point `fn(in0, ..., out0, ...)`, a wrapper of `fn_arrays`.
void emit_positional(std::ostream &o, const Plan &plan, const std::string &fn) {
  o << "int " << fn << "(" << params(plan) << ") {\n";
  o << "  const halide_buffer_t *in[" << n_or_1(plan.inputs.size()) << "] = {";
  for (size_t i = 0; i < plan.inputs.size(); ++i) o << (i ? ", " : "") << "in" << i;
  if (plan.inputs.empty()) o << "NULL";
  o << "};\n  halide_buffer_t *out[" << n_or_1(plan.output_names.size()) << "] = {";
  for (size_t i = 0; i < plan.output_names.size(); ++i) o << (i ? ", " : "") << "out" << i;
  if (plan.output_names.empty()) o << "NULL";
  o << "};\n  return " << fn << "_arrays(in, out);\n}\n\n";
}

void emit_entry_points(std::ostream &o, const Plan &plan, const Layout &l, const std::string &name, bool gpu,
                       const std::string &par_for_threads_function) {
  const std::string head = "(const halide_buffer_t *const *in, halide_buffer_t *const *out) {\n";
  const std::string locals = "  int64_t s[" + n_or_1(l.sym.size()) + "], sh[" + std::to_string(std::max(l.total, 1)) +
                             "];\n  pthread_once(&g_once, disco_install);\n" +
                             (has_extern_steps(plan) ? "  pthread_once(&g_extern_once, disco_extern_init);\n" : "") +
                             "  g_error[0] = 0;\n"
                             "  if (!in || !out) return disco_fail(\"the input and output arrays must not be null\");\n"
                             "  if (bind(in, s, sh) != 0 || shapes(s, sh) != 0) return -1;\n";
  // NAME_output_shapes
  o << "int " << name << "_output_shapes_arrays" << head << locals;
  for (size_t i = 0; i < plan.output_names.size(); ++i) {
    const int b = plan.output_buffers[i];
    const PlanBuffer &pb = plan.buffers[b];
    const HalideTypeCode h = halide_type_of(pb.dtype);
    const std::string what = "output '" + pb.name + "'";
    o << "  if (!out[" << i << "]) return disco_fail(\"%s is a null pointer\", " << c_string(what) << ");\n";
    if (l.rank[b] > 0)
      o << "  if (!out[" << i << "]->dim) return disco_fail(\"%s needs a dim array of " << l.rank[b]
        << " halide_dimension_t\", " << c_string(what) << ");\n";
    o << "  out[" << i << "]->type.code = " << h.code << ";\n  out[" << i << "]->type.bits = " << h.bits
      << ";\n  out[" << i << "]->type.lanes = 1;\n  out[" << i << "]->dimensions = " << l.rank[b] << ";\n"
      << "  disco_set_dims(out[" << i << "]->dim, " << sh_at(l, b) << ", " << l.rank[b] << ");\n";
  }
  o << "  return 0;\n}\n\n";
  emit_positional(o, plan, name + "_output_shapes");
  // NAME_run
  o << "int " << name << "_run_arrays" << head << locals << "  int64_t e[" << n_or_1(l.total)
    << "];\n  int rc;\n  (void)e;\n";
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const int b = plan.input_buffers[i];
    o << "  if (disco_check_host(in[" << i << "], " << c_string("input '" + plan.inputs[i].name + "'") << ", "
      << elements(l, b) << ")) return -1;\n";
  }
  for (size_t i = 0; i < plan.output_names.size(); ++i) {
    const int b = plan.output_buffers[i];
    const PlanBuffer &pb = plan.buffers[b];
    const std::string what = "output '" + pb.name + "'";
    o << "  if (disco_check_arg(out[" << i << "], " << c_string(what) << ", " << l.rank[b] << ", "
      << type_args(pb.dtype) << ", e)) return -1;\n";
    for (int d = 0; d < l.rank[b]; ++d) {
      const std::string sym = pb.shape[d].is_const() ? "" : " (" + pb.shape[d].str() + ")";
      o << "  if (e[" << d << "] != sh[" << l.off[b] + d << "]) return disco_fail(\"%s dim %d is %lld, expected "
        << "%lld%s\", " << c_string(what) << ", " << d << ", (long long)e[" << d << "], (long long)sh["
        << l.off[b] + d << "], " << c_string(sym) << ");\n";
    }
    o << "  if (disco_check_host(out[" << i << "], " << c_string(what) << ", " << elements(l, b) << ")) return -1;\n";
  }
  // Inputs that share memory with an output are read from copies (disco_unalias_inputs).
  const size_t n_in = plan.inputs.size(), n_out = plan.output_names.size();
  o << "  const halide_buffer_t *inx[" << std::max<size_t>(n_in, 1) << "];\n  halide_buffer_t copies["
    << std::max<size_t>(n_in, 1) << "];\n  void *own[" << std::max<size_t>(n_in, 1) << "];\n  int64_t bytes["
    << std::max<size_t>(n_in + n_out, 1) << "];\n";
  for (size_t i = 0; i < n_in; ++i)
    o << "  bytes[" << i << "] = " << elements(l, plan.input_buffers[i]) << " * "
      << dtype_size(plan.buffers[plan.input_buffers[i]].dtype) << ";\n";
  for (size_t i = 0; i < n_out; ++i)
    o << "  bytes[" << n_in + i << "] = " << elements(l, plan.output_buffers[i]) << " * "
      << dtype_size(plan.buffers[plan.output_buffers[i]].dtype) << ";\n";
  o << "  rc = disco_unalias_inputs(in, " << n_in << ", out, " << n_out << ", bytes, inx, copies, own);\n"
    << "  if (rc == 0) {\n    struct disco_arena *a = disco_take_arena(DISCO_TEMPS);\n"
    << "    if (!a) {\n      rc = disco_fail(\"cannot allocate the temporaries' arena\");\n      goto done;\n    }\n"
    << "    pthread_rwlock_rdlock(disco_aot_pool_lock());\n"
    << (gpu ? "    pthread_mutex_lock(&g_gpu_mu);\n" : "") << "    rc = run_steps(inx, out, s, sh, a);\n"
    << (gpu ? "    pthread_mutex_unlock(&g_gpu_mu);\n" : "")
    << "    pthread_rwlock_unlock(disco_aot_pool_lock());\n    disco_give_back(a);\n  }\n"
    << "done:\n  for (int i = 0; i < " << n_in << "; ++i) free(own[i]);\n"
    << "  return rc;\n}\n\n";
  emit_positional(o, plan, name + "_run");
  o << "const char *" << name << "_last_error(void) { return g_error; }\n\n"
    << "int " << name << "_set_num_threads(int n) {\n  const int old = disco_set_num_threads(n);\n"
    << (has_extern_steps(plan) ? "  if (n >= 0) __atomic_store_n(&g_extern_threads, n, __ATOMIC_RELAXED);\n" : "")
    << (par_for_threads_function.empty() ? "" : "  if (n >= 0) " + par_for_threads_function + "(n);\n")
    << "  return old;\n}\n\n"
    << "void " << name << "_release_memory(void) { disco_release_arenas(); }\n\n";
}

void emit_metadata(std::ostream &o, const Plan &plan, const std::string &name) {
  auto list = [&](const std::string &what, const char *type, const std::vector<std::string> &items) {
    o << "const " << type << " " << name << "_" << what << "[" << n_or_1(items.size()) << "] = {";
    for (size_t i = 0; i < items.size(); ++i) o << (i ? ", " : "") << items[i];
    if (items.empty()) o << "0";
    o << "};\n";
  };
  struct Tables {
    std::vector<std::string> names, dtypes, dims, ranks;
    void add(const std::string &n, DType t, const Shape &s) {
      names.push_back(c_string(n));
      dtypes.push_back(c_string(dtype_name(t)));
      dims.push_back(c_string(shape_str(s)));
      ranks.push_back(std::to_string(s.size()));
    }
  };
  auto emit = [&](const std::string &side, const Tables &t) {
    list(side + "_names", "char *const", t.names);
    list(side + "_dtypes", "char *const", t.dtypes);
    list(side + "_dims", "char *const", t.dims);
    list(side + "_ranks", "int", t.ranks);
  };
  o << "const int " << name << "_num_inputs = " << plan.inputs.size() << ", " << name
    << "_num_outputs = " << plan.output_buffers.size() << ";\n";
  Tables inputs, outputs;
  for (const auto &in : plan.inputs) inputs.add(in.name, in.dtype, in.shape);
  for (int b : plan.output_buffers) outputs.add(plan.buffers[b].name, plan.buffers[b].dtype, plan.buffers[b].shape);
  emit("input", inputs);
  emit("output", outputs);
  o << "\n";
}

}  // namespace

void check_plan_supported(const Plan &plan) {
  for (const auto &st : plan.steps)
    DISCO_CHECK(st.host_op.empty(), "step ", st.label, " is host op ", st.host_op,
                ", whose output sizes depend on data; AOT libraries do not support it yet (use disco run)");
}

std::string driver_source(const Plan &plan, const std::string &name, const std::string &header,
                          const std::string &gpu_api, const std::vector<std::string> &install_functions,
                          const std::string &par_for_threads_function) {
  const bool gpu = !gpu_api.empty();
  check_plan_supported(plan);
  const Layout l = make_layout(plan);
  std::ostringstream o;
  o << "/* Generated by disco compile: the host-side driver of model " << c_identifier(plan.name) << ". */\n"
    << "#define DISCO_AOT_OWN_HALIDE_TYPES 1  /* never the build machine's HalideRuntime.h */\n"
    << "#include \"" << header << "\"\n" << kDriverPrelude << "\n";
  std::set<std::string> declared;  // steps with the same kernel share it (targets/host/kernel_key.h)
  for (const auto &st : plan.steps)
    if (!st.kernel.empty() && declared.insert(st.kernel).second) o << "extern int " << st.kernel << "_argv(void **);\n";
  if (gpu)
    o << "extern int halide_copy_to_host(void *, struct halide_buffer_t *);\n"
      << "extern int halide_device_free(void *, struct halide_buffer_t *);\n";
  if (gpu_api == "cuda")
    o << "#include <dlfcn.h>\nstatic int disco_cuda_driver_present(void) {\n"
      << "  static int present = -1;\n  if (present < 0) {\n"
      << "    void *h = dlopen(\"libcuda.so\", RTLD_LAZY);\n    if (!h) h = dlopen(\"libcuda.so.1\", RTLD_LAZY);\n"
      << "    present = h != NULL;\n  }\n  return present;\n}\n";
  bool constants = false;
  for (const auto &b : plan.buffers) constants = constants || b.kind == PlanBuffer::Constant;
  if (constants) o << "extern const uint8_t " << name << "__disco_constants[];\n";
  o << "\n";
  if (has_extern_steps(plan)) emit_extern_decls(o, plan, extern_layout(l), install_functions);
  if (!par_for_threads_function.empty()) o << "extern void " << par_for_threads_function << "(int);\n";
  emit_metadata(o, plan, name);
  emit_bind(o, plan, l);
  emit_shapes(o, plan, l);
  emit_steps(o, plan, l, name, gpu_api);
  emit_entry_points(o, plan, l, name, gpu, par_for_threads_function);
  return o.str();
}

std::string constants_asm(const std::string &name, const std::string &file) {
  const std::string sym = name + "__disco_constants";
  return "  .section .rodata." + sym + ",\"a\",@progbits\n  .balign 64\n  .globl " + sym + "\n  .hidden " + sym +
         "\n  .type " + sym + ", @object\n" + sym + ":\n  .incbin \"" + file + "\"\n  .size " + sym + ", . - " + sym +
         "\n  .section .note.GNU-stack,\"\",@progbits\n";
}

}  // namespace disco::aot
