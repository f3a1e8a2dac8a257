// halide_auto.cpp — the Halide side of `bench/run auto` behind auto.h's C interface: a program
// of halide_progs.cpp on the caller's buffers (wrapped, not copied: tec's shape reversed is
// Halide's), scheduled at the root (the reference), by the app's expert schedule, or by one of
// Halide 14's autoschedulers (Debian ships each as a plugin, loaded once; Adams2019's weights
// are built in), for 1 thread (MachineParams(1, 16 MiB, 40): Halide's default cache and
// balance), then JIT-compiled for the host. The autoscheduler's schedule source is written to
// $TEC_BENCH_AUTO_DIR/<prog>.<name>.txt when that variable is set.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include "auto.h"
#include "halide_progs.h"

using namespace Halide;

struct hl_pipe {
  HlProg prog;
  Pipeline pipe;
  std::vector<Buffer<float>> bufs;  // inputs, then the output
};

namespace {

#ifndef HALIDE_PLUGIN_DIR
#define HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void load(const std::string &name) {
  static std::set<std::string> loaded;
  if (loaded.count(name)) return;
  std::string lower;
  for (char ch : name) lower += (char)tolower((unsigned char)ch);
  load_plugin(std::string(HALIDE_PLUGIN_DIR) + "/libautoschedule_" + lower + ".so");
  loaded.insert(name);
}

Buffer<float> wrap(DLTensor *t, const char *name) {
  std::vector<int> sizes;
  for (int d = t->ndim - 1; d >= 0; d--) sizes.push_back((int)t->shape[d]);
  return Buffer<float>((float *)t->data, sizes, name);
}

Region region(const std::vector<int> &tec_shape) {
  Region r;
  for (size_t d = tec_shape.size(); d-- > 0;) r.push_back(Range(0, tec_shape[d]));
  return r;
}

}  // namespace

extern "C" int hl_available(void) { return 1; }

extern "C" hl_pipe *hl_create(const char *prog, const char *sched, int nargs, DLTensor *const *args,
                              double *sched_s, double *build_s, char *err, int errlen) {
  std::string s = sched;
  *sched_s = *build_s = 0;
  hl_pipe *p = new hl_pipe;
  try {
    Sizes sizes;
    for (int a = 0; a < nargs; a++) sizes.push_back(std::vector<int>(args[a]->shape, args[a]->shape + args[a]->ndim));
    if (!hl_declare(prog, sizes, s == "expert", p->prog)) {
      snprintf(err, (size_t)errlen, "no Halide program '%s'", prog);
      delete p;
      return nullptr;
    }
    if (s == "expert" && !p->prog.has_expert) {
      snprintf(err, (size_t)errlen, "no expert schedule (Halide's apps/ has none for this program)");
      delete p;
      return nullptr;
    }
    if ((int)p->prog.in.size() != nargs - 1) {
      snprintf(err, (size_t)errlen, "Halide program '%s' takes %d inputs, not %d", prog, (int)p->prog.in.size(), nargs - 1);
      delete p;
      return nullptr;
    }
    for (int a = 0; a < nargs; a++) p->bufs.push_back(wrap(args[a], a < nargs - 1 ? p->prog.in[a].name().c_str() : "out"));
    for (int a = 0; a < nargs - 1; a++) {
      p->prog.in[a].set_estimates(region(sizes[a]));
      p->prog.in[a].set(p->bufs[a]);
    }
    p->prog.out.set_estimates(region(sizes[nargs - 1]));
    p->pipe = Pipeline(p->prog.out);
    Target target = get_jit_target_from_environment();
    double t0 = now();
    if (s == "root") {
      for (Func &f : p->prog.funcs)
        if (f.name() != p->prog.out.name()) f.compute_root();
    } else if (s != "expert") {
      load(s);
      AutoSchedulerResults r = p->pipe.auto_schedule(s, target, MachineParams(1, 16 * 1024 * 1024, 40));
      const char *dir = getenv("TEC_BENCH_AUTO_DIR");
      if (dir) std::ofstream(std::string(dir) + "/" + prog + "." + s + ".txt") << r.schedule_source;
    }
    *sched_s = now() - t0;
    t0 = now();
    p->pipe.compile_jit(target);
    *build_s = now() - t0;
  } catch (const std::exception &e) {
    snprintf(err, (size_t)errlen, "Halide: %s", e.what());
    delete p;
    return nullptr;
  }
  return p;
}

extern "C" int hl_run(hl_pipe *p, char *err, int errlen) {
  try {
    p->pipe.realize(p->bufs.back());
  } catch (const std::exception &e) {
    snprintf(err, (size_t)errlen, "Halide: %s", e.what());
    return -1;
  }
  return 0;
}

extern "C" void hl_free(hl_pipe *p) { delete p; }
