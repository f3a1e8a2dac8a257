# test_tiers.cmake — every ctest test carries two labels (docs/testing.md has the ledger):
#   speed: quick (seconds on the host build: the tier a change runs before it lands,
#          `scripts/dev quick`) or slow (the rest: whole networks, sweeps, 10^3-cycle runs);
#   kind:  target (what it checks depends on the target: code generation, NEON, the runtime,
#          AOT objects, the templates' per-target defaults, a sample of random schedules: run
#          again under qemu-aarch64 and against LLVM 19) or portable (the same on every target:
#          run on the host, plain and under ASan, only).
# tec_test_tier(NAME speed kind [more labels...]) sets them; a cross build (qemu) adds only the
# target tier's tests unless TEC_EMULATE_ALL is on (tests/CMakeLists.txt).
# TEC_TARGET_TIER_ONLY: a host build that builds and adds only the target tier's suites (the
# LLVM 19 phase of scripts/dev test runs the target and arm tiers only: no portable suite to build).
option(TEC_TARGET_TIER_ONLY "Build only the target tier's test suites" OFF)
option(TEC_EMULATE_ALL "Cross builds: build and run every suite under the emulator, not only the target tier" OFF)
function(tec_test_tier name speed kind)
  if(NOT speed MATCHES "^(quick|slow)$" OR NOT kind MATCHES "^(target|portable)$")
    message(FATAL_ERROR "tec_test_tier(${name} ${speed} ${kind}): speed is quick or slow, kind target or portable")
  endif()
  set_property(TEST ${name} APPEND PROPERTY LABELS ${speed} ${kind} ${ARGN})
endfunction()
