#include "runtime/plan.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "frontend/checked_size.h"
#include "frontend/errors.h"

namespace disco {

namespace {

// A damaged or hostile plan file (a compile cache entry is only a folder of
// files) must give a disco::Error, never std::stoll's std:: exceptions
// (found by fuzz/fuzz_plan_cache).
int64_t parse_int(const std::string &w, const char *what) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(w.c_str(), &end, 10);
  DISCO_CHECK(!w.empty() && end == w.c_str() + w.size() && errno != ERANGE, what, ": '", w,
              "' is not a 64-bit integer");
  return v;
}

// Tokens are separated by spaces; strings are written as <length>:<bytes>.
class Writer {
 public:
  Writer &word(const std::string &w) { return raw(w); }
  Writer &num(int64_t v) { return raw(std::to_string(v)); }
  Writer &str(const std::string &s) { return raw(std::to_string(s.size()) + ":" + s); }
  Writer &dim(const Dim &d) { return str(serialize_dim(d)); }
  Writer &shape(const Shape &s) {
    num(static_cast<int64_t>(s.size()));
    for (const auto &d : s) dim(d);
    return *this;
  }
  Writer &ints(const std::vector<int> &v) {
    num(static_cast<int64_t>(v.size()));
    for (int x : v) num(x);
    return *this;
  }
  void line() { os_ << "\n"; first_ = true; }
  std::string text() const { return os_.str(); }

