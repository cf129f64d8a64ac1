# Where `cmake --install` puts disco's files, in one place: cmake/install.cmake
# installs there, and driver/aot/ compiles the archives' folder, relative to the
# executables', into disco (an installed `disco compile` reads the runtime glue
# archives from its own install, not from the build that made it).
include(GNUInstallDirs)

# Every static archive: those disco::runtime exports and the backends' runtime
# glue that `disco compile` puts into AOT libraries (Backend::aot_glue).
set(DISCO_INSTALL_ARCHIVE_DIR "${CMAKE_INSTALL_LIBDIR}/disco")
set(DISCO_INSTALL_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}/disco")
set(DISCO_INSTALL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/disco")
# The archives' folder as seen from bin/ (both are relative to the prefix, so the
# install can move: `cmake --install --prefix`, a .deb's /usr).
file(RELATIVE_PATH DISCO_ARCHIVE_DIR_FROM_BINDIR "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${DISCO_INSTALL_ARCHIVE_DIR}")
