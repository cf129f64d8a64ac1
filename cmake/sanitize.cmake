# Sanitizer and fuzzing options (issue #23).
#   -DDISCO_SANITIZE=address,undefined   (or thread, or any -fsanitize= list)
#     adds -fsanitize=<list> -fno-omit-frame-pointer to every compile and link,
#     and makes UndefinedBehaviorSanitizer findings fatal, so a test or fuzz run
#     that hits one fails instead of printing and going on.
#   -DDISCO_FUZZ=ON   (clang only) builds the libFuzzer targets of fuzz/.
# Prebuilt libraries (Halide, ONNX, protobuf, oneDNN) are not instrumented:
# AddressSanitizer still catches disco's own bad accesses, including those
# made through pointers into their memory.
set(DISCO_SANITIZE "" CACHE STRING "Sanitizers to build with, as for -fsanitize= (e.g. address,undefined or thread)")
option(DISCO_FUZZ "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

if(DISCO_SANITIZE)
  set(_disco_san_flags -fsanitize=${DISCO_SANITIZE} -fno-omit-frame-pointer)
  if(DISCO_SANITIZE MATCHES "undefined")
    list(APPEND _disco_san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_disco_san_flags})
  add_link_options(${_disco_san_flags})
  message(STATUS "disco: building with -fsanitize=${DISCO_SANITIZE}")
endif()

if(DISCO_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "DISCO_FUZZ needs clang (libFuzzer), e.g. -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14")
endif()
