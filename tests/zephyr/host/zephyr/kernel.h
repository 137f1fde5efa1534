/* Host stand-in for <zephyr/kernel.h>: see ../README.md. */
#ifndef ZTEST_HOST_KERNEL_H_
#define ZTEST_HOST_KERNEL_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "zephyr/sys/printk.h"

#define ARG_UNUSED(x) (void)(x)
#define __aligned(x) __attribute__((aligned(x)))
#define CODE_UNREACHABLE __builtin_unreachable()

struct k_thread;
typedef struct k_thread* k_tid_t;

uint32_t k_cycle_get_32(void);
void k_busy_wait(uint32_t usec_to_wait);
uint64_t k_cyc_to_ns_floor64(uint64_t cycles);
k_tid_t k_current_get(void);
int k_thread_stack_space_get(const struct k_thread* thread, size_t* unused_ptr);
#define k_panic() abort()
#define k_oops() abort()

#endif
