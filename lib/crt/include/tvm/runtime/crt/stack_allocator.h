/*
 * TVM 0.18's stack allocator interface, for microTVM application code that manages a
 * workspace itself (aot_standalone_demo-style TVMPlatformMemoryAllocate): a last-in first-out
 * allocator over a caller-owned byte array. utvm's generated code does not use it: its
 * executor runs on the statically planned pool.
 */
#ifndef UTVM_TVM_RUNTIME_CRT_STACK_ALLOCATOR_H_
#define UTVM_TVM_RUNTIME_CRT_STACK_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "error_codes.h"

#ifndef TVM_RUNTIME_ALLOC_ALIGNMENT_BYTES
#define TVM_RUNTIME_ALLOC_ALIGNMENT_BYTES 16
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The caller-owned workspace (field names and order as TVM 0.18 declares them). */
typedef struct {
  uint8_t* next_alloc;   /* first free byte */
  uint8_t* workspace;    /* start of the workspace */
  size_t workspace_size; /* bytes in the workspace */
} tvm_workspace_t;

/* Takes `workspace_size` bytes at `g_aot_memory` (aligned up to the allocation alignment). */
tvm_crt_error_t StackMemoryManager_Init(tvm_workspace_t* tvm_runtime_workspace,
                                        uint8_t* g_aot_memory, size_t workspace_size);
/* `nbytes` rounded up to the alignment; kTvmErrorPlatformNoMemory when it does not fit. */
tvm_crt_error_t StackMemoryManager_Allocate(tvm_workspace_t* tvm_runtime_workspace, int32_t nbytes,
                                            void** current_alloc);
/* Frees the most recent allocation; kTvmErrorPlatformStackAllocBadFree for any other pointer. */
tvm_crt_error_t StackMemoryManager_Free(tvm_workspace_t* tvm_runtime_workspace, void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_STACK_ALLOCATOR_H_ */
