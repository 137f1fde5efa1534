/* Host definitions of the stand-in timing functions: see README.md. */
#include "zephyr/timing/timing.h"

uint64_t host_timing_step;
static timing_t counter = 0xfffffff0u; /* wraps the low 32 bits soon */

void timing_init(void) {}
void timing_start(void) {}
timing_t timing_counter_get(void) { return counter += host_timing_step; }
uint64_t timing_cycles_get(volatile timing_t* const start, volatile timing_t* const end) {
  return (uint32_t)(*end - *start);
}
uint64_t timing_cycles_to_ns(uint64_t cycles) { return cycles * 10u; /* a 100 MHz counter */ }
