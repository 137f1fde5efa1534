/*
 * Environment API header named as TVM's generated C includes it. utvm's generated kernels
 * use nothing from it beyond tvm/ffi/c_api.h; it exists so the include resolves.
 */
#ifndef UTVM_TVM_FFI_EXTRA_C_ENV_API_H_
#define UTVM_TVM_FFI_EXTRA_C_ENV_API_H_

#include "../c_api.h"

#endif /* UTVM_TVM_FFI_EXTRA_C_ENV_API_H_ */
