# A C program compiled and linked with nothing but what `pkg-config --cflags
# --libs NAME` prints (NAME.pc beside NAME.a), run against PyTorch's output. The
# library's three files are first copied to a fresh folder: NAME.pc must name
# no path of the folder where it was made.
# -D PKG_CONFIG=... CC=... LIB_DIR=... NAME=... SOURCE=... IN=... REF=... OUT=...
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/moved")
foreach(ext a h pc)
  file(COPY "${LIB_DIR}/${NAME}.${ext}" DESTINATION "${OUT}/moved")
endforeach()
file(READ "${OUT}/moved/${NAME}.pc" pc)
string(FIND "${pc}" "${LIB_DIR}" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${NAME}.pc names its build folder ${LIB_DIR}:\n${pc}")
endif()
set(ENV{PKG_CONFIG_PATH} "${OUT}/moved")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs "${NAME}" RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ${NAME} failed (${rc}): ${err}")
endif()
message(STATUS "pkg-config --cflags --libs ${NAME}: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND "${CC}" -DPC_NAME=${NAME} "-DPC_HEADER=\"${NAME}.h\"" "${SOURCE}" ${flags} -o "${OUT}/prog" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CC} ${SOURCE} ${flags} failed:\n${out}${err}")
endif()
execute_process(COMMAND "${OUT}/prog" "${IN}" "${REF}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program linked through pkg-config fails (${rc}):\n${out}${err}")
endif()
message(STATUS "${out}")
