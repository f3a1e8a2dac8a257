# Cross build for ARMv7-A hard-float Linux (NEON): the runtime, so AOT objects link.
#   cmake -S . -B build-armv7 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-armv7.cmake -DTEC_RUNTIME_ONLY=ON
# Needs gcc-arm-linux-gnueabihf (and qemu-user to run the result). The whole compiler would
# also need libllvm14:armhf and check:armhf, which CI does not install.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(TEC_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_C_COMPILER ${TEC_CROSS_TRIPLE}-gcc)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/${TEC_CROSS_TRIPLE})
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
