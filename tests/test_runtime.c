/* test_runtime.c — the C runtime: per-thread errors, the allocation hook and its contract,
 * DLTensor helpers (including bool as uint8 and every rejected input). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

START_TEST(test_error_messages) {
  ck_assert_int_eq(tec_rt_set_error("bad %s %d", "thing", 3), -1);
  ck_assert_str_eq(tec_rt_last_error(), "bad thing 3");
  ck_assert_int_eq(tec_rt_check_fail("f: argument 1 ('B') has ndim %lld, expected %lld", 3, 2), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 1 ('B') has ndim 3, expected 2");
  tec_rt_check_fail("no values", 1, 2);
  ck_assert_str_eq(tec_rt_last_error(), "no values");
  tec_rt_check_fail("negative %lld", -5, 0);
  ck_assert_str_eq(tec_rt_last_error(), "negative -5");
  tec_rt_check_fail(NULL, 0, 0);
  ck_assert_ptr_nonnull(strstr(tec_rt_last_error(), "check failed"));
}
END_TEST

static void *other_thread(void *arg) {
  (void)arg;
  const char *before = tec_rt_last_error();
  int empty = before[0] == '\0';
  tec_rt_set_error("from the thread");
  return empty ? (void *)1 : NULL;
}

START_TEST(test_error_is_per_thread) {
  tec_rt_set_error("main thread");
  pthread_t th;
  void *ret = NULL;
  ck_assert_int_eq(pthread_create(&th, NULL, other_thread, NULL), 0);
  ck_assert_int_eq(pthread_join(th, &ret), 0);
  ck_assert_ptr_eq(ret, (void *)1); /* the thread started with no message */
  ck_assert_str_eq(tec_rt_last_error(), "main thread");
}
END_TEST

START_TEST(test_long_message_truncated) {
  char big[4000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  tec_rt_set_error("%s", big);
  ck_assert_uint_lt(strlen(tec_rt_last_error()), sizeof big);
}
END_TEST

START_TEST(test_alloc_aligned) {
  size_t sizes[] = {0, 1, 63, 64, 65, 1000, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = tec_rt_alloc(sizes[i]);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % TEC_ALIGN, 0);
    size_t rounded = (sizes[i] + 63) / 64 * 64;
    memset(p, 0xab, rounded ? rounded : 64); /* the whole rounded block is ours */
    tec_rt_free(p);
  }
  tec_rt_free(NULL);
}
END_TEST

START_TEST(test_alloc_too_large) {
  ck_assert_ptr_null(tec_rt_alloc(SIZE_MAX));
  tu_assert_contains(tec_rt_last_error(), "too large");
}
END_TEST

typedef struct hook_log {
  int allocs, frees;
  size_t last_bytes;
  int fail, misalign;
} hook_log;

static void *hook_alloc(size_t bytes, void *user) {
  hook_log *log = user;
  log->allocs++;
  log->last_bytes = bytes;
  if (log->fail) return NULL;
  char *p = aligned_alloc(TEC_ALIGN, bytes + TEC_ALIGN);
  return log->misalign ? p + 8 : p;
}

static void hook_free(void *p, void *user) {
  hook_log *log = user;
  log->frees++;
  if (log->misalign) p = (char *)p - 8;
  free(p);
}

START_TEST(test_alloc_hook) {
  hook_log log = {0};
  tec_rt_set_allocator(hook_alloc, hook_free, &log);
  void *p = tec_rt_alloc(100);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(log.allocs, 1);
  ck_assert_uint_eq(log.last_bytes, 128); /* rounded up to TEC_ALIGN */
  tec_rt_free(p);
  ck_assert_int_eq(log.frees, 1);

  log.fail = 1;
  ck_assert_ptr_null(tec_rt_alloc(10));
  tu_assert_contains(tec_rt_last_error(), "out of memory allocating 64 bytes");
  DLTensor t;
  int64_t shape[1] = {4};
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 1, shape), -1);
  ck_assert_ptr_null(t.data);

  log.fail = 0;
  log.misalign = 1;
  int frees = log.frees;
  ck_assert_ptr_null(tec_rt_alloc(10));
  tu_assert_contains(tec_rt_last_error(), "not 64-byte aligned");
  ck_assert_int_eq(log.frees, frees + 1); /* the bad block went back to the hook */

  tec_rt_set_allocator(NULL, NULL, NULL); /* the default again */
  p = tec_rt_alloc(10);
  ck_assert_ptr_nonnull(p);
  int allocs = log.allocs;
  tec_rt_free(p);
  ck_assert_int_eq(log.allocs, allocs);
}
END_TEST

