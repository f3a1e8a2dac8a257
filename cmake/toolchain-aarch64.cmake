# Cross build for AArch64 Linux with Debian's multiarch (see docs/arm.md):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#   cmake --build build-aarch64 && (cd build-aarch64 && ctest)      # tests run under qemu
# Needs gcc-aarch64-linux-gnu, qemu-user, libllvm14:arm64 and check:arm64; the LLVM headers
# and LLVMConfig.cmake are the build machine's (llvm-14-dev), the library is the arm64 one.
# TEC_RUNTIME_ONLY=ON builds just libtec_runtime.a (no LLVM needed).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TEC_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${TEC_CROSS_TRIPLE}-gcc)
# The multiarch root, not -L /usr/${TEC_CROSS_TRIPLE}: libllvm14:arm64 brings libc6:arm64, and
# its libc.so.6 loaded by the cross toolchain's ld.so (another glibc build) hangs in
# pthread_create under qemu-user. Programs linked by the cross gcc run fine on the newer libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
