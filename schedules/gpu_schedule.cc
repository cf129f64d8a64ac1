#include "schedules/gpu_schedule.h"

#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace disco {

namespace {

using Halide::Expr;
using Halide::Func;
using Halide::LoopLevel;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool all_updates_pure(const Func &f) {
  for (int u = 0; u < f.num_update_definitions(); ++u)
    if (!update_writes_pure_vars(f, u)) return false;
  return true;
}

// Maps a stage's pure loops (innermost first) onto blocks and threads; the
// update's reduction loops stay inside each thread. Returns the innermost
// thread var (where per-element producers are computed). `tail_x` is the
// tail strategy of the innermost split, GuardWithIf unless it is known aligned.
template <class S>
Var tile_stage(S stage, const std::vector<Var> &vars, TailStrategy tail_x = TailStrategy::GuardWithIf) {
  if (vars.empty()) {
    stage.gpu_single_thread();
    return Var();
  }
  const std::string n = vars[0].name();
  Var xo(n + "_bx"), xi(n + "_tx");
  if (vars.size() == 1) {
    stage.split(vars[0], xo, xi, kGpuThreads1D, tail_x).gpu_blocks(xo).gpu_threads(xi);
    return xi;
  }
  Var y = fuse_range(stage, vars, 1, vars.size());
  Var yo(n + "_by"), yi(n + "_ty");
  stage.split(vars[0], xo, xi, kGpuTileX, tail_x).split(y, yo, yi, kGpuTileY, TailStrategy::GuardWithIf);
  // The fused outer tiles, the larger grid dim, go on blockIdx.x (CUDA's y and z stop at 65535).
  stage.reorder(xi, yi, yo, xo).gpu_threads(xi, yi).gpu_blocks(yo, xo);
  return xi;
}

// Pure definition and pure-var updates of a Func at root on the GPU; a Func
// with a scatter-like update stays on the host.
Var tile_func(Func f) {
  if (!all_updates_pure(f)) return Var();
  Var inner = tile_stage(f, f.args());
  for (int u = 0; u < f.num_update_definitions(); ++u) tile_stage(f.update(u), f.args());
  return inner;
}

// A fold's partials computed at `block`, one per thread of the block.
void partials_on_threads(SplitFold fold, const LoopLevel &block) {
  fold.partials.compute_at(block).gpu_threads(fold.lane);
  fold.partials.update(0).gpu_threads(fold.lane);
}

// A fold (fold_extent set; update 0 over an RDom whose first dim is the
// innermost axis) as a block-level reduction: the innermost RVar is split
// across kGpuReduceThreads partials, one per thread; one thread folds them.
// `block` is where the fold is computed; it runs once per block there.
void block_fold(Func f, const LoopLevel &block) {
  partials_on_threads(split_fold(f, kGpuReduceThreads), block);
}

bool is_fold(const Stage &s) {
  return s.fold_extent.defined() && s.f.num_update_definitions() == 1 && update_writes_pure_vars(s.f, 0) &&
         !s.f.rvars(0).empty();
}

class GpuScheduler : public Scheduler {
 public:
  GpuScheduler(LoweredKernel &k, const ShapeStore &store) : Scheduler(k, store) {}

 private:
  ScheduleReport loop() override {
    ScheduleReport rep;
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      Func f = k_.outputs[i];
      const Shape &out = output_shape(i);
      std::vector<ScheduleBranch> branches;
      if (Expr h = hint_condition(); h.defined()) branches.push_back({"hint", h});
      if (Expr d = dense_condition(out, kGpuTileX); d.defined()) branches.push_back({"dense", d});
      for (const auto &b : branches) {
        // In the dense branch the innermost extent is a multiple of the tile: no guard.
        const bool aligned = b.name == "dense" && !out.empty();
        tile_stage(f.specialize(b.condition), f.args(), aligned ? TailStrategy::RoundUp : TailStrategy::GuardWithIf);
      }
      tile_stage(f, f.args());
      if (i == 0) rep.branches = branches;
    }
    rep.template_name = "gpu-loop";
    return rep;
  }