 private:
  Writer &raw(const std::string &w) {
    if (!first_) os_ << ' ';
    os_ << w;
    first_ = false;
    return *this;
  }
  std::ostringstream os_;
  bool first_ = true;
};

class Reader {
 public:
  explicit Reader(std::string text) : t_(std::move(text)) {}
  std::string word() {
    skip();
    size_t b = p_;
    while (p_ < t_.size() && !std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
    DISCO_CHECK(b != p_, "plan file: unexpected end");
    return t_.substr(b, p_ - b);
  }
  int64_t num() { return parse_int(word(), "plan file"); }
  // A number of items that follow: each takes at least a byte of the file,
  // so a bigger count is damage, not a reason to allocate it.
  size_t count() {
    const int64_t n = num();
    DISCO_CHECK(n >= 0 && static_cast<uint64_t>(n) <= t_.size() - p_, "plan file: a count of ", n,
                " items where ", t_.size() - p_, " bytes are left");
    return static_cast<size_t>(n);
  }
  std::string str() {
    skip();
    size_t colon = t_.find(':', p_);
    DISCO_CHECK(colon != std::string::npos, "plan file: bad string");
    const int64_t n = parse_int(t_.substr(p_, colon - p_), "plan file: string length");
    DISCO_CHECK(n >= 0 && static_cast<uint64_t>(n) <= t_.size() - colon - 1, "plan file: truncated string");
    std::string s = t_.substr(colon + 1, n);
    p_ = colon + 1 + n;
    return s;
  }
  Dim dim() { return parse_dim(str()); }
  Shape shape() {
    Shape s(count());
    for (auto &d : s) d = dim();
    return s;
  }
  std::vector<int> ints() {
    std::vector<int> v(count());
    for (auto &x : v) x = static_cast<int>(num());
    return v;
  }
  void expect(const std::string &w) {
    std::string got = word();
    DISCO_CHECK(got == w, "plan file: expected '", w, "', found '", got, "'");
  }

 private:
  void skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  std::string t_;
  size_t p_ = 0;
};

void write_dim(std::ostringstream &os, const Dim &d);

void write_atom(std::ostringstream &os, const AtomNode &a) {
  static const char kinds[] = {'S', 'D', 'M', 'n', 'x'};
  os << kinds[a.kind];
  if (a.kind == AtomNode::Sym) {
    os << a.name.size() << ':' << a.name;
    return;
  }
  write_dim(os, a.a);
  write_dim(os, a.b);
}

void write_dim(std::ostringstream &os, const Dim &d) {
  os << '(';
  for (const auto &t : d.terms()) {
    os << '[' << t.coeff;
    for (const auto &a : t.atoms) write_atom(os, *a);
    os << ']';
  }
  os << ')';
}

struct DimParser {
  const std::string &s;
  size_t p = 0;
  char peek() const { return p < s.size() ? s[p] : '\0'; }
  void eat(char c) {
    DISCO_CHECK(peek() == c, "bad serialized dim '", s, "'");
    ++p;
  }
  int64_t integer() {
    size_t b = p;
    if (peek() == '-') ++p;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++p;
    DISCO_CHECK(p > b, "bad serialized dim '", s, "'");
    return parse_int(s.substr(b, p - b), "serialized dim");
  }
  Dim atom() {
    char k = peek();
    ++p;
    if (k == 'S') {
      const int64_t n = integer();
      eat(':');
      DISCO_CHECK(n >= 0 && static_cast<uint64_t>(n) <= s.size() - p, "bad serialized dim '", s, "'");
      std::string name = s.substr(p, n);
      p += n;
      return Dim::symbol(name);
    }
    Dim a = dim(), b = dim();
    switch (k) {
      case 'D': return floor_div(a, b);
      case 'M': return floor_mod(a, b);
      case 'n': return min(a, b);
      case 'x': return max(a, b);
    }
    fail("bad serialized dim '", s, "'");
  }
  int depth = 0;
  Dim dim() {
    // Plans nest a few levels; a deeper one is damage, and would overflow the stack.
    DISCO_CHECK(++depth <= 64, "serialized dim nested more than 64 deep");
    eat('(');
    Dim sum(0);
    while (peek() == '[') {
      ++p;
      Dim term(integer());
      while (peek() != ']') term = term * atom();
      eat(']');
      sum = sum + term;
    }
    eat(')');
    --depth;
    return sum;
  }
};

}  // namespace

std::string serialize_dim(const Dim &d) {
  std::ostringstream os;
  write_dim(os, d);
  return os.str();
}

Dim parse_dim(const std::string &text) {
  DimParser p{text};
  Dim d = p.dim();
  DISCO_CHECK(p.p == text.size(), "bad serialized dim '", text, "'");
  return d;
}

void Plan::save(const std::string &path) const {
  Writer w;
  w.word("disco-plan").num(5).str(name).str(library).str(constants);
  w.line();
  w.word("inputs").num(static_cast<int64_t>(inputs.size()));
  for (const auto &in : inputs) w.str(in.name).num(static_cast<int>(in.dtype)).shape(in.shape);
  w.line();
  w.word("outputs").num(static_cast<int64_t>(output_names.size()));
  for (const auto &o : output_names) w.str(o);
  w.line();
  w.word("checks").num(static_cast<int64_t>(checks.size()));
  for (const auto &c : checks) w.num(c.kind).dim(c.a).dim(c.b).str(c.message);
  w.line();
  w.word("buffers").num(static_cast<int64_t>(buffers.size()));
  for (const auto &b : buffers)
    w.num(b.kind).str(b.name).num(static_cast<int>(b.dtype)).shape(b.shape).num(b.io_index).num(b.offset).num(
        b.channel_multiple);
  w.line();
  w.word("steps").num(static_cast<int64_t>(steps.size()));
  for (const auto &s : steps) {
    w.str(s.kernel).str(s.label).ints(s.inputs).ints(s.outputs).num(static_cast<int64_t>(s.symbols.size()));
    for (const Dim &sym : s.symbols) w.dim(sym);
    w.str(s.host_op).num(static_cast<int64_t>(s.host_attrs.size()));
    for (const auto &[k, v] : s.host_attrs) w.str(k).num(v);
    w.str(s.extern_call).num(static_cast<int64_t>(s.params.size()));
    for (const auto &[k, v] : s.params) w.str(k).str(v);
  }
  w.line();
  w.word("io").ints(input_buffers).ints(output_buffers);
  w.line();
  std::ofstream f(path, std::ios::binary);
  f << w.text();
  DISCO_CHECK(f.good(), "cannot write plan file '", path, "'");
}

Plan Plan::load(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  DISCO_CHECK(f.good(), "cannot open plan file '", path, "'");
  std::stringstream ss;
  ss << f.rdbuf();
  Reader r(ss.str());
  Plan p;
  r.expect("disco-plan");
  DISCO_CHECK(r.num() == 5, "plan file '", path, "' has an unknown version");
  p.name = r.str();
  p.library = r.str();
  p.constants = r.str();
  r.expect("inputs");
  p.inputs.resize(r.count());
  for (auto &in : p.inputs) {
    in.name = r.str();
    in.dtype = static_cast<DType>(r.num());
    in.shape = r.shape();
  }
  r.expect("outputs");
  p.output_names.resize(r.count());
  for (auto &o : p.output_names) o = r.str();
  r.expect("checks");
  size_t nc = r.count();
  for (size_t i = 0; i < nc; ++i) {
    RuntimeCheck c{static_cast<RuntimeCheck::Kind>(r.num()), Dim(0), Dim(0), ""};
    c.a = r.dim();
    c.b = r.dim();
    c.message = r.str();
    p.checks.push_back(c);
  }
  r.expect("buffers");
  p.buffers.resize(r.count());
  for (auto &b : p.buffers) {
    b.kind = static_cast<PlanBuffer::Kind>(r.num());
    b.name = r.str();
    b.dtype = static_cast<DType>(r.num());
    b.shape = r.shape();
    b.io_index = static_cast<int>(r.num());
    b.offset = r.num();
    b.channel_multiple = r.num();
    DISCO_CHECK(b.channel_multiple >= 0 && b.channel_multiple <= 1024, "plan file '", path, "': buffer '", b.name,
                "' has a channel multiple of ", b.channel_multiple);
  }
  r.expect("steps");
  p.steps.resize(r.count());
  for (auto &s : p.steps) {
    s.kernel = r.str();
    s.label = r.str();
    s.inputs = r.ints();
    s.outputs = r.ints();
    s.symbols.resize(r.count());
    for (Dim &sym : s.symbols) sym = r.dim();
    s.host_op = r.str();
    for (int64_t k = r.num(); k > 0; --k) {
      std::string key = r.str();
      s.host_attrs[key] = r.num();
    }
    s.extern_call = r.str();
    for (int64_t k = r.num(); k > 0; --k) {
      std::string key = r.str();
      s.params[key] = r.str();
    }
  }
  r.expect("io");
  p.input_buffers = r.ints();
  p.output_buffers = r.ints();
  return p;
}

int64_t allocated_channels(const PlanBuffer &b, int64_t channels) {
  const int64_t m = b.channel_multiple;
  if (m <= 1 || channels <= 0) return channels;
  // INT64_MAX where rounding up overflows: the size checks refuse it.
  return channels > INT64_MAX - (m - 1) ? INT64_MAX : (channels + m - 1) / m * m;
}

std::vector<int64_t> allocated_shape(const PlanBuffer &b, const std::vector<int64_t> &shape) {
  std::vector<int64_t> padded = shape;
  if (padded.size() >= 2) padded[1] = allocated_channels(b, padded[1]);
  return padded;
}

std::optional<int64_t> buffer_bytes(const PlanBuffer &b, const std::vector<int64_t> &shape) {
  // Per run for every buffer (the executor's fast path): no shape is copied.
  std::optional<int64_t> bytes = tensor_bytes(shape, b.dtype);
  const int64_t m = b.channel_multiple;
  if (!bytes || m <= 1 || shape.size() < 2 || shape[1] <= 0 || *bytes == 0) return bytes;
  // The bytes of one channel, times the rounded-up channels (the same as tensor_bytes of allocated_shape).
  if (__builtin_mul_overflow(*bytes / shape[1], allocated_channels(b, shape[1]), &*bytes)) return std::nullopt;
  return bytes;
}

std::vector<char> kernel_buffers(const Plan &plan) {
  std::vector<char> used(plan.buffers.size(), false);
  auto mark = [&](int b) {
    if (b >= 0 && static_cast<size_t>(b) < used.size()) used[static_cast<size_t>(b)] = true;
  };
  for (const PlanStep &s : plan.steps)
    if (s.host_op.empty() && s.extern_call.empty()) {
      for (int b : s.inputs) mark(b);
      for (int b : s.outputs) mark(b);
    }
  return used;
}

}  // namespace disco
