# The .xmodel files `disco compile --targets vitis_ai,host` writes beside
# NAME.a (NAME.r<N>.xmodel, one per vitis_ai region) are XIR graphs that xir
# reads back: `xir dump_txt` (libxir-utils) deserializes each in a process of
# its own (XIR aborts on an invalid graph), and together they hold the
# model's CONVS convolutions as conv2d ops with fix positions.
# -D XIR=... LIB_DIR=... NAME=... OUT=... CONVS=<the ONNX model's Conv count>
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
file(GLOB xmodels "${LIB_DIR}/${NAME}.r*.xmodel")
if(NOT xmodels)
  message(FATAL_ERROR "no ${NAME}.r<N>.xmodel beside ${LIB_DIR}/${NAME}.a")
endif()
set(convs 0)
foreach(xmodel IN LISTS xmodels)
  get_filename_component(stem "${xmodel}" NAME_WE)
  get_filename_component(file "${xmodel}" NAME)
  if(NOT file MATCHES "^${NAME}\\.r[0-9]+\\.xmodel$")
    message(FATAL_ERROR "unexpected file name ${file}")
  endif()
  execute_process(COMMAND "${XIR}" dump_txt "${xmodel}" "${OUT}/${file}.txt" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xir dump_txt ${xmodel} failed (${rc}): ${out}${err}")
  endif()
  file(READ "${OUT}/${file}.txt" txt)
  foreach(needle "op_type: \"data\"" "op_type: \"fix\"" "key: \"fix_point\"" "DPU_ROUND")
    string(FIND "${txt}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${file} as xir reads it lacks ${needle}")
    endif()
  endforeach()
  string(REGEX MATCHALL "op_type: \"conv2d\"" found "${txt}")
  list(LENGTH found n)
  math(EXPR convs "${convs} + ${n}")
  message(STATUS "${file}: read back by xir, ${n} conv2d ops")
endforeach()
if(NOT convs EQUAL CONVS)
  message(FATAL_ERROR "the .xmodel files hold ${convs} conv2d ops, the model has ${CONVS} Conv nodes")
endif()
