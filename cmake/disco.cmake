# disco_add_model(NAME MODEL file.onnx [TARGET target] [BACKENDS backend...] [HINTS sym=value...]
#                 [OUTPUT_DIR dir])
#
# Compiles an ONNX model ahead of time at build time (`disco compile`) and gives a static
# library target NAME: link it and include "NAME.h" (see driver/aot/README.md for the API).
# NAME must be a C identifier. TARGET is host (default) or a Halide target string such as
# x86-64-linux-avx2; BACKENDS lists the backends in priority order (host, onednn, example;
# default host), and the library links what their runtime glue needs (host on a CPU target: gomp;
# oneDNN: dnnl, gomp, stdc++; cuBLAS: gomp, stdc++ (CUDA and cuBLAS are loaded at run time);
# vitis_ai: VART and XIR where installed, stdc++; example: stdc++), as NAME.pc says. The files go to OUTPUT_DIR (default
# ${CMAKE_CURRENT_BINARY_DIR}/disco_models/NAME).
#
# The generator is the `disco` target when this project builds it, else DISCO_EXECUTABLE when
# set, else the installed `disco::disco` when find_package(disco) found an install (its
# discoConfig.cmake includes this file), else `disco` found on PATH.
function(disco_add_model name)
  cmake_parse_arguments(ARG "" "MODEL;TARGET;OUTPUT_DIR" "BACKENDS;HINTS" ${ARGN})
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "disco_add_model(${name}): MODEL file.onnx is required")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "disco_add_model(${name}): NAME must be a C identifier (it prefixes every symbol)")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE)
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/disco_models/${name}")
  endif()
  if(TARGET disco)
    set(generator "$<TARGET_FILE:disco>")
    set(generator_dep disco)
  elseif(NOT DISCO_EXECUTABLE AND TARGET disco::disco)
    # The install's own bin/disco, which reads the runtime glue from the same install.
    set(generator "$<TARGET_FILE:disco::disco>")
    set(generator_dep "$<TARGET_FILE:disco::disco>")
  else()
    if(NOT DISCO_EXECUTABLE)
      find_program(DISCO_EXECUTABLE disco REQUIRED)
    endif()
    set(generator "${DISCO_EXECUTABLE}")
    set(generator_dep "${DISCO_EXECUTABLE}")
  endif()
  set(args compile "${model}" -o "${ARG_OUTPUT_DIR}/${name}")
  if(ARG_TARGET)
    list(APPEND args --target "${ARG_TARGET}")
  endif()
  if(ARG_BACKENDS)
    string(JOIN "," backends ${ARG_BACKENDS})
    list(APPEND args --targets "${backends}")
  endif()
  foreach(hint IN LISTS ARG_HINTS)
    list(APPEND args --hint "${hint}")
  endforeach()
  # What the backends' runtime glue in NAME.a links (Backend::aot_glue's link_flags).
  set(glue_libs "")
  if("onednn" IN_LIST ARG_BACKENDS)
    list(APPEND glue_libs dnnl gomp)
  endif()
  if("vitis_ai" IN_LIST ARG_BACKENDS)
    find_library(DISCO_VART_RUNNER_LIBRARY vart-runner)  # built with VART where it is installed
    if(DISCO_VART_RUNNER_LIBRARY)
      list(APPEND glue_libs vart-runner xir unilog glog)
    endif()
  endif()
  if("cublas" IN_LIST ARG_BACKENDS)
    list(APPEND glue_libs gomp)  # the glue dlopens CUDA and cuBLAS
  endif()
  if(glue_libs OR "example" IN_LIST ARG_BACKENDS OR "vitis_ai" IN_LIST ARG_BACKENDS)
    list(APPEND glue_libs stdc++)
  endif()
  # The host's kernels run their parallel loops on OpenMP on CPU targets.
  if(NOT ARG_TARGET MATCHES "cuda|opencl")
    list(APPEND glue_libs gomp)
    list(REMOVE_DUPLICATES glue_libs)
  endif()
  if(glue_libs)
    string(APPEND glue_libs ";")
  endif()
  set(lib "${ARG_OUTPUT_DIR}/${name}.a")
  set(header "${ARG_OUTPUT_DIR}/${name}.h")
  set(pc "${ARG_OUTPUT_DIR}/${name}.pc")  # the same link flags for builds that use pkg-config
  add_custom_command(OUTPUT "${lib}" "${header}" "${pc}"
    COMMAND "${generator}" ${args}
    DEPENDS "${model}" ${generator_dep}
    COMMENT "disco compile ${name} (${ARG_MODEL})"
    VERBATIM)
  add_custom_target(${name}_disco_compile DEPENDS "${lib}" "${header}" "${pc}")
  # The include directory must exist when CMake generates, before the first build.
  file(MAKE_DIRECTORY "${ARG_OUTPUT_DIR}")
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${ARG_OUTPUT_DIR}"
    INTERFACE_LINK_LIBRARIES "${glue_libs}pthread;${CMAKE_DL_LIBS};m")  # NAME.pc's Libs (driver/aot/link_flags.h)
  add_dependencies(${name} ${name}_disco_compile)
endfunction()
