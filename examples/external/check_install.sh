#!/bin/sh
# check_install.sh BUILD_DIR EXAMPLE_DIR SCRATCH — installs the tec of BUILD_DIR into
# SCRATCH/prefix, checks the installed files (SONAME, headers, the `tec` command), and builds
# and runs the example project EXAMPLE_DIR against it twice: with CMake (find_package(tec)) and
# with make + pkg-config, both times with the system's DLPack headers (Debian's libdlpack-dev)
# off the include path: the compiler sees a copy of /usr/include without dlpack/, so the
# DLPack header the package installed (include/tec-dlpack/) is the one used. Run by ctest
# (install_external).
set -eu
build=$1 example=$2 scratch=$3
prefix=$scratch/prefix
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$prefix/lib
[ -d "$prefix/lib64" ] && lib=$prefix/lib64 # GNUInstallDirs on some systems
for f in include/tec/tec.h include/tec/topi.h include/tec-dlpack/dlpack/dlpack.h bin/tec bin/tec-difftest; do
  [ -e "$prefix/$f" ] || { echo "check_install: $prefix/$f missing" >&2; exit 1; }
done
soname=$(readelf -d "$lib/libtec.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libtec.so.0.1 ] || { echo "check_install: SONAME '$soname', expected libtec.so.0.1" >&2; exit 1; }
[ -e "$lib/$soname" ] || { echo "check_install: $lib/$soname missing" >&2; exit 1; }
"$prefix/bin/tec" targets >/dev/null
"$prefix/bin/tec-difftest" --seed 1 --count 3 >/dev/null ||
  { echo "check_install: the installed tec-difftest failed" >&2; exit 1; }

# The system headers without dlpack/: gcc's own directories, then a copy of /usr/include made
# of links to everything in it but dlpack/, in the order gcc searches them.
cc=${CC:-cc}
sys=$scratch/sysinclude
mkdir -p "$sys"
for e in /usr/include/*; do
  [ "$(basename "$e")" = dlpack ] || ln -s "$e" "$sys/$(basename "$e")"
done
multiarch=$($cc -print-multiarch 2>/dev/null || true)
nostd="-nostdinc -isystem $($cc -print-file-name=include) -isystem $($cc -print-file-name=include-fixed)"
[ -z "$multiarch" ] || nostd="$nostd -isystem $sys/$multiarch"
nostd="$nostd -isystem $sys"
printf '#include <dlpack/dlpack.h>\nint main(void) { return 0; }\n' >"$scratch/probe.c"
if $cc $nostd -c "$scratch/probe.c" -o "$scratch/probe.o" 2>/dev/null; then
  echo "check_install: dlpack/dlpack.h is still reachable without the package's copy" >&2; exit 1
fi
$cc $nostd -I"$prefix/include/tec-dlpack" -c "$scratch/probe.c" -o "$scratch/probe.o" ||
  { echo "check_install: the installed DLPack header does not compile" >&2; exit 1; }

echo "check_install: CMake (find_package(tec))"
cmake -S "$example" -B "$scratch/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$nostd" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
"$scratch/cmake-build/external"
"$scratch/cmake-build/my_ops" print scale --shape n=10,s=3 | grep -q 'y\[ramp((i.outer\*4), 1, 4)\] = (x4(3f)\*x\[ramp((i.outer\*4), 1, 4)\])'
echo "check_install: my_ops (a generator on tec::driver) prints its loop program"

echo "check_install: make + pkg-config"
mkdir -p "$scratch/make-build"
PKG_CONFIG_PATH=$lib/pkgconfig make -s -C "$scratch/make-build" -f "$example/Makefile" \
  VPATH="$example" CC="$cc $nostd" external my_ops
"$scratch/make-build/external"
"$scratch/make-build/my_ops" list | grep -q 'scale  *y = s \* x'
if "$scratch/make-build/my_ops" print scale --shape n=0x 2>/dev/null; then
  echo "check_install: my_ops accepted n=0x" >&2; exit 1
fi
echo "check_install: my_ops (pkg-config) lists its operator and refuses a bad --shape"
# the README's one line
$cc $nostd -O2 -std=c11 "$example/main.c" $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs tec) \
  -o "$scratch/one-line"
"$scratch/one-line" >/dev/null
echo "check_install: the README's one compile line builds and runs main.c"
