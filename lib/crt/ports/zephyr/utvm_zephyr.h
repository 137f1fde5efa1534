/*
 * Helpers the Zephyr port adds to utvm/platform.h, for applications and samples.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef UTVM_ZEPHYR_H_
#define UTVM_ZEPHYR_H_

#include <stddef.h>
#include <stdint.h>

#include "utvm/crt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Converts a difference of utvm_platform_cycles() values to nanoseconds. */
uint64_t utvm_zephyr_cycles_to_ns(uint32_t cycles);

/**
 * What utvm_platform_cycles() counts: "timing cycles" (Zephyr's timing functions, the CPU's
 * cycle counter on Cortex-M) or "k_cycle_get_32 ticks" (the system timer).
 */
const char* utvm_zephyr_cycles_unit(void);

/**
 * Bytes of the calling thread's stack never used so far (CONFIG_UTVM_STACK_CHECK).
 * Returns UTVM_OK; UTVM_ERR_UNSUPPORTED without CONFIG_UTVM_STACK_CHECK or when Zephyr cannot
 * tell (k_thread_stack_space_get: -ENOTSUP); UTVM_ERR_ARGUMENT when unused is NULL or for any
 * other error of k_thread_stack_space_get (*unused is then 0).
 */
utvm_status_t utvm_zephyr_stack_unused(size_t* unused);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_ZEPHYR_H_ */
