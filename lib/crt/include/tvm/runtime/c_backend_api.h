/*
 * Backend functions that TVM-generated kernels call. utvm serves workspace requests from the
 * scratch region the AOT executor planned for the current kernel (see utvm/crt.h); there is
 * no heap behind them.
 */
#ifndef UTVM_TVM_RUNTIME_C_BACKEND_API_H_
#define UTVM_TVM_RUNTIME_C_BACKEND_API_H_

#include <stdint.h>

#include "../ffi/c_api.h"
#include "base.h"
#include "c_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Returns scratch memory of nbytes, or NULL when the planned scratch is exhausted. */
void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                               int dtype_code_hint, int dtype_bits_hint);

/** Releases the most recent allocation; returns 0, or -1 when ptr is not the last one. */
int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);

/** TVM 0.18's packed function signature (the system-library shim of --compat tvm-0.18). */
typedef int (*TVMBackendPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                                     TVMValue* out_ret_value, int* out_ret_tcode,
                                     void* resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_C_BACKEND_API_H_ */
