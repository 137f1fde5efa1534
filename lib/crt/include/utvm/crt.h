/*
 * utvm C runtime: status codes and the workspace scratch used by generated kernels.
 * C99, no heap.
 */
#ifndef UTVM_CRT_H_
#define UTVM_CRT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status returned by every runtime and generated entry point; 0 is success. */
typedef enum {
  UTVM_OK = 0,
  UTVM_ERR_ARGUMENT = 1,      /**< a NULL or misaligned buffer, a bad index */
  UTVM_ERR_WORKSPACE = 2,     /**< a kernel asked for more scratch than planned */
  UTVM_ERR_KERNEL = 3,        /**< a kernel returned non-zero */
  UTVM_ERR_UNSUPPORTED = 4,   /**< not available in this build */
  UTVM_ERR_PROTOCOL = 5,      /**< malformed frame (RPC server) */
} utvm_status_t;

/** Alignment, in bytes, of every pool and of every offset the planner assigns. */
#define UTVM_POOL_ALIGNMENT 16

/**
 * Make [base, base + size) the scratch region that TVMBackendAllocWorkspace serves
 * for the next kernel call. The AOT executor calls this before a kernel that needs scratch;
 * size 0 disables scratch.
 */
void utvm_scratch_set(void* base, size_t size);

/** Bytes of scratch handed out and not yet freed (0 between kernel calls). */
size_t utvm_scratch_in_use(void);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_CRT_H_ */
