#include "schedules/schedule_parts.h"

#include <sstream>

namespace disco {

bool update_writes_pure_vars(const Halide::Func &f, int u) {
  auto lhs = f.update_args(u);
  auto pure = f.args();
  if (lhs.size() != pure.size()) return false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    std::ostringstream os;
    os << lhs[i];
    if (os.str() != pure[i].name()) return false;
  }
  return true;
}

int stitch_row_dims(const LoweredKernel &k) {
  if (k.outputs.size() != 1) return 0;
  const Halide::Func &y = k.outputs[0];
  if (y.outputs() != 1 || y.has_update_definition()) return 0;
  const int rank = y.dimensions();
  int kept = -1;
  for (const auto &s : k.stages) {
    if (s.kind == StageKind::RowValues && s.rank == rank) continue;
    if (s.kind != StageKind::RowReduction || (kept >= 0 && s.rank != kept)) return 0;
    kept = s.rank;
  }
  if (kept < 1 || kept >= rank) return 0;
  return rank - kept;
}

}  // namespace disco
