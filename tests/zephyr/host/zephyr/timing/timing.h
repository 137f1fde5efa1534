/* Host stand-in for <zephyr/timing/timing.h>: see ../../README.md. The counter advances by
 * host_timing_step per read (0: a counter that does not run, as DWT under QEMU). */
#ifndef ZTEST_HOST_TIMING_H_
#define ZTEST_HOST_TIMING_H_

#include <stdint.h>

typedef uint64_t timing_t;

extern uint64_t host_timing_step;

void timing_init(void);
void timing_start(void);
timing_t timing_counter_get(void);
uint64_t timing_cycles_get(volatile timing_t* const start, volatile timing_t* const end);
uint64_t timing_cycles_to_ns(uint64_t cycles);

#endif
