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

/**
 * Status of the runtime's entry points that can fail; 0 is success.
 *
 * utvm_status_t: utvm_rpc_init, utvm_rpc_serve (rpc.h), utvm_zephyr_stack_unused (the Zephyr
 * port). Those that cannot fail return void (utvm_scratch_set, utvm_rpc_feed, utvm_rpc_timeout,
 * utvm_platform_log; utvm_platform_abort does not return); queries return their value
 * (utvm_scratch_in_use, utvm_rpc_in_frame, utvm_rpc_io_size, utvm_platform_cycles, ...).
 *
 * The generated functions keep TVM's AOT ABI, int32_t with 0 for success, which MLF consumers
 * rely on: tvmgen_<name>_run, _run_with_pool, _run_with_pools (and utvm_model_t.run, which points
 * at the model's run) return these values as int32_t: UTVM_OK (0), UTVM_ERR_ARGUMENT (1: a NULL
 * or misaligned input, output or pool pointer) or UTVM_ERR_KERNEL (3: a kernel returned non-zero,
 * e.g. TVMBackendAllocWorkspace found no scratch); compare them with the enum values. The TVM
 * backend hooks (TVMBackendAllocWorkspace, TVMBackendFreeWorkspace, the TVM 0.18 compat layer)
 * keep TVM's own signatures. The RPC transport callbacks (utvm_rpc_read_fn, utvm_rpc_write_fn)
 * return byte counts or a negative value, as read(2) and write(2).
 */
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
