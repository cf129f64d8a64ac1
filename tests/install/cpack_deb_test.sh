#!/bin/bash
# cpack_deb_test: `cpack -G DEB` of the build folder into a fresh folder, then
# the package's contents and fields read back with dpkg-deb.
#   cpack_deb_test.sh CPACK BUILD_DIR WORK_DIR BINDIR ARCHIVE_DIR CMAKE_DIR [PYTHON_DIR]
# BINDIR, ARCHIVE_DIR, CMAKE_DIR and PYTHON_DIR are the install's folders
# relative to the prefix (cmake/install_dirs.cmake); PYTHON_DIR is empty when
# the Python module is not built. Checks: the package holds bin/disco, the
# runtime library, the CMake config and, when built, the Python module, all
# under /usr; its Depends field is not empty. Exits 77 (skipped) without dpkg-deb.
set -euo pipefail
cpack=$1 build=$(cd "$2" && pwd) work=$3 bindir=$4 archive_dir=$5 cmake_dir=$6 python_dir=${7:-}
fail() { echo "cpack_deb_test: FAIL: $*" >&2; exit 1; }

if ! command -v dpkg-deb > /dev/null; then
  echo "cpack_deb_test: skipped: dpkg-deb not found (Debian's dpkg reads the package back)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
# -B: the package and CPack's staging folder go to WORK_DIR, not the build folder.
(cd "$work" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work") > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$work"/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single .deb in $work: ${debs[*]}"
deb=${debs[0]}

dpkg-deb -c "$deb" | awk '{print $NF}' > "$work/contents.txt"
expect=("$bindir/disco" "$archive_dir/libdisco_runtime.a" "$cmake_dir/discoConfig.cmake"
        "$cmake_dir/discoConfigVersion.cmake")
if [ -n "$python_dir" ]; then
  expect+=("$python_dir/disco/__init__.py")
  grep -q "^\./usr/$python_dir/disco/_disco.*\.so$" "$work/contents.txt" ||
    fail "$deb lacks /usr/$python_dir/disco/_disco*.so"
else
  echo "cpack_deb_test: the Python module is not built; the package is not checked for it"
fi
for f in "${expect[@]}"; do
  grep -qxF "./usr/$f" "$work/contents.txt" || fail "$deb lacks /usr/$f"
done

depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || fail "$deb has an empty Depends field"
echo "cpack_deb_test: ok: $(basename "$deb"), $(wc -l < "$work/contents.txt") entries, Depends: $depends"
