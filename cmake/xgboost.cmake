# cmake/xgboost.cmake — XGBoost for the tuner's cost model (tune/xgb_model.c), found on purpose.
#
# Host builds look for Debian's libxgboost-dev (xgboost/c_api.h and libxgboost.so) unless
# TEC_XGBOOST=OFF; found, tune/xgb_model.c is compiled with TEC_HAVE_XGBOOST and libtec links
# it. Not found: configuring says so and tune_model_new refuses at run time with an error
# naming the package (features and annealing work either way). Cross builds (CMAKE_CROSSCOMPILING:
# the aarch64 build run under qemu) default to OFF: the target's libxgboost-dev:arm64 would be
# one more multiarch package for a model that runs on the build machine anyway.
if(CMAKE_CROSSCOMPILING)
  set(_tec_xgb_default OFF)
else()
  set(_tec_xgb_default ON)
endif()
option(TEC_XGBOOST "Build the tuner's cost model with XGBoost (libxgboost-dev)" ${_tec_xgb_default})
set(TEC_HAVE_XGBOOST OFF)
if(TEC_XGBOOST)
  find_path(XGBOOST_INCLUDE_DIR xgboost/c_api.h)
  find_library(XGBOOST_LIBRARY xgboost)
  if(XGBOOST_INCLUDE_DIR AND XGBOOST_LIBRARY)
    set(TEC_HAVE_XGBOOST ON)
    message(STATUS "tec: cost model with XGBoost ${XGBOOST_LIBRARY}")
    set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/tune/xgb_model.c APPEND PROPERTY
                 COMPILE_DEFINITIONS TEC_HAVE_XGBOOST=1)
    set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/tune/xgb_model.c APPEND PROPERTY
                 INCLUDE_DIRECTORIES ${XGBOOST_INCLUDE_DIR})
  else()
    message(WARNING "tec: libxgboost-dev not found: the tuner's cost model (tune_model_new) will "
                    "refuse; install libxgboost-dev (scripts/dev deps) or pass -DTEC_XGBOOST=OFF")
  endif()
else()
  message(STATUS "tec: cost model off (TEC_XGBOOST=OFF): tune_model_new refuses")
endif()
