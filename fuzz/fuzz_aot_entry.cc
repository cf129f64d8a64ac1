// Fuzzes the entry points of an AOT library (`disco compile`'s NAME.a, driver/aot/):
// NAME_run_arrays and NAME_output_shapes_arrays with fuzzed halide_buffer_t
// descriptors: null buffers and arrays, ranks, dtypes, lanes, mins, extents,
// strides, null dim arrays and hosts, device fields and flags. The library is
// fuzz/aot/fuzz_model.onnx (4 inputs of 4 dtypes sharing symbolic dims, 5 outputs,
// 8 kernels, temporaries), compiled at build time with its C driver instrumented
// (ASan, UBSan, coverage: fuzz/aot/cc). Kernels are Halide's, not instrumented.
//
// A finding is a crash or sanitizer report, and also (the library's contract,
// driver/aot/README.md): a non-zero return with an empty NAME_last_error; a run
// that succeeds on arguments the model refuses (wrong rank, dtype, fixed dim or
// symbol, not dense, min not 0, null host); a run that writes outside its
// outputs (canaries after each buffer) or into its inputs; output_shapes and
// run disagreeing. Descriptors always describe memory the harness owns (it
// allocates what they span, or passes a null host), as a caller must.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define DISCO_AOT_OWN_HALIDE_TYPES
#include "aot_fuzz.h"

// halide_dimension_t has no operator== in the header's own copy.
static bool operator==(const halide_dimension_t &a, const halide_dimension_t &b) {
  return a.min == b.min && a.extent == b.extent && a.stride == b.stride && a.flags == b.flags;
}

namespace {

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

struct Decl {
  int rank = 0;
  int code = 0, bits = 0;
  std::vector<int64_t> fixed;  // per ONNX dim: the fixed size, or -1 (symbolic)
};

// "float32" -> Halide's type; "[batch, seq, 8]" -> {-1, -1, 8}.
Decl parse_decl(const char *dtype, const char *dims, int rank) {
  Decl d;
  d.rank = rank;
  const std::string t = dtype;
  if (t == "bool") d.code = 1, d.bits = 1;
  else if (t.rfind("float", 0) == 0) d.code = 2, d.bits = std::atoi(t.c_str() + 5);
  else if (t.rfind("uint", 0) == 0) d.code = 1, d.bits = std::atoi(t.c_str() + 4);
  else if (t.rfind("int", 0) == 0) d.code = 0, d.bits = std::atoi(t.c_str() + 3);
  else finding("unknown dtype " + t);
  std::string s = dims;
  size_t at = 1;
  for (int i = 0; i < rank; ++i) {
    size_t end = s.find_first_of(",]", at);
    std::string item = s.substr(at, end - at);
    while (!item.empty() && item[0] == ' ') item.erase(0, 1);
    const bool number = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    d.fixed.push_back(number ? std::atoll(item.c_str()) : -1);  // "2*n" is symbolic
    at = end + 1;
  }
  return d;
}

struct Model {
  std::vector<Decl> in, out;
  Model() {
    for (int i = 0; i < aot_fuzz_num_inputs; ++i)
      in.push_back(parse_decl(aot_fuzz_input_dtypes[i], aot_fuzz_input_dims[i], aot_fuzz_input_ranks[i]));
    for (int i = 0; i < aot_fuzz_num_outputs; ++i)
      out.push_back(parse_decl(aot_fuzz_output_dtypes[i], aot_fuzz_output_dims[i], aot_fuzz_output_ranks[i]));
  }
};

constexpr size_t kCanary = 64;
constexpr uint8_t kCanaryByte = 0xA5;
constexpr int64_t kMaxBytes = 4 << 20;  // a descriptor spanning more gets a null host

// One argument: its descriptor and the memory it describes (with a canary after).
struct Arg {
  bool null = false;
  halide_buffer_t buf{};
  std::vector<halide_dimension_t> dims;
  bool dims_null = false;
  std::vector<uint8_t> mem;  // [pad before][span][canary]
  int64_t before = 0, span = 0;
  std::vector<uint8_t> copy;  // an input's bytes before the call

