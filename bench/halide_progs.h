// halide_progs.h — the Halide twins of auto_progs.c's programs (halide_progs.cpp).
#ifndef TEC_BENCH_HALIDE_PROGS_H
#define TEC_BENCH_HALIDE_PROGS_H
#include <string>
#include <vector>
#include "Halide.h"

// every argument's shape in tec's order (outermost first), inputs then the output
typedef std::vector<std::vector<int>> Sizes;

struct HlProg {
  std::vector<Halide::ImageParam> in;  // in argument order
  Halide::Func out;
  std::vector<Halide::Func> funcs;     // every stage (the reference computes each at the root)
  bool has_expert = false;             // an apps/ schedule exists (applied when asked)
};

// Declares program `name` for these sizes; with expert, applies the app's schedule (a
// program without one ignores it: see has_expert). false: unknown name.
bool hl_declare(const std::string &name, const Sizes &sizes, bool expert, HlProg &p);
#endif
