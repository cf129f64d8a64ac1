// Issue #21's data-movement table: one-node graphs of the ops that only move,
// pick or window elements (Transpose, Concat, Split, Slice, Pad, Gather,
// GatherElements, ScatterND, DepthToSpace, SpaceToDepth, pools, Resize, TopK,
// Where, Expand) at large sizes, each against a plain copy (Identity) of the same
// number of bytes. The issue asks pure data movement to reach at least half
// the copy's bandwidth. Each graph has a symbolic batch and is compiled once
// with the host backend (the dynamic compile); op and copy alternate in
// blocks, and each side's time is the median over its blocks (this VM's speed
// drifts by 10-50%), at 1 and 2 threads.
//
// Bytes moved: the input bytes an op must stream (all of an input whose every
// cache line it touches, e.g. a Slice with step 2 along the innermost axis)
// plus the output bytes. The copy moves the same bytes (half read, half
// written), so an op's fraction of the copy bandwidth is copy time / op time.
//
//   datamove_bench [--filter TEXT] [--blocks N] [--threads 1,2] [--out FILE.md]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "frontend/graph_builder.h"
#include "benchmarks/host_bench.h"
#include "runtime/executor.h"

namespace {

using namespace disco;
using bench::compile_host;
using bench::interleaved;

constexpr int64_t kBatch = 16;  // the symbolic batch's value at run time

// One row of the table: a one-node graph, its inputs, and the bytes it moves.
struct Case {
  std::string name;
  std::function<Graph()> graph;
  std::function<std::vector<TensorData>()> inputs;
  double bytes = 0;  // input bytes streamed + output bytes
};

TensorData floats(std::vector<int64_t> shape, uint32_t seed = 1) {
  TensorData t(DType::F32, std::move(shape));
  float *p = t.mutable_as<float>();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4, 4);
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = u(rng);
  return t;
}

