/*
 * TVM 0.18's CRT status codes that microTVM applications test (tvm_crt_error_t); utvm's own
 * status codes are utvm_status_t in utvm/crt.h.
 */
#ifndef UTVM_TVM_RUNTIME_CRT_ERROR_CODES_H_
#define UTVM_TVM_RUNTIME_CRT_ERROR_CODES_H_

#ifdef __cplusplus
extern "C" {
#endif

/* TVM 0.18's numbering: category << 8 | code. */
typedef enum {
  kTvmErrorNoError = 0,
  kTvmErrorFunctionNameNotFound = 0x0100,
  kTvmErrorFunctionIndexInvalid = 0x0101,
  kTvmErrorPlatformCheckFailure = 0x0500,
  kTvmErrorPlatformMemoryManagerInitialized = 0x0501,
  kTvmErrorPlatformShutdown = 0x0502,
  kTvmErrorPlatformNoMemory = 0x0503,
  kTvmErrorPlatformTimerBadState = 0x0504,
  kTvmErrorPlatformStackAllocBadFree = 0x0505,
  kTvmErrorFunctionCallNumArguments = 0x0800,
  kTvmErrorFunctionCallWrongArgType = 0x0801,
  kTvmErrorFunctionCallNotImplemented = 0x0802,
  kTvmErrorFunctionCallInvalidArg = 0x0803
} tvm_crt_error_t;

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_ERROR_CODES_H_ */
