/*
 * The backend functions TVM-generated kernels call (TVMBackendAllocWorkspace, ...), placed where
 * TVM 0.18's standalone CRT kept them (src/runtime/crt/common/crt_backend_api.c), for Makefiles
 * written for a TVM 0.18 MLF's runtime/ directory (apps/microtvm/cmsisnn and the like). Those
 * builds compile this file and stack_allocator.c, no utvm port, and the application defines
 * TVMLogf and TVMPlatformAbort: utvm's port hooks are served by them here.
 *
 * utvm's own builds compile the .c files of runtime/src itself and one port instead, never this file.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tvm/runtime/crt/logging.h"
#include "tvm/runtime/crt/platform.h"
#include "utvm/platform.h"

#include "../../../backend.c"

void utvm_platform_log(const char* fmt, ...) {
  char line[128];
  va_list args;
  va_start(args, fmt);
  (void)vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  TVMLogf("%s\n", line);
}

void utvm_platform_abort(int32_t code) {
  TVMPlatformAbort((tvm_crt_error_t)code);
}

uint32_t utvm_platform_cycles(void) { return 0u; }
