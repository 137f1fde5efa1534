/*
 * TVM 0.18 runtime functions that microTVM application code calls, over utvm's port hooks:
 * code written for microTVM (TVMLogf, TVMPlatformAbort) links against utvm's runtime. Only
 * for builds of utvm's runtime: a project that links TVM 0.18's own CRT has these already.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tvm/runtime/crt/logging.h"
#include "tvm/runtime/crt/platform.h"
#include "utvm/platform.h"

void TVMPlatformAbort(tvm_crt_error_t code) { utvm_platform_abort((int32_t)code); }

void TVMLogf(const char* fmt, ...) {
  char line[128];
  va_list args;
  va_start(args, fmt);
  (void)vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  utvm_platform_log("%s", line);
}
