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
# The long description; CPack puts the summary above it and indents each line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "disco compiles ONNX models with symbolic dimensions into Halide kernels
once and runs them at any shape (disco run), or ahead of time into a static
C library and header (disco compile). The package holds the disco and
disco-exec tools, the runtime library and its headers, and the CMake
package: find_package(disco) gives disco::runtime and disco_add_model().")
# The shared libraries bin/disco, bin/disco-exec and the Python module need
# (readelf -d's NEEDED mapped to Debian 12 packages with dpkg -S; the versions
# are dpkg-shlibdeps' on the packed files), and the tools disco runs: cc (the
# JIT's shared libraries, AOT drivers), ar and objcopy (AOT archives).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libhalide14-0 (>= 14.0.0), libdnnl2 (>= 2.0), libonnx1 (>= 1.12.0), libprotobuf32 (>= 3.21.12), libvart2 (>= 2.5), libxir2 (>= 2.5), libgomp1 (>= 6), libstdc++6 (>= 11), libgcc-s1 (>= 3.3.1), libc6 (>= 2.34), gcc, binutils")
# The Python module (python/) is built for Debian 12's CPython 3.11 and returns numpy arrays.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
# An AOT consumer links its library with -lgomp and, for oneDNN regions, -ldnnl.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libdnnl-dev, cmake (>= 3.20)")
include(CPack)
