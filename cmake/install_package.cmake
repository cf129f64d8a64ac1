# `cpack -G DEB` in the build folder: disco_<version>_<arch>.deb holding the whole
# install (cmake/install.cmake, and the Python module's rules) under /usr, for Debian 12.
set(CPACK_PACKAGE_NAME disco)
set(CPACK_PACKAGE_VENDOR "disco")
set(CPACK_PACKAGE_CONTACT "disco maintainers <disco@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "dynamic-shape deep-learning compiler for ONNX models, built on Halide 14")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_PACKAGE_NAME disco)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # disco_0.1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "dynamic-shape deep-learning compiler for ONNX models
 disco compiles ONNX models with symbolic dimensions into Halide kernels once
 and runs them at any shape (disco run), or ahead of time into a static C
 library and header (disco compile). The package holds the disco and
 disco-exec tools, the runtime library and headers, and the CMake package
 (find_package(disco): disco::runtime and disco_add_model).")
# The shared libraries bin/disco and bin/disco-exec need (readelf -d: NEEDED,
# mapped to Debian 12 packages with dpkg -S), and the tools `disco` runs:
# cc (the JIT's shared libraries, AOT drivers), ar and objcopy (AOT archives).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libhalide14-0 (>= 14.0.0), libdnnl2 (>= 2.6), libonnx1 (>= 1.12), libprotobuf32, libvart2, libxir2, libgomp1, libstdc++6, libgcc-s1, libc6 (>= 2.36), gcc, binutils")
# An AOT consumer links its library with -lgomp and, for oneDNN regions, -ldnnl.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libdnnl-dev, cmake (>= 3.20)")
include(CPack)
