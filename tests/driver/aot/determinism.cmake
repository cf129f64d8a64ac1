# Two runs of the same `disco compile`, one compiling its kernels one at a time
# and one on two workers, give byte-identical .a, .h and .pc files (and the
# same files beside them, e.g. vitis_ai's lib.r<N>.xmodel), and the command
# reports its stages, the library's size and the kernel count.
# -D DISCO=... MODEL=... OUT=... [TARGETS=onednn,host: the backends, default host]
#    [XMODELS=ON: vitis_ai built with XIR, so lib.r<N>.xmodel files must be there]
foreach(run a b)
  file(REMOVE_RECURSE "${OUT}/${run}")
  if(run STREQUAL "a")
    set(jobs 1)
  else()
    set(jobs 2)
  endif()
  if(NOT TARGETS)
    set(TARGETS host)
  endif()
  execute_process(COMMAND "${DISCO}" compile "${MODEL}" -o "${OUT}/${run}/lib" --compile-jobs ${jobs} --targets ${TARGETS}
                  RESULT_VARIABLE rc
                  OUTPUT_VARIABLE log ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "disco compile failed (${rc}): ${log}${err}")
  endif()
endforeach()
if(TARGETS STREQUAL "host")
  set(stages "parsing " "partitioning for host" "kernel lib_k0 " "compiling [0-9]+ Halide kernels on 2 workers"
             "compiled lib_k1 " "kernel compile .*unique" "LLVM codegen" "linking lib.a"
             "wrote .*lib.a \\([0-9.]+ [KM]B, [0-9]+ kernels\\)")
else()  # library backends: their glue goes into the archive
  set(stages "parsing " "partitioning for .*host" "adding the runtime glue of " "linking lib.a"
             "wrote .*lib.a \\([0-9.]+ [KM]B, [0-9]+ kernels\\)")
endif()
foreach(stage IN LISTS stages)
  if(NOT log MATCHES "${stage}")
    message(FATAL_ERROR "the progress lacks '${stage}':\n${log}")
  endif()
endforeach()
# The files beside the library (Backend::aot_glue's file_params: vitis_ai's lib.r<N>.xmodel), the same in both.
file(GLOB beside_a RELATIVE "${OUT}/a" "${OUT}/a/lib.*")
file(GLOB beside_b RELATIVE "${OUT}/b" "${OUT}/b/lib.*")
list(SORT beside_a)
list(SORT beside_b)
if(NOT beside_a STREQUAL beside_b)
  message(FATAL_ERROR "the two runs wrote different files: ${beside_a} and ${beside_b}")
endif()
if(XMODELS AND NOT beside_a MATCHES "lib\\.r[0-9]+\\.xmodel")
  message(FATAL_ERROR "no lib.r<N>.xmodel beside lib.a: ${beside_a}")
endif()
foreach(file IN LISTS beside_a)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${OUT}/a/${file}" "${OUT}/b/${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${file} differs between two runs of the same command")
  endif()
endforeach()
string(JOIN ", " identical ${beside_a})
message(STATUS "identical: ${identical}")