// Random indices in [0, n), int64 (what exporters write).
TensorData indices(std::vector<int64_t> shape, int64_t n, uint32_t seed = 2) {
  TensorData t(DType::I64, std::move(shape));
  int64_t *p = t.mutable_as<int64_t>();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(0, n - 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = u(rng);
  return t;
}

TensorData ints(const std::vector<int64_t> &v) { return TensorData::from_int64(v, {static_cast<int64_t>(v.size())}); }

double elems(const std::vector<int64_t> &s) {
  double n = 1;
  for (auto d : s) n *= static_cast<double>(d);
  return n;
}

// The shape with the batch first: what the graph declares symbolically.
Shape symbolic(std::vector<int64_t> s) {
  Shape out{Dim::symbol("n")};
  for (size_t i = 1; i < s.size(); ++i) out.push_back(s[i]);
  return out;
}

std::vector<int64_t> batch(std::vector<int64_t> rest) {
  rest.insert(rest.begin(), kBatch);
  return rest;
}

// A graph x -> op(x, constants...) with attributes.
Case unary(const std::string &name, const std::string &op, std::vector<int64_t> in, double out_elements,
           Attributes attrs = {}, std::vector<TensorData> consts = {}, int num_outputs = 1, double read_elements = -1) {
  Case c;
  c.name = name;
  c.graph = [=] {
    GraphBuilder b(18);
    std::vector<std::string> args{b.input("x", DType::F32, symbolic(in))};
    for (size_t i = 0; i < consts.size(); ++i)
      args.push_back(consts[i].dtype == DType::Undefined ? "" : b.constant("c" + std::to_string(i), consts[i]));
    for (const auto &o : b.op_n(op, args, num_outputs, attrs)) b.output(o);
    return b.build();
  };
  c.inputs = [=] { return std::vector<TensorData>{floats(in)}; };
  c.bytes = 4 * ((read_elements >= 0 ? read_elements : elems(in)) + out_elements);
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  const double m16 = 16.0 * 1024 * 1024;
  // ---- Transpose: attention heads (inner dim kept), NHWC <-> NCHW.
  cs.push_back(unary("Transpose (0,2,1,3) [16,512,16,128]", "Transpose", batch({512, 16, 128}), m16,
                     {{"perm", attr_ints({0, 2, 1, 3})}}));
  cs.push_back(unary("Transpose (0,3,1,2) [16,128,128,64]", "Transpose", batch({128, 128, 64}), m16,
                     {{"perm", attr_ints({0, 3, 1, 2})}}));
  cs.push_back(unary("Transpose (0,2,3,1) [16,64,128,128]", "Transpose", batch({64, 128, 128}), m16,
                     {{"perm", attr_ints({0, 2, 3, 1})}}));
  cs.push_back(unary("Transpose (0,2,1) [16,1024,1024]", "Transpose", batch({1024, 1024}), m16,
                     {{"perm", attr_ints({0, 2, 1})}}));
  // ---- Concat: two inputs along the inner and an outer axis.
  for (int axis : {2, 1}) {
    Case c;
    std::vector<int64_t> part = axis == 2 ? batch({1024, 512}) : batch({512, 1024});
    c.name = axis == 2 ? "Concat axis 2 2x[16,1024,512]" : "Concat axis 1 2x[16,512,1024]";
    c.graph = [=] {
      GraphBuilder b(18);
      auto x = b.input("x", DType::F32, symbolic(part)), y = b.input("y", DType::F32, symbolic(part));
      b.output(b.op("Concat", {x, y}, {{"axis", attr_int(axis)}}));
      return b.build();
    };
    c.inputs = [=] { return std::vector<TensorData>{floats(part, 1), floats(part, 2)}; };
    c.bytes = 4 * 2 * m16;
    cs.push_back(c);
  }
  // ---- Split into two along the inner and an outer axis.
  cs.push_back(unary("Split axis 2 [16,1024,1024]", "Split", batch({1024, 1024}), m16, {{"axis", attr_int(2)}},
                     {ints({512, 512})}, 2));
  cs.push_back(unary("Split axis 1 [16,1024,1024]", "Split", batch({1024, 1024}), m16, {{"axis", attr_int(1)}},
                     {ints({512, 512})}, 2));
  // ---- Slice: step 2 along the inner axis (every cache line read), an outer axis (half read), and a plain crop.
  cs.push_back(unary("Slice inner step 2 [16,1024,2048]", "Slice", batch({1024, 2048}), m16, {},
                     {ints({0}), ints({2048}), ints({2}), ints({2})}));
  cs.push_back(unary("Slice axis 1 step 2 [16,2048,1024]", "Slice", batch({2048, 1024}), m16, {},
                     {ints({0}), ints({2048}), ints({1}), ints({2})}, 1, m16));
  cs.push_back(unary("Slice crop [16,1040,1040]->[16,1024,1024]", "Slice", batch({1040, 1040}), m16, {},
                     {ints({8, 8}), ints({1032, 1032}), ints({1, 2})}, 1, m16));
  // ---- Pad the spatial axes by 1 on each side.
  for (const char *mode : {"constant", "reflect", "edge"})
    cs.push_back(unary(std::string("Pad ") + mode + " [16,64,126,126]+1", "Pad", batch({64, 126, 126}), m16,
                       {{"mode", attr_string(mode)}}, {ints({0, 0, 1, 1, 0, 0, 1, 1})}));
  // ---- DepthToSpace / SpaceToDepth, blocksize 2.
  for (const char *mode : {"DCR", "CRD"})
    cs.push_back(unary(std::string("DepthToSpace ") + mode + " [16,256,64,64]", "DepthToSpace",
                       batch({256, 64, 64}), m16, {{"blocksize", attr_int(2)}, {"mode", attr_string(mode)}}));
  cs.push_back(unary("SpaceToDepth [16,64,128,128]", "SpaceToDepth", batch({64, 128, 128}), m16,
                     {{"blocksize", attr_int(2)}}));
  // ---- Gather: rows of an embedding table (axis 0), and columns (the inner axis).
  {
    Case c;
    c.name = "Gather axis 0 [32000,768] by [16,1024]";
    c.graph = [] {
      GraphBuilder b(18);
      auto t = b.input("table", DType::F32, {32000, 768});
      auto i = b.input("ids", DType::I64, {Dim::symbol("n"), 1024});
      b.output(b.op("Gather", {t, i}, {{"axis", attr_int(0)}}));
      return b.build();
    };
    c.inputs = [] { return std::vector<TensorData>{floats({32000, 768}), indices(batch({1024}), 32000)}; };
    c.bytes = 4 * 2 * (16.0 * 1024 * 768) + 8 * 16 * 1024;
    cs.push_back(c);
  }
  {
    Case c;
    c.name = "Gather axis 2 [16,1024,1024] by [512]";
    c.graph = [] {
      GraphBuilder b(18);
      auto x = b.input("x", DType::F32, symbolic(batch({1024, 1024})));
      auto i = b.input("ids", DType::I64, {512});
      b.output(b.op("Gather", {x, i}, {{"axis", attr_int(2)}}));
      return b.build();
    };
    c.inputs = [] { return std::vector<TensorData>{floats(batch({1024, 1024})), indices({512}, 1024)}; };
    c.bytes = 4 * (m16 + m16 / 2);
    cs.push_back(c);
  }
  {
    Case c;
    c.name = "GatherElements axis 2 [16,512,1024]";
    c.graph = [] {
      GraphBuilder b(18);
      auto x = b.input("x", DType::F32, symbolic(batch({512, 1024})));
      auto i = b.input("ids", DType::I64, symbolic(batch({512, 1024})));
      b.output(b.op("GatherElements", {x, i}, {{"axis", attr_int(2)}}));
      return b.build();
    };
    c.inputs = [] {
      return std::vector<TensorData>{floats(batch({512, 1024})), indices(batch({512, 1024}), 1024)};
    };
    c.bytes = (4 + 8 + 4) * m16 / 2;
    cs.push_back(c);
  }
  {
    // A KV-cache update: 512 of 1024 rows per batch replaced.
    Case c;
    c.name = "ScatterND rows [16,1024,1024] by [16,512,2]";
    c.graph = [] {
      GraphBuilder b(18);
      auto x = b.input("x", DType::F32, symbolic(batch({1024, 1024})));
      auto i = b.input("ids", DType::I64, symbolic(batch({512, 2})));
      auto u = b.input("upd", DType::F32, symbolic(batch({512, 1024})));
      b.output(b.op("ScatterND", {x, i, u}));
      return b.build();
    };
    c.inputs = [] {
      TensorData ids(DType::I64, batch({512, 2}));
      int64_t *p = ids.mutable_as<int64_t>();
      for (int64_t bi = 0; bi < kBatch; ++bi)
        for (int64_t r = 0; r < 512; ++r) {
          p[(bi * 512 + r) * 2] = bi;
          p[(bi * 512 + r) * 2 + 1] = (r * 2 + 7 * bi) % 1024;  // distinct rows
        }
      return std::vector<TensorData>{floats(batch({1024, 1024})), ids, floats(batch({512, 1024}))};
    };
    c.bytes = 4 * (m16 + m16 / 2 + m16);
    cs.push_back(c);
  }
  // ---- Pools: 3x3 stride 2 with and without pads, global.
  for (const char *op : {"MaxPool", "AveragePool"}) {
    cs.push_back(unary(std::string(op) + " 3x3 s2 pad 1 [16,64,128,128]", op, batch({64, 128, 128}), m16 / 4,
                       {{"kernel_shape", attr_ints({3, 3})},
                        {"strides", attr_ints({2, 2})},
                        {"pads", attr_ints({1, 1, 1, 1})}}));
    cs.push_back(unary(std::string(op) + " 3x3 s2 [16,64,129,129]", op, batch({64, 129, 129}), m16 / 4,
                       {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}}));
  }
  for (const char *op : {"GlobalMaxPool", "GlobalAveragePool"})
    cs.push_back(unary(std::string(op) + " [16,256,64,64]", op, batch({256, 64, 64}), 16 * 256));
  // ---- Resize 2x of [16,64,64,64] (a segmentation head's upsample): each mode, and
  // linear with each family of coordinate modes (affine per phase, and not).
  {
    TensorData scales(DType::F32, {4});
    const float sc[4] = {1, 1, 2, 2};
    for (int i = 0; i < 4; ++i) scales.mutable_as<float>()[i] = sc[i];
    struct R {
      const char *name, *mode, *ctm;
    };
    for (const R &r : {R{"nearest", "nearest", "half_pixel"}, R{"linear half_pixel", "linear", "half_pixel"},
                       R{"linear asymmetric", "linear", "asymmetric"},
                       R{"linear align_corners", "linear", "align_corners"}, R{"cubic half_pixel", "cubic", "half_pixel"}})
      cs.push_back(unary(std::string("Resize 2x ") + r.name + " [16,64,64,64]", "Resize", batch({64, 64, 64}), m16,
                         {{"mode", attr_string(r.mode)}, {"coordinate_transformation_mode", attr_string(r.ctm)}},
                         {TensorData(), scales}));
  }
  // ---- TopK along the last axis: MoE routing (k 2 of 64) and a vocabulary (k 4 of 32000).
  cs.push_back(unary("TopK k=2 [16,16384,64]", "TopK", batch({16384, 64}), 2 * 16.0 * 16384 * 2, {},
                     {ints({2})}, 2));
  cs.push_back(unary("TopK k=4 [16,64,32000]", "TopK", batch({64, 32000}), 2 * 16.0 * 64 * 4, {}, {ints({4})}, 2));
  // ---- Where with a broadcast condition; Expand of a broadcast row.
  {
    Case c;
    c.name = "Where cond [16,1,1024] x [16,1024,1024] y scalar";
    c.graph = [] {
      GraphBuilder b(18);
      auto cond = b.input("cond", DType::Bool, symbolic(batch({1, 1024})));
      auto x = b.input("x", DType::F32, symbolic(batch({1024, 1024})));
      auto y = b.constant("y", TensorData::scalar_f32(-1e4f));
      b.output(b.op("Where", {cond, x, y}));
      return b.build();
    };
    c.inputs = [] {
      std::vector<int64_t> m(16 * 1024);
      for (size_t i = 0; i < m.size(); ++i) m[i] = (i * 2654435761u >> 7) & 1;
      return std::vector<TensorData>{TensorData::from_ints(DType::Bool, m, batch({1, 1024})),
                                     floats(batch({1024, 1024}))};
    };
    c.bytes = 4 * 2 * m16;
    cs.push_back(c);
  }
  cs.push_back(unary("Expand [16,1,1024]->[16,1024,1024]", "Expand", batch({1, 1024}), m16, {},
                     {ints({1, 1024, 1024})}));
  return cs;
}

