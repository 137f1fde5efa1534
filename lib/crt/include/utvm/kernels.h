/* Small integer helpers that utvm's generated kernels call (header-only, C99).
 *
 * Since the split of issue 24 they live in one header per operator family and instruction set
 * under utvm/kernels/ (<family>_<isa>.h, isa c | dsp | mve); generated code includes only the
 * ones its kernels call. This umbrella includes all of them, for hand-written callers. */
#ifndef UTVM_KERNELS_H_
#define UTVM_KERNELS_H_

#include "kernels_dsp.h"
#include "kernels_mve.h"
#include "kernels/mac_c.h"
#include "kernels/common.h"
#include "kernels/mac_dsp.h"
#include "kernels/requant_dsp.h"
#include "kernels/requant_c.h"
#include "kernels/mac16_dsp.h"
#include "kernels/mac16_c.h"
#include "kernels/conv_c.h"
#include "kernels/gemm_c.h"
#include "kernels/copy_c.h"
#include "kernels/depthwise_dsp.h"
#include "kernels/depthwise_dsp_tiny.h"

#endif /* UTVM_KERNELS_H_ */
