/* remote.h — what remote.c (options, hosts, building a candidate's program) and remote_ssh.c
 * (running it over ssh) share (not installed). */
#ifndef TEC_TUNE_REMOTE_H
#define TEC_TUNE_REMOTE_H

#include <pthread.h>
#include <sys/types.h>
#include "tune/internal.h"

#define TUNE_REMOTE_MAXWORDS 32

typedef struct tune_rhost {
  const char *spec;           /* as given: what messages name */
  char user[65], host[256], port[8];
  int ok, failed, dropped;
  char first_error[400];
} tune_rhost;

struct tune_remote_run {
  int nhosts;
  tune_rhost *hosts;
  const tec_target *target;   /* the task's parsed target: what tec_emit_for takes */
  char *cc[TUNE_REMOTE_MAXWORDS + 1];       /* the compiler's words (malloc'd) */
  char *prefix_quoted;        /* the run prefix, each word quoted for the remote shell */
  const tune_remote *opt;
  char dir[256];              /* the local work directory */
  unsigned counter;           /* candidates built so far (file names) */
  pthread_mutex_t mu;         /* the hosts' counts */
};

/* Spawns argv (argv[0] looked up on PATH) with stdin, stdout and stderr on the given fds (-1:
 * /dev/null). 0 with *pid, or -1 with errno set. */
int tune_spawn(char *const *argv, int in, int out, int err, pid_t *pid);
/* s with newlines as "; ", runs of blanks as one, trimmed, at most size-1 bytes. */
void tune_trim_message(char *dst, size_t size, const char *s);

#endif
