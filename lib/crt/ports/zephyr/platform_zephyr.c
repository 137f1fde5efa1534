/*
 * Zephyr port of the utvm runtime hooks (utvm/platform.h):
 * - utvm_platform_abort(): LOG_ERR, then Zephyr's fatal error path (k_oops() or k_panic()),
 * - utvm_platform_log(): one line through Zephyr logging, module "tvm" (CONFIG_TVM_LOG_LEVEL);
 *   nothing when the logging subsystem is off,
 * - utvm_platform_cycles(): k_cycle_get_32().
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/printk.h>

#include "utvm/platform.h"
#include "utvm_zephyr.h"

#if defined(CONFIG_LOG)
LOG_MODULE_REGISTER(tvm, CONFIG_TVM_LOG_LEVEL); /* CONFIG_TVM_LOG_LEVEL exists with LOG only */
#endif

void utvm_platform_abort(int32_t code) {
#if defined(CONFIG_LOG)
  LOG_ERR("utvm: abort (code %d)", (int)code);
#else
  printk("utvm: abort (code %d)\n", (int)code);
#endif
  /* Zephyr's fatal error handler flushes the log (LOG_PANIC) before it halts. */
#if defined(CONFIG_TVM_ABORT_PANIC)
  k_panic();
#else
  k_oops();
#endif
  CODE_UNREACHABLE;
}

void utvm_platform_log(const char* fmt, ...) {
#if defined(CONFIG_LOG)
  char line[CONFIG_TVM_LOG_LINE_SIZE];
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

uint32_t utvm_platform_cycles(void) { return k_cycle_get_32(); }

uint64_t utvm_zephyr_cycles_to_ns(uint32_t cycles) {
  return k_cyc_to_ns_floor64(cycles);
}

int utvm_zephyr_stack_unused(size_t* unused) {
#if defined(CONFIG_TVM_STACK_CHECK)
  return k_thread_stack_space_get(k_current_get(), unused);
#else
  *unused = 0u;
  return -ENOTSUP;
#endif
}
