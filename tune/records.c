/* records.c — one JSON line per trial (workload, target, template, config index and text,
 * the schedule trace, status, per-run costs, GFLOP/s, error, timestamp, tec version, the stage
 * ("confirm" for a config measured side by side after the trials; absent for a trial), the
 * candidate's cost-model features with their set's version, for transfer) and its
 * atomic append: the whole line in one write() on an O_APPEND descriptor, so concurrent
 * tuners never interleave and a killed one loses at most the trial in flight. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tec/tune_model.h"
#include "tune/internal.h"

#ifndef TEC_VERSION
#define TEC_VERSION "unknown"
#endif

/* Appends s as a JSON string (quoted, escaped) to buf at *len. */
static void put_str(char *buf, size_t cap, size_t *len, const char *s) {
  if (*len < cap) buf[(*len)++] = '"';
  for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c && *len + 8 < cap; c++) {
    if (*c == '"' || *c == '\\') buf[(*len)++] = '\\', buf[(*len)++] = (char)*c;
    else if (*c == '\n') buf[(*len)++] = '\\', buf[(*len)++] = 'n';
    else if (*c < 0x20) *len += (size_t)snprintf(buf + *len, cap - *len, "\\u%04x", *c);
    else buf[(*len)++] = (char)*c;
  }
  if (*len < cap) buf[(*len)++] = '"';
}

#define PUT(...) (len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__))

const char *tune_record_json(tec_ctx *ctx, const tune_task *task, const tune_trial *t) {
  size_t trace_len = t->trace ? strlen(t->trace) : 0;
  size_t cap = 1024 + 2 * (strlen(task->workload) + strlen(task->target) + (t->config ? strlen(t->config) : 0) +
                           (t->error ? strlen(t->error) : 0)) + trace_len + 40 * (size_t)t->ncosts +
               (t->features ? 16 * TUNE_NFEATURES : 0);
  char *buf = tec_ctx_alloc(ctx, cap);
  if (!buf) return NULL;
  size_t len = 0;
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  PUT("{\"workload\":");
  put_str(buf, cap, &len, task->workload);
  PUT(",\"target\":");
  put_str(buf, cap, &len, task->target);
  PUT(",\"template\":");
  put_str(buf, cap, &len, task->template_name);
  PUT(",\"index\":%lld,\"config\":", (long long)t->index);
  put_str(buf, cap, &len, t->config);
  PUT(",\"status\":\"%s\",\"costs\":[", tune_status_name(t->status));
  for (int i = 0; i < t->ncosts; i++) PUT("%s%.6e", i ? "," : "", t->costs[i]);
  PUT("],\"median\":%.6e,\"gflops\":%.7g,\"build_s\":%.3f,\"error\":", t->median, t->gflops, t->build_seconds);
  put_str(buf, cap, &len, t->error);
  PUT(",\"timestamp\":\"%s\",\"tec_version\":\"%s\"", stamp, TEC_VERSION);
  if (t->confirmed) PUT(",\"stage\":\"confirm\""); /* measured side by side (confirm.c) */
  if (t->anchor_s > 0) /* the costs scaled by the anchor's speed (tune_options.anchor) */
    PUT(",\"anchor_s\":%.6e,\"anchor_base_s\":%.6e", t->anchor_s, t->anchor_base_s);
  if (t->features) { /* for transfer (tune_options.transfer): the set's version, then the values */
    PUT(",\"features_version\":%d,\"features\":[", tune_task_features_version(task));
    for (int i = 0; i < TUNE_NFEATURES; i++) PUT("%s%.5g", i ? "," : "", isfinite(t->features[i]) ? (double)t->features[i] : 0.0);
    PUT("]");
  }
  PUT(",\"trace\":%s}", t->trace && *t->trace ? t->trace : "null");
  if (len >= cap) {
    tec_ctx_set_error(ctx, "tune: internal error: a record line of %zu bytes did not fit %zu", len, cap);
    return NULL;
  }
  return buf;
}

int tune_record_append(tec_ctx *ctx, const char *path, const char *line, int do_fsync) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return tec_ctx_set_error(ctx, "tune: cannot open the records file %s: %s", path, strerror(errno));
  int rc = 0;
  if (line) {
    size_t n = strlen(line);
    char *buf = malloc(n + 1);
    if (!buf) {
      close(fd);
      return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    }
    memcpy(buf, line, n);
    buf[n] = '\n';
    ssize_t w = write(fd, buf, n + 1);
    free(buf);
    if (w != (ssize_t)(n + 1))
      rc = tec_ctx_set_error(ctx, "tune: writing a record to %s failed: %s", path, w < 0 ? strerror(errno) : "short write");
    else if (do_fsync && fsync(fd) != 0)
      rc = tec_ctx_set_error(ctx, "tune: fsync of %s failed: %s", path, strerror(errno));
  }
  if (close(fd) != 0 && rc == 0) rc = tec_ctx_set_error(ctx, "tune: closing %s failed: %s", path, strerror(errno));
  return rc;
}
