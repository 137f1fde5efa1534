/* Host definitions of the stand-in kernel and printk calls: see README.md. */
#include <stdio.h>
#include <time.h>

#include "zephyr/kernel.h"
#include "zephyr/sys/printk.h"

void printk(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

void vprintk(const char* fmt, va_list ap) { vprintf(fmt, ap); }

int vsnprintk(char* str, size_t size, const char* fmt, va_list ap) {
  return vsnprintf(str, size, fmt, ap);
}

uint32_t k_cycle_get_32(void) { return (uint32_t)clock(); }

void k_busy_wait(uint32_t usec_to_wait) {
  clock_t end = clock() + (clock_t)((uint64_t)usec_to_wait * CLOCKS_PER_SEC / 1000000u) + 1;
  while (clock() < end) {
  }
}

uint64_t k_cyc_to_ns_floor64(uint64_t cycles) {
  return cycles * (1000000000u / CLOCKS_PER_SEC);
}

k_tid_t k_current_get(void) { return NULL; }

int k_thread_stack_space_get(const struct k_thread* thread, size_t* unused_ptr) {
  (void)thread;
  *unused_ptr = 0;
  return 0;
}
