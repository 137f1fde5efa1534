/*
 * Model descriptor emitted with every compiled model, so that generic code (the RPC server,
 * samples, test harnesses) can drive any model without knowing its name.
 */
#ifndef UTVM_MODEL_H_
#define UTVM_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types, numbered as DLPack's type codes with the bit width. */
typedef enum {
  UTVM_DTYPE_INT8 = 0,
  UTVM_DTYPE_UINT8 = 1,
  UTVM_DTYPE_INT16 = 2,
  UTVM_DTYPE_INT32 = 3,
  UTVM_DTYPE_FLOAT32 = 4,
  UTVM_DTYPE_BOOL = 5, /* one byte, 0 or 1 */
  UTVM_DTYPE_INT64 = 6,
} utvm_dtype_t;

#define UTVM_MAX_DIMS 6

typedef struct {
  const char* name;
  utvm_dtype_t dtype;
  int32_t ndim;
  int32_t shape[UTVM_MAX_DIMS];
  uint32_t size_bytes;
  float scale;          /**< quantization scale, 0 when not quantized */
  int32_t zero_point;
} utvm_tensor_info_t;

typedef struct {
  const char* name;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const utvm_tensor_info_t* inputs;
  const utvm_tensor_info_t* outputs;
  uint32_t workspace_size;   /**< bytes of the pool */
  /** Run with the given I/O pointers; pool NULL means the model's static pool. Returns, as
   *  int32_t (TVM's AOT convention, like tvmgen_<name>_run), a utvm_status_t value of utvm/crt.h:
   *  UTVM_OK, UTVM_ERR_ARGUMENT (a NULL or misaligned pointer) or UTVM_ERR_KERNEL. */
  int32_t (*run)(void* const* inputs, void* const* outputs, uint8_t* pool);
  /** With --io-in-pool: where input/output i lives inside pool (NULL pool = static); else NULL. */
  void* (*io_in_pool)(uint8_t* pool, int32_t is_output, uint32_t index);
  uint32_t num_ops;
  const char* const* op_names;
  uint32_t* op_cycles;       /**< filled per run when compiled with UTVM_PROFILE, else NULL */
  uint32_t state_size;       /**< bytes of state kept between runs (outside the pool) */
  void (*reset)(void);       /**< set that state to its initial value */
} utvm_model_t;

#ifdef __cplusplus
}
#endif

#endif /* UTVM_MODEL_H_ */
