/*
 * ztest suite for the utvm runtime's workspace scratch (lib/crt/src/backend.c):
 * TVMBackendAllocWorkspace serves requests from the region given to utvm_scratch_set(),
 * aligned to UTVM_POOL_ALIGNMENT, last in first out, and returns NULL when it is exhausted;
 * and the Zephyr port's hooks (lib/crt/ports/zephyr).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <string.h>

#include <zephyr/ztest.h>

#include "tvm/runtime/c_backend_api.h"
#include "utvm/crt.h"
#include "utvm/platform.h"

#define SCRATCH_SIZE 256u

static uint8_t scratch[SCRATCH_SIZE] __aligned(UTVM_POOL_ALIGNMENT);

static void* alloc(uint64_t nbytes) { return TVMBackendAllocWorkspace(1, 0, nbytes, 0, 8); }

static int release(void* ptr) { return TVMBackendFreeWorkspace(1, 0, ptr); }

static bool inside_scratch(const void* p, size_t n) {
  const uint8_t* b = (const uint8_t*)p;
  return b >= scratch && b + n <= scratch + SCRATCH_SIZE;
}

static void before_each(void* fixture) {
  ARG_UNUSED(fixture);
  utvm_scratch_set(scratch, sizeof(scratch));
}

static void after_each(void* fixture) {
  ARG_UNUSED(fixture);
  utvm_scratch_set(NULL, 0);
}

ZTEST(utvm_scratch, test_alloc_within_scratch) {
  void* a = alloc(10);
  void* b = alloc(33);

  zassert_not_null(a, "first allocation failed");
  zassert_not_null(b, "second allocation failed");
  zassert_true(inside_scratch(a, 10), "allocation outside the scratch region");
  zassert_true(inside_scratch(b, 33), "allocation outside the scratch region");
  zassert_equal((uintptr_t)a % UTVM_POOL_ALIGNMENT, 0, "misaligned allocation");
  zassert_equal((uintptr_t)b % UTVM_POOL_ALIGNMENT, 0, "misaligned allocation");
  zassert_true((uint8_t*)b >= (uint8_t*)a + 10, "allocations overlap");
  zassert_equal(utvm_scratch_in_use(), 16u + 48u, "in use: %u", (unsigned)utvm_scratch_in_use());
  memset(a, 0x11, 10);
  memset(b, 0x22, 33);
  zassert_equal(((uint8_t*)a)[9], 0x11, "first allocation overwritten");
}

ZTEST(utvm_scratch, test_whole_scratch) {
  void* a = alloc(SCRATCH_SIZE);

  zassert_equal_ptr(a, scratch, "the whole scratch should be served");
  zassert_equal(utvm_scratch_in_use(), SCRATCH_SIZE, "in use");
  zassert_ok(release(a), "free failed");
}

ZTEST(utvm_scratch, test_exhaustion_returns_null) {
  void* a = alloc(200);

  zassert_not_null(a, "allocation within the scratch failed");
  zassert_is_null(alloc(100), "allocation past the end of the scratch succeeded");
  zassert_is_null(alloc(SCRATCH_SIZE + 1u), "allocation larger than the scratch succeeded");
  zassert_is_null(alloc(UINT64_MAX), "huge allocation succeeded");
  zassert_equal(utvm_scratch_in_use(), 208u, "a failed allocation changed the use");
  zassert_not_null(alloc(SCRATCH_SIZE - 208u), "the rest of the scratch is still there");
}

ZTEST(utvm_scratch, test_free_restores) {
  void* a = alloc(64);
  void* b = alloc(64);
  void* c;

  zassert_not_null(b, "allocation failed");
  zassert_equal(release(a), -1, "freeing out of order must fail");
  zassert_ok(release(b), "free failed");
  zassert_equal(utvm_scratch_in_use(), 64u, "free did not restore the use");
  c = alloc(64);
  zassert_equal_ptr(c, b, "freed memory is served again");
  zassert_ok(release(c), "free failed");
  zassert_ok(release(a), "free failed");
  zassert_equal(utvm_scratch_in_use(), 0u, "not everything released");
  zassert_equal(release(a), -1, "double free must fail");
}

ZTEST(utvm_scratch, test_disabled_scratch) {
  utvm_scratch_set(NULL, SCRATCH_SIZE);
  zassert_is_null(alloc(1), "allocation without scratch succeeded");
  utvm_scratch_set(scratch, 0);
  zassert_is_null(alloc(1), "allocation from an empty scratch succeeded");
}

ZTEST(utvm_scratch, test_set_resets) {
  zassert_not_null(alloc(100), "allocation failed");
  utvm_scratch_set(scratch, sizeof(scratch));
  zassert_equal(utvm_scratch_in_use(), 0u, "utvm_scratch_set must reset the use");
  zassert_equal_ptr(alloc(16), scratch, "allocation after a reset starts at the base");
}

ZTEST_SUITE(utvm_scratch, NULL, NULL, before_each, after_each, NULL);

ZTEST(utvm_port, test_cycles_advance) {
  uint32_t start = utvm_platform_cycles();

  k_busy_wait(1000);
  zassert_true(utvm_platform_cycles() - start > 0u, "the cycle counter does not advance");
}

ZTEST(utvm_port, test_log) {
  /* Formats into the port's line buffer; longer lines are cut, never overrun. */
  static char longer[2 * 1024 + 1];

  memset(longer, 'x', sizeof(longer) - 1u);
  utvm_platform_log("utvm port test: %d %s", 42, "ok");
  utvm_platform_log("%s", longer);
}

ZTEST_SUITE(utvm_port, NULL, NULL, NULL, NULL, NULL);
