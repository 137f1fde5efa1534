/*
 * Helpers the Zephyr port adds to utvm/platform.h, for applications and samples.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef UTVM_ZEPHYR_H_
#define UTVM_ZEPHYR_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Converts a difference of utvm_platform_cycles() values to nanoseconds. */
uint64_t utvm_zephyr_cycles_to_ns(uint32_t cycles);

/**
 * Bytes of the calling thread's stack never used so far (CONFIG_TVM_STACK_CHECK).
 * Returns 0 on success, -ENOTSUP without CONFIG_TVM_STACK_CHECK, or the error of
 * k_thread_stack_space_get().
 */
int utvm_zephyr_stack_unused(size_t* unused);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_ZEPHYR_H_ */
