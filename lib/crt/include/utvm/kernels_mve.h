/* The Helium (MVE) kernels.
 *
 * Since the split of issue 24 they live in one header per operator family and instruction set
 * under utvm/kernels/ (<family>_<isa>.h, isa c | dsp | mve); generated code includes only the
 * ones its kernels call. This umbrella includes those that were kernels_mve.h, for hand-written callers. */
#ifndef UTVM_KERNELS_MVE_H_
#define UTVM_KERNELS_MVE_H_

#include "kernels/common_mve.h"
#include "kernels/requant_mve.h"
#include "kernels/copy_mve.h"
#include "kernels/gemm_mve.h"
#include "kernels/depthwise_mve.h"
#include "kernels/add_mve.h"
#include "kernels/conv_mve.h"
#include "kernels/depthwise_mve_tiny.h"
#include "kernels/fully_connected_mve.h"
#include "kernels/mac_mve.h"
#include "kernels/lstm_mve.h"
#include "kernels/mac16_mve.h"

#include "kernels/depthwise_mve_mult.h"

#include "kernels/depthwise_mve_k.h"

#include "kernels/depthwise_mve_row.h"

#endif /* UTVM_KERNELS_MVE_H_ */
