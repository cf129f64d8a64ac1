# Compiles include_order.c as C and as C++ in each include order of NAME.h and
# HalideRuntime.h (and with the header's own types), links each with the library
# and the flags its NAME.pc names (Libs, after the archive), and runs it.
# -D CC=... CXX=... HALIDE_INCLUDE=dir-of-HalideRuntime.h LIB_DIR=dir-of-NAME.h LIB=NAME.a SOURCE=... OUT=...
file(MAKE_DIRECTORY "${OUT}")
get_filename_component(name "${LIB}" NAME_WE)
file(STRINGS "${LIB_DIR}/${name}.pc" libs REGEX "^Libs: ")
string(REGEX REPLACE "^Libs: [^ ]+ " "" libs "${libs}")
separate_arguments(libs UNIX_COMMAND "${libs}")
foreach(lang c c++)
  if(lang STREQUAL "c")
    set(compiler "${CC}")
    set(std -std=c99)
  else()
    set(compiler "${CXX}")
    set(std -std=c++11)
  endif()
  foreach(mode HALIDE_FIRST DISCO_FIRST OWN_TYPES)
    set(bin "${OUT}/${mode}_${lang}")
    execute_process(COMMAND "${compiler}" -x ${lang} ${std} -Wall -Wextra -Werror -D${mode} -I "${HALIDE_INCLUDE}"
                            -I "${LIB_DIR}" "${SOURCE}" -x none "${LIB}" ${libs} -o "${bin}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${lang} with ${mode} does not compile:\n${out}${err}")
    endif()
    execute_process(COMMAND "${bin}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${lang} with ${mode} fails (${rc}):\n${out}${err}")
    endif()
    message(STATUS "${lang} ${mode}: ${out}")
  endforeach()
endforeach()