START_TEST(test_dl_alloc) {
  DLTensor t;
  int64_t shape[2] = {3, 5};
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 2, shape), 0);
  ck_assert_ptr_nonnull(t.data);
  ck_assert_uint_eq((uintptr_t)t.data % TEC_ALIGN, 0);
  ck_assert_int_eq(t.ndim, 2);
  ck_assert_int_eq(t.shape[0], 3);
  ck_assert_int_eq(t.shape[1], 5);
  ck_assert_ptr_ne(t.shape, shape); /* copied */
  ck_assert_ptr_null(t.strides);
  ck_assert_int_eq(t.device.device_type, kDLCPU);
  ck_assert_int_eq(t.dtype.code, kDLFloat);
  ck_assert_int_eq(t.dtype.bits, 32);
  ck_assert_int_eq(t.dtype.lanes, 1);
  ck_assert_uint_eq(t.byte_offset, 0);
  ck_assert_int_eq(tec_dl_numel(&t), 15);
  for (int i = 0; i < 15; i++) ck_assert(((float *)t.data)[i] == 0.0f);
  tec_dl_free(&t);
  ck_assert_ptr_null(t.data);
  ck_assert_ptr_null(t.shape);
  tec_dl_free(&t); /* twice is harmless */
  tec_dl_free(NULL);
}
END_TEST

START_TEST(test_dl_dtypes) {
  DLTensor t;
  int64_t n = 7;
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_BOOLT, 1, &n), 0);
  ck_assert_int_eq(t.dtype.code, kDLUInt); /* DLPack v0.6: bool is a byte */
  ck_assert_int_eq(t.dtype.bits, 8);
  tec_dl_free(&t);
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_I64, 1, &n), 0);
  ck_assert_int_eq(t.dtype.code, kDLInt);
  ck_assert_int_eq(t.dtype.bits, 64);
  tec_dl_free(&t);
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_DTYPE(TEC_FLOAT, 32, 4), 1, &n), 0);
  ck_assert_int_eq(t.dtype.lanes, 4);
  tec_dl_free(&t);
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_HANDLET, 1, &n), -1);
  tu_assert_contains(tec_rt_last_error(), "no tensor form");
}
END_TEST

START_TEST(test_dl_alloc_bad_input) {
  DLTensor t;
  int64_t neg[2] = {4, -1};
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 2, neg), -1);
  ck_assert_str_eq(tec_rt_last_error(), "tec_dl_alloc: shape[1] is -1, expected >= 0");
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, -1, neg), -1);
  tu_assert_contains(tec_rt_last_error(), "ndim -1 is out of range");
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 2, NULL), -1);
  tu_assert_contains(tec_rt_last_error(), "shape is NULL");
  ck_assert_int_eq(tec_dl_alloc(NULL, TEC_F32, 0, NULL), -1);
  int64_t huge[3] = {INT64_MAX / 4, 1 << 20, 1 << 20};
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 3, huge), -1);
  tu_assert_contains(tec_rt_last_error(), "too large");
  /* zero elements and zero dims are fine */
  int64_t zero = 0;
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 1, &zero), 0);
  ck_assert_ptr_nonnull(t.data);
  ck_assert_int_eq(tec_dl_numel(&t), 0);
  tec_dl_free(&t);
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F64, 0, NULL), 0);
  ck_assert_int_eq(tec_dl_numel(&t), 1);
  tec_dl_free(&t);
}
END_TEST

START_TEST(test_dl_view) {
  float buf[6];
  int64_t shape[2] = {2, 3};
  DLTensor v = tec_dl_view(buf, TEC_F32, 2, shape);
  ck_assert_ptr_eq(v.data, buf);
  ck_assert_ptr_eq(v.shape, shape);
  ck_assert_ptr_null(v.strides);
  ck_assert_int_eq(v.device.device_type, kDLCPU);
  ck_assert_int_eq(v.dtype.code, kDLFloat);
  ck_assert_int_eq(tec_dl_numel(&v), 6);
  DLTensor b = tec_dl_view(buf, TEC_BOOLT, 1, shape);
  ck_assert_int_eq(b.dtype.code, kDLUInt);
  ck_assert_int_eq(b.dtype.bits, 8);
  ck_assert_int_eq(tec_dl_numel(NULL), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("runtime");
  TCase *tc = tcase_create("runtime");
  tcase_add_test(tc, test_error_messages);
  tcase_add_test(tc, test_error_is_per_thread);
  tcase_add_test(tc, test_long_message_truncated);
  tcase_add_test(tc, test_alloc_aligned);
  tcase_add_test(tc, test_alloc_too_large);
  tcase_add_test(tc, test_alloc_hook);
  tcase_add_test(tc, test_dl_alloc);
  tcase_add_test(tc, test_dl_dtypes);
  tcase_add_test(tc, test_dl_alloc_bad_input);
  tcase_add_test(tc, test_dl_view);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
