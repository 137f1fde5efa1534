/*
 * The part of the tvm-ffi C ABI that TVM 0.27's C code generator relies on: the packed
 * argument cell TVMFFIAny and the type indices of the values the AOT executor passes.
 * Layout facts: a 4-byte type index, 4 bytes of padding, an 8-byte value union (16 bytes,
 * 8-aligned, on 32- and 64-bit targets alike). The value union is anonymous because the
 * generated code names its members directly (a GNU C / C11 feature that gcc and clang
 * accept in C99 mode).
 */
#ifndef UTVM_TVM_FFI_C_API_H_
#define UTVM_TVM_FFI_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "../../dlpack/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TVM_FFI_DLL
#define TVM_FFI_DLL
#endif

/** Type indices that can appear in generated code (values fixed by tvm-ffi). */
typedef enum {
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFITensor = 70,
} TVMFFITypeIndex;

typedef struct {
  int32_t type_index;
  uint32_t zero_padding; /* small_str_len in tvm-ffi; unused here */
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
  };
} TVMFFIAny;

typedef void* TVMFFIObjectHandle;

/** Error reporting used by kernels compiled with checks; utvm's runtime logs the message. */
TVM_FFI_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_FFI_C_API_H_ */
