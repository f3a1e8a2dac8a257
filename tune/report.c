/* report.c — what a user sees of a tuning run: the progress line (rewritten in place with \r
 * on a terminal; in a log, ticker.c prints it every 10 to 30 s, and here once at the end), the CSV of trials and the SVG plot of the
 * best-so-far GFLOP/s against trials (hand-written SVG, no dependency). */
#include <errno.h>
#include <string.h>
#include "tune/internal.h"

int tune_progress_text(char *buf, size_t n, int done, int total, double best, double elapsed) {
  double eta = done > 0 ? elapsed / done * (total - done) : 0;
  return snprintf(buf, n, "tune: %d/%d trials, best %.2f GFLOP/s, elapsed %.1f s, ETA %.1f s", done, total,
                  best, elapsed, eta);
}

void tune_progress(FILE *out, int tty, int done, int total, double best, double elapsed, int final) {
  if (!tty && !final) return; /* a log gets ticker.c's lines */
  char line[200];
  tune_progress_text(line, sizeof line, done, total, best, elapsed);
  fprintf(out, "%s%s%s", tty ? "\r" : "", line, tty ? "\033[K" : "");
  if (final || !tty) fputc('\n', out);
  fflush(out);
}

/* the CSV field s, quoted when it holds a comma, quote or newline */
static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
  fputc('"', f);
}

int tune_write_csv(tec_ctx *ctx, const char *path, const tune_result *r) {
  FILE *f = fopen(path, "w");
  if (!f) return tec_ctx_set_error(ctx, "tune: cannot write the CSV %s: %s", path, strerror(errno));
  fprintf(f, "trial,index,config,status,median_s,gflops,best_gflops,error\n");
  double best = 0;
  for (int i = 0; i < r->ntrials; i++) {
    const tune_trial *t = &r->trials[i];
    if (t->status == TUNE_OK && t->gflops > best) best = t->gflops;
    fprintf(f, "%d,%lld,", i + 1, (long long)t->index);
    csv_field(f, t->config ? t->config : "");
    fprintf(f, ",%s,%.6e,%.4f,%.4f,", tune_status_name(t->status), t->median, t->gflops, best);
    csv_field(f, t->error ? t->error : "");
    fputc('\n', f);
  }
  for (int i = 0; i < r->nconfirmed; i++) { /* the confirmation stage: trial "confirm", no best-so-far */
    const tune_trial *t = &r->confirmed[i];
    fprintf(f, "confirm,%lld,", (long long)t->index);
    csv_field(f, t->config ? t->config : "");
    fprintf(f, ",%s,%.6e,%.4f,,", tune_status_name(t->status), t->median, t->gflops);
    csv_field(f, t->error ? t->error : "");
    fputc('\n', f);
  }
  if (fclose(f) != 0) return tec_ctx_set_error(ctx, "tune: writing the CSV %s failed: %s", path, strerror(errno));
  return 0;
}

static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else fputc(*s, f);
  }
}

int tune_write_svg(tec_ctx *ctx, const char *path, const tune_task *task, const tune_result *r) {
  FILE *f = fopen(path, "w");
  if (!f) return tec_ctx_set_error(ctx, "tune: cannot write the SVG %s: %s", path, strerror(errno));
  const double W = 640, H = 400, L = 70, R = 20, T = 40, B = 50;
  double best = 0, top = 0;
  for (int i = 0; i < r->ntrials; i++)
    if (r->trials[i].status == TUNE_OK && r->trials[i].gflops > top) top = r->trials[i].gflops;
  if (top <= 0) top = 1;
  top *= 1.1;
  int n = r->ntrials > 1 ? r->ntrials : 2;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%g\" y=\"24\" font-size=\"14\">", L);
  xml_text(f, task->workload);
  fprintf(f, ": best-so-far GFLOP/s</text>\n");
  fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
  fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, T, L, H - B);
  for (int g = 0; g <= 4; g++) { /* y ticks */
    double v = top * g / 4, y = H - B - (H - B - T) * g / 4;
    fprintf(f, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
            L, y, W - R, y, L - 6, y + 4, v);
  }
  for (int g = 0; g <= 4; g++) { /* x ticks */
    double v = 1 + (n - 1) * g / 4.0, x = L + (W - L - R) * g / 4;
    fprintf(f, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%.0f</text>\n", x, H - B + 18, v);
  }
  fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">trials</text>\n", L + (W - L - R) / 2, H - 10);
  fprintf(f, "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" text-anchor=\"middle\">GFLOP/s</text>\n",
          T + (H - T - B) / 2, T + (H - T - B) / 2);
  fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
  for (int i = 0; i < r->ntrials; i++) {
    const tune_trial *t = &r->trials[i];
    if (t->status == TUNE_OK && t->gflops > best) best = t->gflops;
    fprintf(f, "%.1f,%.1f ", L + (W - L - R) * i / (n - 1), H - B - (H - B - T) * best / top);
  }
  fprintf(f, "\"/>\n");
  for (int i = 0; i < r->ntrials; i++) { /* each trial: a dot (ok) or a red cross (failed) */
    const tune_trial *t = &r->trials[i];
    double x = L + (W - L - R) * i / (n - 1);
    if (t->status == TUNE_OK)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#999\"/>\n", x, H - B - (H - B - T) * t->gflops / top);
    else
      fprintf(f, "<text x=\"%.1f\" y=\"%g\" fill=\"red\" text-anchor=\"middle\">x</text>\n", x, H - B - 4);
  }
  fprintf(f, "</svg>\n");
  if (fclose(f) != 0) return tec_ctx_set_error(ctx, "tune: writing the SVG %s failed: %s", path, strerror(errno));
  return 0;
}
