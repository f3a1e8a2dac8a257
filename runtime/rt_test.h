/* rt_test.h — test hooks of the runtime: for tests/ only, not part of tec/runtime.h.
 *
 *   tec_rt_test_set_worker_hook(hold);   workers call hold(task) after they see a
 *                                        parallel_for job, before they claim their task
 *   tec_rt_test_set_worker_hook(NULL);   off again (the default)
 *
 * A hook that blocks makes the workers late on purpose: the caller then runs (steals) their
 * tasks, and a worker let go later must find its task taken (tests/test_steal.c). */
#ifndef TEC_RT_TEST_H
#define TEC_RT_TEST_H

typedef void (*tec_rt_test_worker_hook)(int task);
void tec_rt_test_set_worker_hook(tec_rt_test_worker_hook hook);

#endif
