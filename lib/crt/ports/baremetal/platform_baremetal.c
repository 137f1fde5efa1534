/*
 * Platform hooks for bare-metal Arm MPS2 / MPS3 boards as QEMU models them
 * (mps2-an385, mps2-an386, mps2-an500, mps3-an547), linked with picolibc.
 *
 * - Logging goes to stdout, which picolibc's semihosting library (-lsemihost)
 *   forwards to the host through SYS_WRITE.
 * - abort() calls exit(); with picolibc's semihosting start-up code
 *   (--crt0=semihost) exit is a semihosting SYS_EXIT, so QEMU terminates
 *   with that status.
 * - The cycle counter is the FPGAIO COUNTER register, an up-counter clocked
 *   at the board's prescaler clock (25 MHz on MPS2, 20 MHz on MPS3 AN547 in
 *   QEMU). Its address differs per board; the build passes it as
 *   UTVM_FPGAIO_COUNTER_ADDR. Under `qemu -icount shift=0` one instruction
 *   takes one virtual nanosecond, so a counter tick is a fixed number of
 *   instructions (40 on MPS2, 50 on the AN547).
 *
 * C99, no heap use by this file.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "utvm/platform.h"

#ifndef UTVM_FPGAIO_COUNTER_ADDR
/* MPS2 FPGAIO block at 0x40028000, COUNTER register at offset 0x18. */
#define UTVM_FPGAIO_COUNTER_ADDR 0x40028018u
#endif

void utvm_platform_abort(int32_t code) {
  printf("utvm: abort(%ld)\n", (long)code);
  fflush(stdout);
  /* Never report an abort as success. */
  exit(code != 0 ? (int)code : 1);
}

void utvm_platform_log(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  (void)vprintf(fmt, args);
  va_end(args);
  (void)putchar('\n');
  fflush(stdout);
}

uint32_t utvm_platform_cycles(void) {
  return *(volatile const uint32_t*)(uintptr_t)(UTVM_FPGAIO_COUNTER_ADDR);
}
