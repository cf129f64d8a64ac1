#!/bin/bash
# install_test: `cmake --install` into a fresh prefix, then a consumer project
# (consumer/) configured against that prefix alone, built and run.
#   install_test.sh CMAKE BUILD_DIR WORK_DIR MODEL.onnx REFS_PREFIX [PYTHON PYTHON_DIR]
# Checks: the install holds the files docs/install.md lists; none of its text
# files names the source tree; find_package(disco) works from the prefix; the
# model is compiled by the prefix's bin/disco; the program's output matches
# PyTorch's (REFS_PREFIX.{1,2}.{input,output}.npy); the installed disco reads the
# runtime glue archives of its install; a wrong version is refused.
# With PYTHON (the interpreter the Python module is built for; empty when it is
# not built) the module is installed too, into PREFIX/PYTHON_DIR: its
# Model.export works from the prefix and reads the glue archives of its install.
set -euo pipefail
cmake=$1 build=$2 work=$3 model=$4 refs=$5 python=${6:-} python_dir=${7:-lib/python3/dist-packages}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" --component disco > "$work/install.log"
if [ -n "$python" ]; then
  "$cmake" --install "$build" --prefix "$prefix" --component python >> "$work/install.log"
  compgen -G "$prefix/$python_dir/disco/_disco*.so" > /dev/null || fail "the install lacks $python_dir/disco/_disco*.so"
  [ -e "$prefix/$python_dir/disco/__init__.py" ] || fail "the install lacks $python_dir/disco/__init__.py"
fi

for f in bin/disco bin/disco-exec lib/cmake/disco/discoConfig.cmake lib/cmake/disco/discoConfigVersion.cmake \
         lib/cmake/disco/discoTargets.cmake lib/cmake/disco/disco.cmake lib/disco/libdisco_runtime.a \
         lib/disco/libdisco_core.a lib/disco/libdisco_openmp_par_for.a include/disco/runtime/npy.h \
         include/disco/HalideRuntime.h; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
# The CMake files and headers must not reach back into the source tree.
if grep -rl -- "$source_dir" "$prefix/lib/cmake" "$prefix/include"; then
  fail "the files above name the source tree $source_dir"
fi
"$prefix/bin/disco" --help > "$work/help.txt" || fail "the installed disco --help failed"
grep -q "^usage: disco" "$work/help.txt" || fail "the installed disco --help printed no usage"

# The consumer: only the prefix on CMake's search path; its own compile cache.
export DISCO_CACHE_DIR=$work/cache
# The build's own compilers: a sanitizer build's archives link only with the
# sanitizer runtimes of the compiler that instrumented them.
compilers=()
for lang in C CXX; do
  c=$(sed -n "s/^CMAKE_${lang}_COMPILER:[A-Z]*=//p" "$build/CMakeCache.txt")
  [ -n "$c" ] && compilers+=("-DCMAKE_${lang}_COMPILER=$c")
done
"$cmake" -S "$here/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release "${compilers[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DDISCO_TEST_MODEL="$model" \
  > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "the consumer did not configure"; }
grep -q "\"$prefix/lib/cmake/disco\"\\|$prefix/lib/cmake/disco" "$work/consumer/CMakeCache.txt" ||
  fail "disco_DIR is not the prefix's: $(grep disco_DIR "$work/consumer/CMakeCache.txt")"
# disco_add_model's command is the prefix's bin/disco, not the build tree's.
grep -q -- "$prefix/bin/disco compile" "$work/consumer/build.ninja" ||
  fail "disco_add_model does not run $prefix/bin/disco: $(grep -o '[^ ]*/disco compile' "$work/consumer/build.ninja")"
"$cmake" --build "$work/consumer" -j2 > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "the consumer did not build"; }
"$work/consumer/app" "$refs.1.input.npy" "$refs.1.output.npy" "$refs.2.input.npy" "$refs.2.output.npy"

# The installed disco reads the runtime glue from its own install, not from the
# build folder: a copy of the install whose glue archive is broken must fail on it.
cp -r "$prefix" "$work/broken"
echo "not an archive" > "$work/broken/lib/disco/libdisco_openmp_par_for.a"
if "$work/broken/bin/disco" compile "$model" -o "$work/broken_out/m" --quiet > "$work/broken.log" 2>&1; then
  fail "disco compile did not read the glue archive of its install ($work/broken/lib/disco)"
fi
grep -q -- "$work/broken/lib/disco/libdisco_openmp_par_for.a" "$work/broken.log" ||
  { cat "$work/broken.log"; fail "disco compile failed, but not on its install's glue archive"; }

# The installed Python module: its Model.export, as `disco compile`, from the
# prefix alone, then from the broken copy, where it must fail on that copy's
# glue archive (in Python /proc/self/exe is the interpreter, not disco).
if [ -z "$python" ]; then
  echo "install_test: the Python module is not built; its installed Model.export is not checked"
else
  export_model() {  # export_model PREFIX OUTDIR
    PYTHONPATH="$1/$python_dir" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 "$python" -c '
import os, sys
import disco
prefix, model, out = sys.argv[1:]
assert os.path.realpath(disco.__file__).startswith(os.path.realpath(prefix) + "/"), "disco imported from " + disco.__file__
disco.compile(model, targets="host").export(out, "m")
' "$1" "$model" "$2"
  }
  export_model "$prefix" "$work/py_out" > "$work/py_export.log" 2>&1 ||
    { cat "$work/py_export.log"; fail "the installed Python module's Model.export failed"; }
  [ -s "$work/py_out/m.a" ] && [ -s "$work/py_out/m.h" ] || fail "Model.export wrote no $work/py_out/m.a and m.h"
  if export_model "$work/broken" "$work/py_broken_out" > "$work/py_broken.log" 2>&1; then
    fail "the installed Python module's Model.export did not read the glue archive of its install ($work/broken/lib/disco)"
  fi
  grep -q -- "$work/broken/lib/disco/libdisco_openmp_par_for.a" "$work/py_broken.log" ||
    { cat "$work/py_broken.log"; fail "Model.export failed, but not on its install's glue archive"; }
fi

# The version file: 0.1 is found above; 99 is refused.
mkdir -p "$work/v99"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(v LANGUAGES NONE)\nfind_package(disco 99 CONFIG REQUIRED)\n' \
  > "$work/v99/CMakeLists.txt"
if "$cmake" -S "$work/v99" -B "$work/v99/build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/v99.log" 2>&1; then
  fail "find_package(disco 99) succeeded"
fi
grep -q "version: 0.1" "$work/v99.log" || { cat "$work/v99.log"; fail "find_package(disco 99) failed for another reason"; }
echo "install_test: ok"
