// The kinds of int8 op a vitis_ai unit becomes. Its own header so that the
// runtime side (region_program.h, disco_vitis_ai_runtime) names them without
// the rules and the backend interface behind them.
#pragma once

namespace disco::vitis_ai {

enum class UnitKind { Conv, Gemm, MaxPool, AvgPool, GlobalAvgPool, Add, Concat, Resize, Flatten };
const char *unit_kind_name(UnitKind k);

}  // namespace disco::vitis_ai
