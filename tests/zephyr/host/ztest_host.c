/* Runs the tests registered through the host stand-in of <zephyr/ztest.h>. */
#include <stdio.h>
#include <string.h>

#include "zephyr/ztest.h"

#define MAX_TESTS 64

static struct {
  const char* suite;
  const char* name;
  ztest_host_test_fn fn;
} tests[MAX_TESTS];
static int num_tests;
static struct {
  const char* name;
  ztest_host_fixture_fn before;
  ztest_host_fixture_fn after;
} suites[MAX_TESTS];
static int num_suites;
static int current_failed;

void ztest_host_register(const char* suite, const char* name, ztest_host_test_fn fn) {
  if (num_tests < MAX_TESTS) {
    tests[num_tests].suite = suite;
    tests[num_tests].name = name;
    tests[num_tests].fn = fn;
    num_tests++;
  }
}

void ztest_host_suite(const char* suite, ztest_host_fixture_fn before, ztest_host_fixture_fn after) {
  if (num_suites < MAX_TESTS) {
    suites[num_suites].name = suite;
    suites[num_suites].before = before;
    suites[num_suites].after = after;
    num_suites++;
  }
}

static int find_suite(const char* name) {
  int i;
  for (i = 0; i < num_suites; i++) {
    if (strcmp(suites[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

void ztest_host_fail(const char* file, int line, const char* what) {
  printf("    assertion failed at %s:%d: %s\n", file, line, what);
  current_failed = 1;
}

int main(void) {
  int passed = 0;
  int failed = 0;
  int i;

  for (i = 0; i < num_tests; i++) {
    int s = find_suite(tests[i].suite);
    if (s < 0) {
      printf(" FAIL - %s.%s: no ZTEST_SUITE(%s)\n", tests[i].suite, tests[i].name, tests[i].suite);
      failed++;
      continue;
    }
    current_failed = 0;
    if (suites[s].before != NULL) {
      suites[s].before(NULL);
    }
    tests[i].fn();
    if (suites[s].after != NULL) {
      suites[s].after(NULL);
    }
    printf(" %s - %s.%s\n", current_failed ? "FAIL" : "PASS", tests[i].suite, tests[i].name);
    if (current_failed) {
      failed++;
    } else {
      passed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
