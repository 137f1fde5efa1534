/*
 * Zephyr port of the utvm runtime hooks (utvm/platform.h):
 * - utvm_platform_abort(): LOG_ERR, then Zephyr's fatal error path (k_oops() or k_panic()),
 * - utvm_platform_log(): one line through Zephyr logging, module "utvm"
 *   (CONFIG_UTVM_LOG_LEVEL); nothing when the logging subsystem is off,
 * - utvm_platform_cycles(): Zephyr's timing functions (timing_counter_get(), the DWT cycle
 *   counter on Cortex-M) with CONFIG_UTVM_TIMING_FUNCTIONS and CONFIG_TIMING_FUNCTIONS, when
 *   the counter is seen to run; else k_cycle_get_32(), the system timer (which counts at
 *   32 kHz on some SoCs, and DWT does not run under QEMU). utvm_zephyr_cycles_unit() says
 *   which one counts. On native boards built with the host's C library (native_posix,
 *   native_sim with CONFIG_EXTERNAL_LIBC) the host's monotonic clock in nanoseconds instead:
 *   Zephyr's clocks there are simulated time, which stands still while code runs.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#if defined(CONFIG_ARCH_POSIX) && defined(CONFIG_EXTERNAL_LIBC)
#ifndef _POSIX_C_SOURCE /* clock_gettime() of the host's C library under -std=c99 */
#define _POSIX_C_SOURCE 200809L
#endif
#include <time.h>
#define UTVM_HOST_CLOCK 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/printk.h>

#if defined(CONFIG_UTVM_TIMING_FUNCTIONS) && defined(CONFIG_TIMING_FUNCTIONS)
#include <zephyr/timing/timing.h>
#define UTVM_HAS_TIMING 1
#endif

#include "utvm/platform.h"
#include "utvm_zephyr.h"

#if defined(CONFIG_LOG)
LOG_MODULE_REGISTER(utvm, CONFIG_UTVM_LOG_LEVEL); /* CONFIG_UTVM_LOG_LEVEL exists with LOG only */
#endif

void utvm_platform_abort(int32_t code) {
#if defined(CONFIG_LOG)
  LOG_ERR("utvm: abort (code %d)", (int)code);
#else
  printk("utvm: abort (code %d)\n", (int)code);
#endif
  /* Zephyr's fatal error handler flushes the log (LOG_PANIC) before it halts. */
#if defined(CONFIG_UTVM_ABORT_PANIC)
  k_panic();
#else
  k_oops();
#endif
  CODE_UNREACHABLE;
}

void utvm_platform_log(const char* fmt, ...) {
#if defined(CONFIG_LOG)
  char line[CONFIG_UTVM_LOG_LINE_SIZE];
  va_list ap;

  va_start(ap, fmt);
  (void)vsnprintk(line, sizeof(line), fmt, ap);
  va_end(ap);
  LOG_INF("%s", line);
#else
  /* CONFIG_LOG=n: silent, as Zephyr's own modules are (the console may carry binary
   * frames, e.g. samples/utvm_rpc_server). */
  ARG_UNUSED(fmt);
#endif
}

#if defined(UTVM_HAS_TIMING)
/* 0: not decided yet, 1: the timing counter runs, -1: it does not (k_cycle_get_32()). */
static int timing_state;

static bool use_timing(void) {
  if (timing_state == 0) {
    timing_t before, after;

    timing_init();
    timing_start();
    before = timing_counter_get();
    k_busy_wait(100);
    after = timing_counter_get();
    timing_state = timing_cycles_get(&before, &after) != 0u ? 1 : -1;
  }
  return timing_state > 0;
}
#endif

uint32_t utvm_platform_cycles(void) {
#if defined(UTVM_HOST_CLOCK)
  struct timespec ts;

  if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
    /* Differences of the low 32 bits are the nanoseconds between two reads (up to 4.29 s). */
    return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
  }
#endif
#if defined(UTVM_HAS_TIMING)
  if (use_timing()) {
    /* Differences of the low 32 bits are the cycles between two reads. */
    return (uint32_t)timing_counter_get();
  }
#endif
  return k_cycle_get_32();
}

const char* utvm_zephyr_cycles_unit(void) {
#if defined(UTVM_HOST_CLOCK)
  return "host clock ns";
#endif
#if defined(UTVM_HAS_TIMING)
  if (use_timing()) {
    return "timing cycles";
  }
#endif
  return "k_cycle_get_32 ticks";
}

uint64_t utvm_zephyr_cycles_to_ns(uint32_t cycles) {
#if defined(UTVM_HOST_CLOCK)
  return cycles;
#endif
#if defined(UTVM_HAS_TIMING)
  if (use_timing()) {
    return timing_cycles_to_ns(cycles);
  }
#endif
  return k_cyc_to_ns_floor64(cycles);
}

utvm_status_t utvm_zephyr_stack_unused(size_t* unused) {
  if (unused == NULL) return UTVM_ERR_ARGUMENT;
  *unused = 0u;
#if defined(CONFIG_UTVM_STACK_CHECK)
  {
    int rc = k_thread_stack_space_get(k_current_get(), unused);
    if (rc == 0) return UTVM_OK;
    *unused = 0u;
    return rc == -ENOTSUP ? UTVM_ERR_UNSUPPORTED : UTVM_ERR_ARGUMENT;
  }
#else
  return UTVM_ERR_UNSUPPORTED;
#endif
}
