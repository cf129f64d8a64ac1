// The compile options that `disco run` and `disco bench` share (--target,
// --targets, --static, --hint, --calibrate, --compile-jobs, --max-memory,
// --no-cache), parsed from CliArgs into CompileOptions, and their help lines.
#pragma once
#include <set>
#include <string>

#include "driver/compile_model.h"
#include "tools/cli_args.h"

namespace disco {

// The option names (taking a value) and flags this parser reads, for CliArgs.
const std::set<std::string> &compile_option_names();
const std::set<std::string> &compile_flag_names();
// The help lines for them, as `disco run --help` words them.
extern const char *kCompileFlagsHelp;

// Throws UsageError naming the option on a malformed value.
CompileOptions compile_options_from(const CliArgs &args);

}  // namespace disco