// The copy: an Identity over (batch, cols) floats.
Graph copy_graph(int64_t cols) {
  GraphBuilder b(18);
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), cols});
  b.output(b.op("Identity", {x}));
  return b.build();
}

std::vector<int> parse_threads(const std::string &s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::max(1, std::atoi(item.c_str())));
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  std::string out_path, filter;
  int blocks = 5;
  std::vector<int> threads{1, 2};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: datamove_bench [--filter TEXT] [--blocks N] [--threads 1,2] [--out FILE.md]\n\n"
          "GB/s of one-node data-movement graphs (host kernels, symbolic batch 16) against a plain copy\n"
          "(Identity) of the same bytes, interleaved in blocks; the op's fraction of the copy bandwidth.\n"
          "--filter: only rows whose name contains TEXT. --blocks: blocks per side (default 5).\n"
          "--threads: the thread counts (default 1,2). --out: also write the table as markdown.\n");
      return 0;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--blocks" && i + 1 < argc) {
      blocks = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = parse_threads(argv[++i]);
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "datamove_bench: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    std::ostringstream md;
    md << "| op | threads | ms | GB/s | copy GB/s | fraction of copy |\n|---|---|---|---|---|---|\n";
    std::printf("%s", md.str().c_str());
    std::fflush(stdout);
    int under = 0, rows = 0;
    for (const Case &c : cases()) {
      if (c.name.find(filter) == std::string::npos) continue;
      auto op = compile_host(c.graph(), "datamove");
      const std::vector<TensorData> in = c.inputs();
      // The copy's (batch, cols) floats move c.bytes: half read, half written.
      const int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(c.bytes / 8 / kBatch));
      auto copy = compile_host(copy_graph(cols), "copy");
      const std::vector<TensorData> copy_in{floats({kBatch, cols}, 3)};
      const double copy_bytes = 8.0 * kBatch * cols;
      for (int t : threads) {
        op->exec->set_num_threads(t);
        copy->exec->set_num_threads(t);
        auto [t_op, t_copy] = interleaved(*op->exec, in, *copy->exec, copy_in, blocks);
        const double gbs = c.bytes / t_op / 1e9, copy_gbs = copy_bytes / t_copy / 1e9, frac = gbs / copy_gbs;
        under += frac < 0.5;
        ++rows;
        char line[320];
        std::snprintf(line, sizeof line, "| %s | %d | %.2f | %.2f | %.2f | %.2f%s |\n", c.name.c_str(), t, t_op * 1e3,
                      gbs, copy_gbs, frac, frac < 0.5 ? " (under 0.5)" : "");
        std::printf("%s", line);
        std::fflush(stdout);
        md << line;
      }
    }
    md << "\n" << under << " of " << rows << " rows under half the copy's bandwidth.\n";
    std::printf("\n%d of %d rows under half the copy's bandwidth.\n", under, rows);
    if (!out_path.empty()) std::ofstream(out_path) << md.str();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "datamove_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
