# `cmake --install BUILD --prefix P` (issue #25): the tools, the runtime library
# and its headers, and the CMake package that gives disco::runtime and
# disco_add_model(). Everything here is component `disco`; cmake/install_package.cmake
# packs the whole install (cpack -G DEB). Layout: docs/install.md.
include(${CMAKE_CURRENT_LIST_DIR}/install_dirs.cmake)
include(CMakePackageConfigHelpers)

# bin/disco and bin/disco-exec side by side: the runtime finds disco-exec beside
# the running executable (runtime/child_executor.cc).
set_target_properties(disco PROPERTIES EXPORT_NAME disco)
set_target_properties(disco-exec PROPERTIES EXPORT_NAME disco-exec)

# disco::runtime: the runtime that runs plans (runtime/), with the IR types it
# needs (disco::core) and the kernels' OpenMP loops (disco::openmp_par_for).
# Headers go to include/disco as in the source tree: #include "runtime/npy.h".
set_target_properties(disco_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(disco_core PROPERTIES EXPORT_NAME core)
set_target_properties(disco_openmp_par_for PROPERTIES EXPORT_NAME openmp_par_for)

# A sanitizer build's archives are instrumented: whoever links them needs the
# sanitizer runtimes, so the installed targets carry the link flags (the consumer
# must use the same compiler; tests/install/install_test.sh passes it).
if(DISCO_SANITIZE)
  target_link_options(disco_core INTERFACE $<INSTALL_INTERFACE:${_disco_san_flags}>)
endif()

install(TARGETS disco disco-exec EXPORT discoTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT disco)
install(TARGETS disco_runtime disco_core disco_openmp_par_for EXPORT discoTargets
  ARCHIVE DESTINATION ${DISCO_INSTALL_ARCHIVE_DIR} COMPONENT disco
  INCLUDES DESTINATION ${DISCO_INSTALL_INCLUDE_DIR})

# The backends' runtime glue that `disco compile` puts into AOT libraries beside
# the archives above (Backend::aot_glue; an installed disco reads them from here:
# driver/aot/aot_compile.cc's glue_archive_path). Not exported: no consumer links them.
foreach(glue disco_onednn_runtime disco_example_runtime disco_cublas_runtime disco_vitis_ai_runtime)
  if(TARGET ${glue})
    install(TARGETS ${glue} ARCHIVE DESTINATION ${DISCO_INSTALL_ARCHIVE_DIR} COMPONENT disco)
  endif()
endforeach()

# The runtime's public headers and the frontend headers they (and disco::core's) include.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ DESTINATION ${DISCO_INSTALL_INCLUDE_DIR}/runtime
  COMPONENT disco FILES_MATCHING PATTERN "*.h")
set(disco_core_headers aligned_bytes attributes checked_size dim dtype errors graph random_tensor tensor_compare tensor_data)
list(TRANSFORM disco_core_headers REPLACE "^(.+)$" "${PROJECT_SOURCE_DIR}/frontend/\\1.h")
install(FILES ${disco_core_headers} DESTINATION ${DISCO_INSTALL_INCLUDE_DIR}/frontend COMPONENT disco)
# Halide's runtime header (the buffer ABI of runtime/openmp_par_for.h and executor.h; MIT
# licensed, self-contained), so that the package needs no Halide development files.
get_target_property(disco_halide_includes Halide::Halide INTERFACE_INCLUDE_DIRECTORIES)
find_file(DISCO_HALIDE_RUNTIME_H HalideRuntime.h PATHS ${disco_halide_includes} NO_DEFAULT_PATH REQUIRED)
install(FILES ${DISCO_HALIDE_RUNTIME_H} DESTINATION ${DISCO_INSTALL_INCLUDE_DIR} COMPONENT disco)

# lib/cmake/disco: discoConfig.cmake, its version file, the exported targets and disco_add_model.
install(EXPORT discoTargets NAMESPACE disco:: DESTINATION ${DISCO_INSTALL_CMAKE_DIR} COMPONENT disco)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/discoConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/discoConfig.cmake INSTALL_DESTINATION ${DISCO_INSTALL_CMAKE_DIR})
# 0.x: a new minor version may change the AOT API, so only the same minor version matches.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/discoConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/discoConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/discoConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/disco.cmake DESTINATION ${DISCO_INSTALL_CMAKE_DIR} COMPONENT disco)

include(${CMAKE_CURRENT_LIST_DIR}/install_package.cmake)
