/*
 * Backend functions called by TVM-generated kernels, served without a heap.
 *
 * The memory planner gives every kernel that needs temporaries a scratch block in the
 * workspace pool; the AOT executor hands it over with utvm_scratch_set() before the call.
 * Allocations are carved from it in last-in first-out order, aligned to UTVM_POOL_ALIGNMENT.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvm/runtime/c_backend_api.h"
#include "utvm/crt.h"
#include "utvm/platform.h"

#define UTVM_SCRATCH_MAX_DEPTH 16

static uint8_t* g_scratch_base;
static size_t g_scratch_size;
static size_t g_scratch_used;
static size_t g_scratch_marks[UTVM_SCRATCH_MAX_DEPTH];
static uint32_t g_scratch_depth;

void utvm_scratch_set(void* base, size_t size) {
  g_scratch_base = (uint8_t*)base;
  g_scratch_size = (base == NULL) ? 0u : size;
  g_scratch_used = 0u;
  g_scratch_depth = 0u;
}

size_t utvm_scratch_in_use(void) { return g_scratch_used; }

static size_t utvm_align_up(size_t n) {
  return (n + (UTVM_POOL_ALIGNMENT - 1u)) & ~(size_t)(UTVM_POOL_ALIGNMENT - 1u);
}

void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint) {
  size_t need;
  void* ptr;
  (void)device_type;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
  if (g_scratch_depth >= UTVM_SCRATCH_MAX_DEPTH || nbytes > (uint64_t)g_scratch_size) {
    return NULL;
  }
  need = utvm_align_up((size_t)nbytes);
  if (need > g_scratch_size - g_scratch_used) {
    return NULL;
  }
  ptr = g_scratch_base + g_scratch_used;
  g_scratch_marks[g_scratch_depth++] = g_scratch_used;
  g_scratch_used += need;
  return ptr;
}

int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type;
  (void)device_id;
  if (g_scratch_depth == 0u) {
    return -1;
  }
  if ((uint8_t*)ptr != g_scratch_base + g_scratch_marks[g_scratch_depth - 1u]) {
    return -1;
  }
  g_scratch_depth--;
  g_scratch_used = g_scratch_marks[g_scratch_depth];
  return 0;
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  utvm_platform_log("utvm: kernel error %s: %s", kind, message);
}
