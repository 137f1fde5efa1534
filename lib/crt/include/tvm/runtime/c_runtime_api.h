/*
 * TVM 0.18's C runtime API names, for code written for microTVM: the argument value union of
 * packed functions and its type codes. utvm's own code does not need them; the system-library
 * shim of `utvm compile --compat tvm-0.18` and microTVM applications do.
 */
#ifndef UTVM_TVM_RUNTIME_C_RUNTIME_API_H_
#define UTVM_TVM_RUNTIME_C_RUNTIME_API_H_

#include <stdint.h>

#include "../../dlpack/dlpack.h"
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One argument or return value of a packed function (TVM 0.18's TVMValue). */
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

/** Type codes of TVMValue that the shim uses (TVM 0.18's numbering). */
enum {
  kTVMOpaqueHandle = 3,
  kTVMNullptr = 4,
  kTVMDLTensorHandle = 7,
  kTVMNDArrayHandle = 13
};

typedef void* TVMFunctionHandle;
typedef void* TVMModuleHandle;

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_C_RUNTIME_API_H_ */