  // Bytes from the lowest to the highest element the descriptor reaches (0
  // when an extent is <= 0); -1 when past kMaxBytes. `before`: bytes below host.
  int64_t reach(int64_t *below) const {
    const int64_t elem = (buf.type.bits + 7) / 8 * (buf.type.lanes ? buf.type.lanes : 1);
    int64_t lo = 0, hi = 0;
    *below = 0;
    if (dims_null || buf.dimensions < 0) return 0;
    for (int i = 0; i < buf.dimensions; ++i)
      if (dims[i].extent <= 0) return 0;
    for (int i = 0; i < buf.dimensions; ++i) {
      const int64_t step = (int64_t)(dims[i].extent - 1) * dims[i].stride;
      (step < 0 ? lo : hi) += step;
      if (lo < -kMaxBytes || hi > kMaxBytes) return -1;
    }
    const int64_t bytes = (hi - lo + 1) * elem;
    if (bytes > kMaxBytes) return -1;
    *below = -lo * elem;
    return bytes;
  }

  // Host memory for what the descriptor spans, unless `null_host` or too much.
  void place_host(FuzzedDataProvider &p, bool null_host, bool fill) {
    buf.dim = dims_null ? nullptr : dims.data();
    buf.host = nullptr;
    int64_t below = 0;
    const int64_t bytes = reach(&below);
    if (null_host || bytes < 0) return;
    before = below;
    span = bytes;
    mem.assign((size_t)(span + kCanary) + 1, kCanaryByte);
    if (fill) {
      std::vector<uint8_t> data = p.ConsumeBytes<uint8_t>((size_t)std::min<int64_t>(span, 256));
      for (int64_t i = 0; i < span; ++i) mem[(size_t)i] = data.empty() ? (uint8_t)i : data[(size_t)i % data.size()];
    }
    buf.host = mem.data() + before;
  }