  // As on x86: one output, its stages row reductions over its rows and row values.
  ScheduleReport stitch(int row_dims) override {
    ScheduleReport rep;
    Func y = k_.outputs[0];
    std::vector<Var> args = y.args();
    Var row = fuse_range(y, args, 0, row_dims);
    Var blk = fuse_range(y, args, row_dims, args.size());
    Var ro(row.name() + "_o"), ri(row.name() + "_t");
    y.split(row, ro, ri, kGpuReduceThreads, TailStrategy::GuardWithIf).reorder(ri, ro, blk);
    y.gpu_blocks(blk).gpu_threads(ri);
    const LoopLevel at_block(y, blk);
    for (const auto &s : k_.stages) {
      if (s.kind == StageKind::RowValues) continue;  // inlined: recomputed where read, no row-sized storage
      Func f = s.f;
      f.compute_at(at_block);
      if (is_fold(s)) block_fold(f, at_block);
    }
    if (Expr h = hint_condition(); h.defined()) {
      rep.branches.push_back({"hint", h});
      y.specialize(h);
    }
    rep.template_name = "gpu-stitch";
    return rep;
  }

  // Input, dot and opaque kernels: stages at root, each its own GPU loop.
  ScheduleReport generic(GroupKind kind) override {
    ScheduleReport rep;
    const bool dot = kind == GroupKind::Dot;
    // The dot product of a dot kernel with an epilogue: per output element, in the thread that writes it.
    int product = -1;
    Func out0 = k_.outputs.empty() ? Func() : k_.outputs[0];
    if (dot && k_.outputs.size() == 1 && out0.outputs() == 1 && !out0.has_update_definition() &&
        out0.dimensions() > 0) {
      for (size_t i = 0; i < k_.stages.size(); ++i) {
        const Stage &s = k_.stages[i];
        if (s.kind == StageKind::Reduction && s.rank == out0.dimensions() && all_updates_pure(s.f))
          product = product < 0 ? static_cast<int>(i) : -2;  // exactly one
      }
    }
    for (size_t i = 0; i < k_.stages.size(); ++i) {
      const Stage &s = k_.stages[i];
      Func f = s.f;
      if (s.kind == StageKind::RowValues || s.kind == StageKind::DotOperand || s.kind == StageKind::ConvInput ||
          static_cast<int>(i) == product)
        continue;
      f.compute_root();
      if (is_fold(s) && s.kind == StageKind::RowReduction) {
        root_block_fold(f);
        continue;
      }
      tile_func(f);
    }
    bool shared = false;
    Func inner_product = product >= 0 ? k_.stages[product].f : Func();
    if (dot && product == -1 && k_.outputs.size() == 1 && out0.dimensions() > 0) {
      // No Reduction stage: the product is found among the kernel's tensors (one whose update is pure).
      std::map<std::string, Func> found;  // by name: views may share a Func
      for (const auto &[vid, t] : k_.tensors)
        if (t.f.defined() && t.f.name() != out0.name() && t.f.num_update_definitions() == 1 &&
            t.f.dimensions() == out0.dimensions() && all_updates_pure(t.f))
          found[t.f.name()] = t.f;
      if (found.size() == 1) inner_product = found.begin()->second;
    }
    for (size_t o = 0; o < k_.outputs.size(); ++o) {
      if (o == 0 && inner_product.defined() && shared_dot(out0, inner_product)) {
        shared = true;
        continue;
      }
      Var inner = tile_func(k_.outputs[o]);
      if (o == 0 && product >= 0) {
        Func p = k_.stages[product].f;
        p.compute_at(out0, inner);
      }
    }
    rep.template_name = dot ? (shared ? "gpu-dot-shared" : "gpu-dot") : "gpu-generic";
    return rep;
  }

