/* TVM 0.18's TVMLogf, for microTVM application code: a log line through the port's hook. */
#ifndef UTVM_TVM_RUNTIME_CRT_LOGGING_H_
#define UTVM_TVM_RUNTIME_CRT_LOGGING_H_

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

void TVMLogf(const char* fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_TVM_RUNTIME_CRT_LOGGING_H_ */
