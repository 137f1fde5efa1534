/*
 * utvm plain-C external module: operators written in portable C99 that the compiler can
 * offload to through its external-module registry (python -m utvm compile --offload plain-c).
 *
 * It exists to exercise that path end to end (pattern, glue call in the AOT executor,
 * library sources in the Model Library Format, scratch from the memory plan) with a library
 * that is always present. Results are bit-exact with TensorFlow Lite Micro's reference kernels.
 *
 * Conventions: caller-owned buffers, sizes queried up front, no heap, status codes.
 */
#ifndef UTVM_PLAINC_H_
#define UTVM_PLAINC_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  UTVM_PLAINC_OK = 0,
  UTVM_PLAINC_ERR_ARGUMENT = -1, /**< NULL pointer, bad dimension or scratch too small */
} utvm_plainc_status_t;

/** A 2-D pooling window over an NHWC int8 tensor. */
typedef struct {
  int32_t batches;
  int32_t in_h, in_w, channels;
  int32_t out_h, out_w;
  int32_t pool_h, pool_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left; /**< padding before the first row / column */
  int32_t act_min, act_max;  /**< output clamp (fused activation), in [-128, 127] */
} utvm_plainc_pool_params_t;

/** Bytes of scratch utvm_plainc_avgpool_s8() needs: one int32 sum per channel. */
int32_t utvm_plainc_avgpool_s8_buffer_size(int32_t channels);

/**
 * int8 average pooling with TFLite's rounding (half away from zero) over the window
 * cells that lie inside the input. ``scratch`` holds utvm_plainc_avgpool_s8_buffer_size()
 * bytes, 4-byte aligned; ``input`` and ``output`` must not overlap.
 */
utvm_plainc_status_t utvm_plainc_avgpool_s8(const utvm_plainc_pool_params_t* params, const int8_t* input,
                                            int8_t* output, int32_t* scratch, int32_t scratch_size);

#ifdef __cplusplus
}
#endif

#endif /* UTVM_PLAINC_H_ */
