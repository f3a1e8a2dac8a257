# Shared by cmake/toolchain-*.cmake; expects TEC_CROSS_TRIPLE (the Debian multiarch name).
#
# Debian multiarch puts the target's libraries in /usr/lib/<triple> (libLLVM, libcheck) and
# its headers for every architecture in /usr/include (dlpack, check): so no sysroot and no
# CMAKE_FIND_ROOT_PATH; find_* searches the build machine's prefixes, and CMake adds the
# <triple> library directory because it knows the compiler's CMAKE_LIBRARY_ARCHITECTURE.
# pkg-config must read the target's .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${TEC_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# The build machine's LLVM CMake package (headers, version) ...
if(NOT DEFINED TEC_LLVM_VERSION)
  set(TEC_LLVM_VERSION 14)
endif()
if(NOT DEFINED LLVM_DIR AND EXISTS /usr/lib/llvm-${TEC_LLVM_VERSION}/lib/cmake/llvm)
  set(LLVM_DIR /usr/lib/llvm-${TEC_LLVM_VERSION}/lib/cmake/llvm CACHE PATH "")
endif()
# ... with the target's library (see TEC_LLVM_LIBRARY in CMakeLists.txt).
set(_tec_llvm_so /usr/lib/${TEC_CROSS_TRIPLE}/libLLVM-${TEC_LLVM_VERSION}.so.1)
if(NOT TEC_LLVM_LIBRARY AND EXISTS ${_tec_llvm_so})
  set(TEC_LLVM_LIBRARY ${_tec_llvm_so} CACHE FILEPATH "")
endif()
