/* ticker.c — tuning progress for a log: when stderr is not a terminal (CI, nohup, a pipe) a
 * thread prints the progress line (report.c's format, docs/tuning.md)
 *   tune: 12/64 trials, best 35.21 GFLOP/s, elapsed 31.0 s, ETA 134.5 s
 * at most every MIN seconds (only once a trial finished since the last line) and at least
 * every MAX seconds (even while one long trial runs): 10 and 30 by default,
 * TEC_TUNE_PROGRESS=MIN,MAX overrides them (seconds, 0 < MIN <= MAX). The line goes out with
 * one write(2) call, so a forked build or measurement child never inherits a held stdio
 * lock. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tune/internal.h"

struct tune_ticker {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop, done, total, printed_done;
  double best, t0, last, min_s, max_s;
};

/* TEC_TUNE_PROGRESS=MIN,MAX, or 10,30 (a bad value said once, on stderr) */
static void intervals(double *min_s, double *max_s) {
  *min_s = 10, *max_s = 30;
  const char *e = getenv("TEC_TUNE_PROGRESS");
  if (!e || !*e) return;
  char *end;
  double a = strtod(e, &end), b = a;
  if (*end == ',') b = strtod(end + 1, &end);
  if (*end || !(a > 0) || !(b >= a) || b > 3600) {
    fprintf(stderr, "tune: warning: TEC_TUNE_PROGRESS='%s' is not MIN,MAX seconds (0 < MIN <= MAX "
                    "<= 3600); progress every 10 to 30 s\n", e);
    return;
  }
  *min_s = a, *max_s = b;
}

static void *tick(void *arg) {
  tune_ticker *k = arg;
  pthread_mutex_lock(&k->mu);
  while (!k->stop) {
    double now = tune_now(), wait = k->min_s / 4 < 1 ? k->min_s / 4 : 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + wait;
    ts.tv_sec = (time_t)t, ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    int rc = pthread_cond_timedwait(&k->cv, &k->mu, &ts);
    if (k->stop || (rc != 0 && rc != ETIMEDOUT)) break;
    now = tune_now();
    double since = now - k->last;
    if (since < k->max_s && !(since >= k->min_s && k->done > k->printed_done)) continue;
    char line[200];
    int n = tune_progress_text(line, sizeof line, k->done, k->total, k->best, now - k->t0);
    if (n > 0 && (size_t)n < sizeof line - 1) {
      line[n] = '\n';
      ssize_t w = write(2, line, (size_t)n + 1);
      (void)w; /* a closed stderr: nothing to do */
    }
    k->last = now, k->printed_done = k->done;
  }
  pthread_mutex_unlock(&k->mu);
  return NULL;
}

tune_ticker *tune_ticker_start(double t0, int total) {
  tune_ticker *k = calloc(1, sizeof *k);
  if (!k) return NULL; /* no periodic lines; the final one still comes */
  k->t0 = k->last = t0, k->total = total;
  intervals(&k->min_s, &k->max_s);
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  if (pthread_create(&k->th, NULL, tick, k) != 0) {
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
    return NULL;
  }
  return k;
}

void tune_ticker_update(tune_ticker *k, int done, double best) {
  if (!k) return;
  pthread_mutex_lock(&k->mu);
  k->done = done, k->best = best;
  pthread_mutex_unlock(&k->mu);
}

void tune_ticker_stop(tune_ticker *k) {
  if (!k) return;
  pthread_mutex_lock(&k->mu);
  k->stop = 1;
  pthread_cond_signal(&k->cv);
  pthread_mutex_unlock(&k->mu);
  pthread_join(k->th, NULL);
  pthread_cond_destroy(&k->cv);
  pthread_mutex_destroy(&k->mu);
  free(k);
}