  // The output tiles of a dot on blocks and threads: each block a
  // kGpuTileX x kGpuTileY tile of (n, m), its threads one element each.
  // Batch dims (args 2 and up) are fused with m's tiles into one block var,
  // on blockIdx.x (CUDA's y and z stop at 65535); n's tiles go on blockIdx.y.
  // Returns the innermost block var (the block's loop level).
  static Var tile_dot(Func out) {
    const std::vector<Var> a = out.args();
    Var no(a[0].name() + "_bx"), ni(a[0].name() + "_tx");
    Var mo(a[1].name() + "_by"), mi(a[1].name() + "_ty");
    out.split(a[0], no, ni, kGpuTileX, TailStrategy::GuardWithIf)
        .split(a[1], mo, mi, kGpuTileY, TailStrategy::GuardWithIf);
    if (a.size() == 2) {
      out.reorder(ni, mi, no, mo).gpu_threads(ni, mi).gpu_blocks(no, mo);
      return no;
    }
    Var batch = fuse_range(out, a, 2, a.size());
    Var mb(mo.name() + "_" + batch.name());
    out.fuse(mo, batch, mb).reorder(ni, mi, mb, no).gpu_threads(ni, mi).gpu_blocks(mb, no);
    return mb;
  }

  // A dot product over one reduction axis k (MatMul, Gemm; batched MatMul
  // too) with tiles in shared memory: each block computes a 32x8 tile of the
  // output (of one batch), its threads one element each; k advances by
  // kGpuTileX, and each operand read as a tile (staged_operands: weights and
  // activations) is staged per k step into shared memory
  // by the block's threads. Returns false, scheduling nothing, when it does
  // not apply. (A Halide 14 PartitionLoops failure was once noted here with
  // batch dims; it does not reproduce with the batch fused into the block var.)
  bool shared_dot(Func out, Func p) {
    if (out.dimensions() < 2 || p.dimensions() != out.dimensions() || p.rvars(0).size() != 1 ||
        p.num_update_definitions() != 1 || p.outputs() != 1)
      return false;
    // Both operands as tiles, or the template is not this one (a
    // matrix-vector product, or reads whose footprint need not be a tile).
    std::vector<Operand> staged = staged_operands(p);
    if (staged.size() != 2) return false;
    p.compute_at(out, tile_dot(out));  // the block's tile, in shared memory
    std::vector<Var> pv = p.args();
    p.gpu_threads(pv[0], pv[1]);
    RVar k = p.rvars(0)[0];
    RVar ko(p.name() + "_ko"), ki(p.name() + "_ki");
    p.update(0).split(k, ko, ki, kGpuTileX, TailStrategy::GuardWithIf).reorder(ki, pv[0], pv[1], ko);
    p.update(0).gpu_threads(pv[0], pv[1]);
    for (auto &o : staged) stage_tile(o.source.in(o.reader), LoopLevel(p, ko));
    return true;
  }

  // An operand and the Func whose definition reads it: the product itself,
  // or the DotOperand stage it reads its right operand through (inlined
  // into the product, so the tile's loop level is the product's). The
  // operand is a kernel input, or a Func the product reads it through (a
  // Reshape or Transpose view): staged as a wrapper in that Func's own
  // coordinates, whose footprint is the tile however the view indexes its input.
  struct Operand {
    Func source;  // a kernel input's Func, or the view read
    Func reader;
  };

