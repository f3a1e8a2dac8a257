# cmake/install.cmake — what `cmake --install` puts under the prefix:
#   lib/libtec.so.0.1 (SONAME libtec.so.0.1: the API is not stable before 1.0), libtec.so,
#   lib/libtec_runtime.a (what AOT objects link), lib/libtec_driver.a (the `tec` verbs for
#   generator programs), include/tec/*.h, bin/tec,
#   lib/cmake/tec/tecConfig.cmake (find_package(tec): tec::tec, tec::runtime, tec::driver),
#   lib/pkgconfig/tec.pc (pkg-config --cflags --libs tec),
#   include/tec-dlpack/dlpack/dlpack.h (the DLPack header tec was built with: version
#   TEC_DLPACK_VERSION, so users need no DLPack package), bin/tec-difftest (the differential
#   schedule tester).
# Only the shared library is exported as tec::tec: the static libtec.a links LLVM's imported
# target, which a consumer would have to find first.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The runtime's include path as an installed target sees it (the build tree's otherwise).
set_property(TARGET tec_runtime PROPERTY INTERFACE_INCLUDE_DIRECTORIES
  "$<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>;$<BUILD_INTERFACE:${DLPACK_INCLUDE_DIR}>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tec-dlpack>")
set_target_properties(tec_shared PROPERTIES EXPORT_NAME tec)
set_target_properties(tec_runtime PROPERTIES EXPORT_NAME runtime)

set(_tec_targets tec_shared tec_runtime)
if(TARGET tec_driver)
  set_target_properties(tec_driver PROPERTIES EXPORT_NAME driver)
  list(APPEND _tec_targets tec_driver)
endif()
install(TARGETS ${_tec_targets} EXPORT tecTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tec_cli)
  install(TARGETS tec_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET tec-difftest)
  install(TARGETS tec-difftest RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY include/tec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tec-dlpack/dlpack)
install(EXPORT tecTargets NAMESPACE tec:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tec)

file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tecConfig.cmake.in [=[
# find_package(tec): tec::tec (the shared library), tec::runtime (static: link AOT objects with
# it), tec::driver (static: a generator program's main with the `tec` verbs; link with tec::tec).
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include(${CMAKE_CURRENT_LIST_DIR}/tecTargets.cmake)
check_required_components(tec)
]=])
configure_package_config_file(${CMAKE_CURRENT_BINARY_DIR}/tecConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tecConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tec)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tecConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tecConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/tecConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tec)

# pkg-config: prefix-relative, so the files stay right when the prefix is moved.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tec.pc.in [=[
prefix=${pcfiledir}/../..
exec_prefix=${prefix}
libdir=${prefix}/@CMAKE_INSTALL_LIBDIR@
includedir=${prefix}/@CMAKE_INSTALL_INCLUDEDIR@

Name: tec
Description: tensor expressions and schedules in C, compiled by LLVM
Version: @PROJECT_VERSION@
Cflags: -I${includedir} -I${includedir}/tec-dlpack
Libs: -L${libdir} -Wl,-rpath,${libdir} -ltec
Libs.private: -lpthread -lm
]=])
configure_file(${CMAKE_CURRENT_BINARY_DIR}/tec.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tec.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The example project outside the tree (examples/external), built against tec installed into a
# scratch prefix, with CMake and with pkg-config + make. Not in sanitizer or cross builds (the
# example is compiled without the sanitizer runtime / for the build machine).
if(TEC_BUILD_TESTS AND NOT TEC_SANITIZE AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME install_external COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/examples/external/check_install.sh
    ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/examples/external ${CMAKE_BINARY_DIR}/install-test)
  set_tests_properties(install_external PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
  tec_test_tier(install_external quick portable)
endif()
