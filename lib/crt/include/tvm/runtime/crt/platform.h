/*
 * TVM 0.18's platform functions, for microTVM application code. With utvm's runtime they are
 * implemented over the port's hooks (utvm/platform.h): TVMPlatformAbort and TVMLogf in
 * runtime/src/compat_v018.c, the timer pair in the MLF's templates/platform.c.template.
 */
#ifndef UTVM_TVM_RUNTIME_CRT_PLATFORM_H_
#define UTVM_TVM_RUNTIME_CRT_PLATFORM_H_

#include <stdarg.h>
#include <stddef.h>

#include "error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void TVMPlatformAbort(tvm_crt_error_t code);

tvm_crt_error_t TVMPlatformTimerStart(void);
tvm_crt_error_t TVMPlatformTimerStop(double* elapsed_time_seconds);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_PLATFORM_H_ */
