/*
 * Platform hooks. Exactly one port (ports/host, ports/baremetal, ports/zephyr) provides them.
 */
#ifndef UTVM_PLATFORM_H_
#define UTVM_PLATFORM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define UTVM_NORETURN __attribute__((noreturn))
#else
#define UTVM_NORETURN
#endif

/** Unrecoverable error: log the code and stop (host: exit, Zephyr: fatal error). */
UTVM_NORETURN void utvm_platform_abort(int32_t code);

/** printf-style log line (no trailing newline needed). */
void utvm_platform_log(const char* fmt, ...);

/** A free-running counter for timing: CPU cycles where the platform has them. */
uint32_t utvm_platform_cycles(void);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_PLATFORM_H_ */
