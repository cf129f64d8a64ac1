# The JIT side of "AOT equals JIT": runs `disco run` (host backend, as the AOT
# library) on every input and writes the outputs to OUT/run<k>/ for the harness.
# -D DISCO=... MODEL=... HARNESS=... OUT=... INPUTS="a.npy|b.npy|..." [TARGETS=onednn,host: the backends, default host]
execute_process(COMMAND "${HARNESS}" names OUTPUT_VARIABLE names RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR names MATCHES "\n" OR names STREQUAL "")
  message(FATAL_ERROR "the harness must name exactly one input (got '${names}', rc ${rc})")
endif()
string(REPLACE "|" ";" inputs "${INPUTS}")
set(args)
foreach(input IN LISTS inputs)
  list(APPEND args --input "${names}=${input}")
endforeach()
file(REMOVE_RECURSE "${OUT}")
if(NOT TARGETS)
  set(TARGETS host)
endif()
execute_process(COMMAND "${DISCO}" run "${MODEL}" --targets ${TARGETS} ${args} --output-dir "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "disco run failed (${rc})")
endif()