  bool canary_intact() const {
    for (size_t i = (size_t)span; i < mem.size(); ++i)
      if (mem[i] != kCanaryByte) return false;
    return true;
  }
};

// Extents: mostly small or the declared size, sometimes anything.
int32_t pick_extent(FuzzedDataProvider &p, int64_t fixed) {
  switch (p.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return p.ConsumeIntegral<int32_t>();
    case 1: return p.PickValueInArray<int32_t>({-1, 0, 1, 1 << 16, (1 << 28) + 1, INT32_MAX, INT32_MIN});
    case 2: case 3: return p.ConsumeIntegralInRange<int32_t>(0, 5);
    default: return fixed >= 0 ? (int32_t)fixed : p.ConsumeIntegralInRange<int32_t>(0, 4);
  }
}

// A buffer as declared, with fuzzed deviations.
void make_arg(FuzzedDataProvider &p, const Decl &d, Arg &a, bool fill, const std::vector<int32_t> *shape_hint) {
  // Most arguments as declared; the others with one kind of deviation, or many (wild).
  const uint8_t mode = p.ConsumeIntegral<uint8_t>();
  enum { kNormal, kWild, kRank, kDtype, kDimsNull, kMin, kStride, kDevice, kFlags, kNullHost, kNull };
  const int kind = mode < 150 ? kNormal : (mode - 150) % 10 + 1;
  if (kind == kNull) {
    a.null = true;
    return;
  }
  const bool wild = kind == kWild;
  a.buf.dimensions = d.rank;
  if (wild || kind == kRank) a.buf.dimensions = p.ConsumeIntegralInRange<int32_t>(-2, 6);
  a.buf.type.code = (uint8_t)d.code;
  a.buf.type.bits = (uint8_t)d.bits;
  a.buf.type.lanes = 1;
  if (wild || kind == kDtype) {
    a.buf.type.code = p.ConsumeIntegralInRange<uint8_t>(0, 5);
    a.buf.type.bits = p.PickValueInArray<uint8_t>({0, 1, 8, 16, 32, 64, 255});
    a.buf.type.lanes = p.PickValueInArray<uint16_t>({0, 1, 1, 4});
  }
  a.dims_null = a.buf.dimensions > 0 && kind == kDimsNull;
  a.dims.resize(a.buf.dimensions > 0 ? a.buf.dimensions : 0);
  int64_t stride = 1;
  for (int i = 0; i < (int)a.dims.size(); ++i) {
    const int onnx = (int)a.dims.size() - 1 - i;
    halide_dimension_t &h = a.dims[i];
    const int64_t fixed = onnx < d.rank ? d.fixed[onnx] : -1;
    if (shape_hint && onnx < (int)shape_hint->size() && !wild && p.ConsumeIntegralInRange<int>(0, 7) != 0)
      h.extent = (*shape_hint)[onnx];
    else
      h.extent = pick_extent(p, fixed);
    h.min = (wild || kind == kMin) && p.ConsumeBool() ? p.ConsumeIntegral<int32_t>() : 0;
    h.stride = (int32_t)stride;
    if ((wild || kind == kStride) && p.ConsumeBool()) h.stride = p.ConsumeIntegral<int32_t>();
    h.flags = 0;
    stride *= h.extent > 0 ? h.extent : 0;
    if (stride > INT32_MAX) stride = 0;
  }
  if (kind == kDevice || (wild && p.ConsumeBool())) {
    static uint8_t fake_interface[256];  // never a real one: the library must refuse it, not call it
    a.buf.device = p.ConsumeIntegral<uint64_t>();
    a.buf.device_interface = reinterpret_cast<const halide_device_interface_t *>(fake_interface);
  }
  if (kind == kFlags || (wild && p.ConsumeBool())) a.buf.flags = p.ConsumeIntegral<uint64_t>();
  a.place_host(p, kind == kNullHost || (wild && p.ConsumeBool()), fill);
}

// Why the model must refuse this input: "" when it may accept it.
std::string must_refuse(const Decl &d, const Arg &a) {
  if (a.null) return "null buffer";
  const halide_buffer_t &b = a.buf;
  if (b.dimensions != d.rank) return "rank";
  if (b.type.code != d.code || b.type.bits != d.bits || b.type.lanes != 1) return "dtype";
  if (d.rank > 0 && !b.dim) return "null dim array";
  int64_t stride = 1, elements = 1;
  for (int i = 0; i < d.rank; ++i) {
    const halide_dimension_t &h = b.dim[i];
    const int onnx = d.rank - 1 - i;
    if (h.extent < 0) return "negative extent";
    if (h.min != 0) return "min not 0";
    if (h.extent > 1 && h.stride != stride) return "not dense";
    if (d.fixed[onnx] >= 0 && h.extent != d.fixed[onnx]) return "fixed dim " + std::to_string(onnx);
    stride *= h.extent;
    elements *= h.extent;
  }
  if (elements > 0 && !b.host) return "null host";
  if (b.device && b.device_interface) return "on a device";
  return "";
}

// With DISCO_FUZZ_AOT_STATS set, how many calls of each kind succeeded (printed at exit):
// a run that succeeds went through every kernel.
struct Stats {
  long shapes = 0, shapes_ok = 0, runs = 0, runs_ok = 0;
  ~Stats() {
    if (std::getenv("DISCO_FUZZ_AOT_STATS"))
      std::fprintf(stderr, "fuzz_aot_entry: output_shapes %ld (%ld succeeded), run %ld (%ld succeeded)\n", shapes,
                   shapes_ok, runs, runs_ok);
  }
} g_stats;

void check_error(int rc, const char *call) {
  const char *e = aot_fuzz_last_error();
  if (rc == 0) return;
  if (!e || !e[0]) finding(std::string(call) + " returned " + std::to_string(rc) + " with an empty last_error");
  if (std::strlen(e) >= 2048) finding(std::string(call) + ": last_error is not terminated within its buffer");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  aot_fuzz_set_num_threads(1);  // kernels on the calling thread: repeatable, and fast under ASan
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Model model;
  FuzzedDataProvider p(data, size);
  const int nin = aot_fuzz_num_inputs, nout = aot_fuzz_num_outputs;
  const uint8_t call = p.ConsumeIntegral<uint8_t>();

  std::vector<Arg> in(nin), out(nout);
  for (int i = 0; i < nin; ++i) make_arg(p, model.in[i], in[i], true, nullptr);
  std::vector<const halide_buffer_t *> in_ptrs(nin);
  for (int i = 0; i < nin; ++i) in_ptrs[i] = in[i].null ? nullptr : &in[i].buf;
  const halide_buffer_t *const *ins = (call & 31) == 1 ? nullptr : in_ptrs.data();

  // Output shapes first (as a caller does), with an output array of the declared ranks.
  std::vector<std::vector<halide_dimension_t>> sd(nout);
  std::vector<halide_buffer_t> sb(nout);
  std::vector<halide_buffer_t *> sp(nout);
  for (int i = 0; i < nout; ++i) {
    sd[i].assign(model.out[i].rank, halide_dimension_t{});
    sb[i] = halide_buffer_t{};
    sb[i].dim = sd[i].data();
    sp[i] = &sb[i];
  }
  const int shapes_rc = aot_fuzz_output_shapes_arrays(ins, sp.data());
  check_error(shapes_rc, "output_shapes");
  ++g_stats.shapes;
  g_stats.shapes_ok += shapes_rc == 0;
  std::vector<std::vector<int32_t>> shape(nout);
  if (shapes_rc == 0) {
    for (int i = 0; i < nout; ++i) {
      const Decl &d = model.out[i];
      if (sb[i].dimensions != d.rank || sb[i].type.code != d.code || sb[i].type.bits != d.bits || sb[i].type.lanes != 1)
        finding("output_shapes gave output " + std::to_string(i) + " another rank or dtype than declared");
      for (int k = 0; k < d.rank; ++k) {
        if (sd[i][k].extent < 0 || sd[i][k].min != 0) finding("output_shapes gave a negative extent or a min");
        shape[i].insert(shape[i].begin(), sd[i][k].extent);
      }
    }
  }
  if ((call & 7) == 2) return 0;  // output_shapes alone

  for (int i = 0; i < nout; ++i) make_arg(p, model.out[i], out[i], false, shapes_rc == 0 ? &shape[i] : nullptr);
  std::vector<halide_buffer_t *> out_ptrs(nout);
  for (int i = 0; i < nout; ++i) out_ptrs[i] = out[i].null ? nullptr : &out[i].buf;
  halide_buffer_t *const *outs = (call & 31) == 3 ? nullptr : out_ptrs.data();
  for (auto &a : in) a.copy = a.mem;
  std::vector<halide_buffer_t> out_before(nout);
  std::vector<std::vector<halide_dimension_t>> out_dims_before(nout);
  for (int i = 0; i < nout; ++i) out_before[i] = out[i].buf, out_dims_before[i] = out[i].dims;

  const int rc = aot_fuzz_run_arrays(ins, outs);
  check_error(rc, "run");
  ++g_stats.runs;
  g_stats.runs_ok += rc == 0;
  for (int i = 0; i < nin; ++i)
    if (in[i].mem != in[i].copy) finding("run wrote into input " + std::to_string(i));
  for (int i = 0; i < nout; ++i) {
    if (!out[i].canary_intact()) finding("run wrote past the end of output " + std::to_string(i));
    if (std::memcmp(&out_before[i], &out[i].buf, sizeof(halide_buffer_t)) != 0 || out_dims_before[i] != out[i].dims)
      finding("run changed output " + std::to_string(i) + "'s descriptor");
  }
  if (rc == 0) {
    if (!ins || !outs) finding("run accepted a null array");
    if (shapes_rc != 0) finding("run accepted inputs that output_shapes refused");
    for (int i = 0; i < nin; ++i) {
      const std::string why = must_refuse(model.in[i], in[i]);
      if (!why.empty()) finding("run accepted input " + std::to_string(i) + ": " + why);
    }
    for (int i = 0; i < nout; ++i) {
      std::string why = must_refuse(model.out[i], out[i]);
      for (int k = 0; why.empty() && k < model.out[i].rank; ++k)
        if (out[i].dims[model.out[i].rank - 1 - k].extent != shape[i][k]) why = "extent of dim " + std::to_string(k);
      if (!why.empty()) finding("run accepted output " + std::to_string(i) + ": " + why);
    }
  }
  if ((call & 63) == 5) aot_fuzz_release_memory();
  return 0;
}