  // The operands to stage: every kernel input of rank 2 and up, and every
  // other Func of the kernel, that the product reads directly or through
  // its DotOperand stage with plain index arithmetic (no division, modulo
  // or select, whose footprint need not be a tile). Attention's Q.K^T reads
  // Q and K through Reshape and Transpose views: staged as kernel inputs,
  // their divided indexes asked PoCL for too large a work group; the views'
  // Funcs are read with plain indexes, and they are staged instead.
  std::vector<Operand> staged_operands(Func p) {
    std::vector<std::pair<std::string, Func>> readers;  // a definition's text, its Func
    std::ostringstream update;
    update << p.update_value(0);
    readers.emplace_back(update.str(), p);
    std::set<std::string> skip{p.name()};
    for (const auto &s : k_.stages) {
      skip.insert(s.f.name());
      if (s.kind == StageKind::DotOperand) {
        std::ostringstream value;
        value << s.f.value();
        readers.emplace_back(value.str(), s.f);
      }
    }
    for (const Func &o : k_.outputs) skip.insert(o.name());
    std::vector<Operand> staged;
    auto stage = [&](const std::string &name, Operand o) {
      for (const auto &[text, f] : readers)
        if (calls(text, name)) {
          o.reader = f;
          if (plain_reads(text, name)) staged.push_back(o);
          return;
        }
    };
    for (const Halide::ImageParam &param : k_.input_params) {
      const Func f(param);  // "in_B_im", or "in_B_im$1" in a process's later compiles
      skip.insert(f.name());  // an input's tensor may be its param's Func
      if (f.dimensions() >= 2) stage(f.name(), {f, Func()});
    }
    for (const auto &[vid, t] : k_.tensors) {
      const Func &f = t.f;
      // skip.insert: views may share a Func, staged once.
      if (!f.defined() || f.dimensions() < 2 || f.has_update_definition() || !skip.insert(f.name()).second) continue;
      stage(f.name(), {f, Func()});
    }
    return staged;
  }

  // True when every call of `name` in the text has arguments with no division, modulo or select.
  static bool plain_reads(const std::string &text, const std::string &name) {
    for (size_t at = text.find(name + "("); at != std::string::npos; at = text.find(name + "(", at + 1)) {
      int depth = 0;
      for (size_t i = at + name.size(); i < text.size(); ++i) {
        const char c = text[i];
        if (c == '(') ++depth;
        if (c == ')' && --depth == 0) break;
        if (c == '/' || c == '%' || text.compare(i, 7, "select(") == 0) return false;
      }
    }
    return true;
  }

  // An operand tile loaded by the block's threads at `at` (one k step).
  static void stage_tile(Func tile, const LoopLevel &at) {
    std::vector<Var> tv = tile.args();
    Var t1o(tv[1].name() + "_o"), t1i(tv[1].name() + "_i");
    tile.compute_at(at).split(tv[1], t1o, t1i, kGpuTileY, TailStrategy::GuardWithIf);
    tile.reorder(tv[0], t1i, t1o).gpu_threads(tv[0], t1i);
  }

  // True when the expression text calls the named Func or buffer.
  static bool calls(const std::string &text, const std::string &name) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      const size_t end = at + name.size();
      const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
      if (starts && end < text.size() && text[end] == '(') return true;
    }
    return false;
  }

  // A row fold at root: one block per kept row, its partials on the block's threads.
  void root_block_fold(Func f) {
    std::vector<Var> kept = f.args();
    tile_stage(f, kept);
    // rfactor first: it replaces the update, whose loops are then the kept vars and the partials.
    SplitFold fold = split_fold(f, kGpuReduceThreads);
    if (kept.empty()) {
      // One result: the partials on one block, folded by one thread.
      fold.partials.compute_root();
      tile_stage(fold.partials, {fold.lane});
      tile_stage(fold.partials.update(0), {fold.lane});
      f.update(0).gpu_single_thread();
      return;
    }
    Var blk = fuse_range(f.update(0), kept, 0, kept.size());
    f.update(0).gpu_blocks(blk);
    partials_on_threads(fold, LoopLevel(f, blk));
  }
};

}  // namespace

ScheduleReport schedule_gpu(LoweredKernel &k, GroupKind kind, const ShapeStore &store) {
  return GpuScheduler(k, store).run(kind);
}

}  // namespace disco
