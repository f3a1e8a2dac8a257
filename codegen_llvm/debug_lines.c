/* debug_lines.c — debug locations that link instructions to the loops of the printed program
 * (tec_html): the printed program is the "source file", each loop's line the location of
 * every instruction made inside it (innermost loop wins), the function's header line outside
 * loops. The raw kernel and every function outlined from it (parallel bodies, trampolines,
 * launch regions) get a subprogram; the checked entry gets none. Only line tables are made
 * (no variables), so the optimizer's output is the same code with `.loc` lines in the
 * assembly and `!dbg` on the IR. Without tec_ir_func.lines nothing here does anything. */
#include <string.h>
#include <llvm-c/DebugInfo.h>
#include "codegen_llvm/codegen.h"

void cg_dbg_module_begin(cg_func *f, int nfuncs, const tec_ir_func *funcs) {
  f->dib = NULL;
  const tec_ir_lines *l = NULL;
  for (int i = 0; i < nfuncs && !l; i++) l = funcs[i].lines;
  if (!l) return;
  LLVMDIBuilderRef dib = LLVMCreateDIBuilder(f->mod);
  const char *file = l->file ? l->file : "tec.txt";
  f->dfile = LLVMDIBuilderCreateFile(dib, file, strlen(file), ".", 1);
  (void)LLVMDIBuilderCreateCompileUnit(dib, LLVMDWARFSourceLanguageC, f->dfile, "tec", 3, 1, "", 0, 0, "", 0,
                                       LLVMDWARFEmissionLineTablesOnly, 0, 0, 0, "", 0, "", 0);
  f->dib = dib;
}

void cg_dbg_module_end(cg_func *f) {
  if (!f->dib) return;
  LLVMDIBuilderFinalize(f->dib);
  LLVMDisposeDIBuilder(f->dib);
  f->dib = NULL;
  LLVMValueRef v = LLVMConstInt(f->i32, LLVMDebugMetadataVersion(), 0);
  LLVMAddModuleFlag(f->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18, LLVMValueAsMetadata(v));
}

void cg_dbg_set(cg_func *f, int line) {
  if (!f->dib || !f->lf->lines || !f->dscope) return;
  f->dline = line;
  LLVMSetCurrentDebugLocation2(f->b, LLVMDIBuilderCreateDebugLocation(f->llctx, (unsigned)line, 1, f->dscope, NULL));
}

void cg_dbg_clear(cg_func *f) {
  if (!f->dib) return;
  f->dscope = NULL;
  LLVMSetCurrentDebugLocation2(f->b, NULL);
}

void cg_dbg_fn(cg_func *f, LLVMValueRef fn) {
  if (!f->dib || !f->lf->lines) return;
  size_t len;
  const char *name = LLVMGetValueName2(fn, &len);
  int line = f->dscope ? f->dline : f->lf->lines->func_line;
  LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(f->dib, f->dfile, NULL, 0, LLVMDIFlagZero);
  LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(f->dib, f->dfile, name, len, name, len, f->dfile, (unsigned)line, ty,
                                                   1, 1, (unsigned)line, LLVMDIFlagZero, 1);
  LLVMSetSubprogram(fn, sp);
  f->dscope = sp;
  cg_dbg_set(f, line);
}

int cg_dbg_loop(cg_func *f, const ir_expr *var) {
  int prev = f->dline;
  const tec_ir_lines *l = f->lf->lines;
  if (!f->dib || !l || !f->dscope) return prev;
  for (int i = 0; i < l->n; i++)
    if (l->vars[i] == var) {
      cg_dbg_set(f, l->lines[i]);
      break;
    }
  return prev;
}
