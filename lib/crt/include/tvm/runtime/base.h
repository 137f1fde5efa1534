/*
 * Export macros named as TVM's generated C expects them. On a microcontroller nothing is
 * exported from a shared library, so they expand to nothing.
 */
#ifndef UTVM_TVM_RUNTIME_BASE_H_
#define UTVM_TVM_RUNTIME_BASE_H_

#ifndef TVM_DLL
#define TVM_DLL
#endif
#ifndef TVM_RUNTIME_DLL
#define TVM_RUNTIME_DLL
#endif

#endif /* UTVM_TVM_RUNTIME_BASE_H_ */
