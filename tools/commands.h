// The verbs of the `disco` CLI. Each returns the process exit code and throws
// disco::Error or UsageError; disco_main.cc prints them as one line.
#pragma once

namespace disco {

int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_bench(int argc, char **argv);

}  // namespace disco
