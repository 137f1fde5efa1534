/*
 * Host port: logs to stderr, aborts with exit(), times with the monotonic clock
 * (nanoseconds, truncated to 32 bits, as a stand-in for cycles).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "utvm/platform.h"

void utvm_platform_abort(int32_t code) {
  fprintf(stderr, "utvm: abort (code %ld)\n", (long)code);
  exit((int)(code == 0 ? 1 : code));
}

void utvm_platform_log(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

uint32_t utvm_platform_cycles(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint32_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}
