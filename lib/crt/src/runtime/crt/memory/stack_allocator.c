/*
 * TVM 0.18's StackMemoryManager_* over a caller-owned workspace (see
 * tvm/runtime/crt/stack_allocator.h). It sits where TVM 0.18's standalone CRT kept its own
 * (src/runtime/crt/memory/stack_allocator.c), so Makefiles written for a TVM 0.18 MLF's
 * runtime/ directory (apps/microtvm/cmsisnn and the like) find it; utvm's own builds compile
 * the .c files of runtime/src itself only, never this file.
 *
 * Every block is followed by one aligned trailer word holding the block's offset in the
 * workspace, so a free can check that it releases the most recent block.
 */
#include <stddef.h>
#include <stdint.h>

#include "tvm/runtime/crt/stack_allocator.h"

#define UTVM_SA_ALIGN ((uintptr_t)TVM_RUNTIME_ALLOC_ALIGNMENT_BYTES)

static uintptr_t utvm_sa_align_up(uintptr_t n) { return (n + UTVM_SA_ALIGN - 1u) & ~(UTVM_SA_ALIGN - 1u); }

tvm_crt_error_t StackMemoryManager_Init(tvm_workspace_t* ws, uint8_t* g_aot_memory, size_t workspace_size) {
  uintptr_t start;
  uintptr_t skip;
  if (ws == NULL || g_aot_memory == NULL) {
    return kTvmErrorFunctionCallInvalidArg;
  }
  start = utvm_sa_align_up((uintptr_t)g_aot_memory);
  skip = start - (uintptr_t)g_aot_memory;
  if (skip > workspace_size) {
    return kTvmErrorPlatformNoMemory;
  }
  ws->workspace = g_aot_memory + skip;
  ws->next_alloc = ws->workspace;
  ws->workspace_size = workspace_size - (size_t)skip;
  return kTvmErrorNoError;
}

tvm_crt_error_t StackMemoryManager_Allocate(tvm_workspace_t* ws, int32_t nbytes, void** current_alloc) {
  size_t used;
  size_t need;
  uint8_t* block;
  if (ws == NULL || ws->workspace == NULL || current_alloc == NULL || nbytes < 0) {
    return kTvmErrorFunctionCallInvalidArg;
  }
  used = (size_t)(ws->next_alloc - ws->workspace);
  need = (size_t)utvm_sa_align_up((uintptr_t)nbytes) + (size_t)UTVM_SA_ALIGN;
  if (need > ws->workspace_size - used) {
    return kTvmErrorPlatformNoMemory;
  }
  block = ws->next_alloc;
  ws->next_alloc += need;
  *(uint32_t*)(void*)(ws->next_alloc - UTVM_SA_ALIGN) = (uint32_t)used;
  *current_alloc = block;
  return kTvmErrorNoError;
}

tvm_crt_error_t StackMemoryManager_Free(tvm_workspace_t* ws, void* ptr) {
  uint8_t* p = (uint8_t*)ptr;
  if (ws == NULL || ws->workspace == NULL || p == NULL) {
    return kTvmErrorFunctionCallInvalidArg;
  }
  if (ws->next_alloc == ws->workspace || p < ws->workspace || p >= ws->next_alloc ||
      *(const uint32_t*)(const void*)(ws->next_alloc - UTVM_SA_ALIGN) != (uint32_t)(p - ws->workspace)) {
    return kTvmErrorPlatformStackAllocBadFree;
  }
  ws->next_alloc = p;
  return kTvmErrorNoError;
}
