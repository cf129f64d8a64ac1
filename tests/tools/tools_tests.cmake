# The disco CLI's own pieces (tools/): bench's statistics, the progress bar and
# the kernel count it draws, `disco bench` end to end, and benchmarks/plot_results.py's chart.
disco_test(tools/latency_stats_test disco_latency_stats)
disco_test(tools/progress_display_test disco_progress_display)
disco_test(tools/bench_cli_test disco_model_files)
target_compile_definitions(bench_cli_test PRIVATE DISCO_BINARY="$<TARGET_FILE:disco>")
add_dependencies(bench_cli_test disco)
disco_test(tools/compile_progress_test disco_driver disco_model_files)

# The chart of benchmarks/run.sh, from a small sample table (needs python3-matplotlib and python3-pytest).
find_program(DISCO_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DISCO_PYTHON3)
  add_test(NAME plot_results_test
           COMMAND ${DISCO_PYTHON3} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tools/plot_results_test.py)
  set_tests_properties(plot_results_test PROPERTIES LABELS unit)
endif()
