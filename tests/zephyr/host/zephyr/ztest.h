/* Host stand-in for <zephyr/ztest.h>: see ../README.md. */
#ifndef ZTEST_HOST_ZTEST_H_
#define ZTEST_HOST_ZTEST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zephyr/kernel.h"

typedef void (*ztest_host_test_fn)(void);
typedef void (*ztest_host_fixture_fn)(void*);

void ztest_host_register(const char* suite, const char* name, ztest_host_test_fn fn);
void ztest_host_suite(const char* suite, ztest_host_fixture_fn before, ztest_host_fixture_fn after);
void ztest_host_fail(const char* file, int line, const char* what);

#define ZTEST(suite, name)                                                  \
  static void suite##_##name(void);                                         \
  __attribute__((constructor)) static void ztest_reg_##suite##_##name(void) { \
    ztest_host_register(#suite, #name, suite##_##name);                     \
  }                                                                         \
  static void suite##_##name(void)

#define ZTEST_SUITE(suite, predicate, setup, before, after, teardown)      \
  __attribute__((constructor)) static void ztest_suite_##suite(void) {     \
    (void)(predicate);                                                      \
    (void)(setup);                                                          \
    (void)(teardown);                                                       \
    ztest_host_suite(#suite, before, after);                                \
  }

#define zassert_true(cond, ...)                     \
  do {                                              \
    if (!(cond)) {                                  \
      ztest_host_fail(__FILE__, __LINE__, #cond);   \
      return;                                       \
    }                                               \
  } while (0)
#define zassert_false(cond, ...) zassert_true(!(cond), __VA_ARGS__)
#define zassert_equal(a, b, ...) zassert_true((a) == (b), __VA_ARGS__)
#define zassert_equal_ptr(a, b, ...) zassert_true((const void*)(a) == (const void*)(b), __VA_ARGS__)
#define zassert_is_null(p, ...) zassert_true((p) == NULL, __VA_ARGS__)
#define zassert_not_null(p, ...) zassert_true((p) != NULL, __VA_ARGS__)
#define zassert_ok(x, ...) zassert_true((x) == 0, __VA_ARGS__)

#endif
