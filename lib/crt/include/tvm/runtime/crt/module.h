/*
 * TVM 0.18's CRT module: a function registry. A model compiled with
 * `utvm compile --compat tvm-0.18` defines TVMSystemLibEntryPoint() over it.
 */
#ifndef UTVM_TVM_RUNTIME_CRT_MODULE_H_
#define UTVM_TVM_RUNTIME_CRT_MODULE_H_

#include "func_registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TVMModule {
  const TVMFuncRegistry* registry;
} TVMModule;

/** The system library: the model's functions by name (tvmgen_<name>___tvm_main__). */
const TVMModule* TVMSystemLibEntryPoint(void);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_MODULE_H_ */
