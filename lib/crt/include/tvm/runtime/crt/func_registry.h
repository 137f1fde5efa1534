/*
 * TVM 0.18's function registry layout, as the system-library shim of
 * `utvm compile --compat tvm-0.18` fills it: ``names`` holds the number of functions in its
 * first two bytes (little endian), then the names, each ending in '\0', then one more '\0'.
 */
#ifndef UTVM_TVM_RUNTIME_CRT_FUNC_REGISTRY_H_
#define UTVM_TVM_RUNTIME_CRT_FUNC_REGISTRY_H_

#include "../c_backend_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TVMFuncRegistry {
  const char* names;
  const TVMBackendPackedCFunc* funcs;
} TVMFuncRegistry;

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_FUNC_REGISTRY_H_ */
