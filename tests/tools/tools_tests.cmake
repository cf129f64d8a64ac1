# The disco CLI's own pieces (tools/): bench's statistics, the progress bar,
# `disco bench` end to end.
disco_test(tools/latency_stats_test disco_latency_stats)
disco_test(tools/progress_display_test disco_progress_display)
disco_test(tools/bench_cli_test disco_model_files)
target_compile_definitions(bench_cli_test PRIVATE DISCO_BINARY="$<TARGET_FILE:disco>")
add_dependencies(bench_cli_test disco)

