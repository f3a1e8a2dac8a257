/* backends.c — the one table of code generators the module runtime drives (module/backend.h),
 * and the choice of one for a target. Every target tec parses today is of LLVM's kind ("llvm",
 * its options and the presets), so the table has one row; a second backend adds a row and the
 * target kind that selects it. tec_build and tec_emit reach a backend only through here and its
 * table of functions. */
#include "module/module.h"

static const struct {
  const char *kind;        /* the target kind it generates code for */
  const tec_backend *be;
} backends[] = {
    {"llvm", &tec_backend_llvm},
};

const tec_backend *mod_backend_for(const tec_target *t) {
  (void)t; /* every target is of kind "llvm" (target/target.c) */
  return backends[0].be;
}
