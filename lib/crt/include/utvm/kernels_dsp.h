/* The DSP (Armv7E-M SIMD32) GEMM kernels of CONV_2D and FULLY_CONNECTED.
 *
 * Since the split of issue 24 they live in one header per operator family and instruction set
 * under utvm/kernels/ (<family>_<isa>.h, isa c | dsp | mve); generated code includes only the
 * ones its kernels call. This umbrella includes those that were kernels_dsp.h, for hand-written callers. */
#ifndef UTVM_KERNELS_DSP_H_
#define UTVM_KERNELS_DSP_H_

#include "kernels/gemm_dsp.h"
#include "kernels/common_dsp.h"
#include "kernels/fully_connected_dsp.h"

#include "kernels/conv_dsp_short.h"

#endif /* UTVM_KERNELS_DSP_H_ */
