# Where `cmake --install` puts disco's files, in one place: cmake/install.cmake
# and python/ install there, and driver/aot/ compiles the archives' folder,
# relative to the executables' and to the Python module's, into disco (an
# installed `disco compile` or Model.export reads the runtime glue archives
# from its own install, not from the build that made it).
include(GNUInstallDirs)

# Every static archive: those disco::runtime exports and the backends' runtime
# glue that `disco compile` puts into AOT libraries (Backend::aot_glue).
set(DISCO_INSTALL_ARCHIVE_DIR "${CMAKE_INSTALL_LIBDIR}/disco")
set(DISCO_INSTALL_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}/disco")
set(DISCO_INSTALL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/disco")
# The archives' folder as seen from bin/ (both are relative to the prefix, so the
# install can move: `cmake --install --prefix`, a .deb's /usr).
file(RELATIVE_PATH DISCO_ARCHIVE_DIR_FROM_BINDIR "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${DISCO_INSTALL_ARCHIVE_DIR}")
# Debian's layout for the Python package disco. Python looks in
# <prefix>/lib/python3/dist-packages, never in the multiarch lib/x86_64-linux-gnu
# that CMAKE_INSTALL_LIBDIR becomes under /usr.
set(DISCO_PYTHON_INSTALL_DIR lib/python3/dist-packages CACHE STRING
    "Where `cmake --install` puts the Python package disco, relative to the prefix")
# The archives' folder as seen from the package's folder, which holds the module.
file(RELATIVE_PATH DISCO_ARCHIVE_DIR_FROM_PYTHON_MODULE_DIR "/prefix/${DISCO_PYTHON_INSTALL_DIR}/disco"
     "/prefix/${DISCO_INSTALL_ARCHIVE_DIR}")
