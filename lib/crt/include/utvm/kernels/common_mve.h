/* utvm/kernels/common_mve.h: moved from kernels_mve.h by the split of issue 24 (one header per
 * operator family and instruction set, the bodies unchanged). */
#ifndef UTVM_KERNELS_COMMON_MVE_H_
#define UTVM_KERNELS_COMMON_MVE_H_

/*
 * int8 layer helpers for Helium (MVE: Cortex-M52, M55, M85) that utvm's generated kernels call
 * (header-only, C99). Each helper does a whole layer (utvm_mve_dw3x3_row_s8: an output row);
 * the generated code passes the geometry as constants, so that the helpers, always inlined,
 * are specialised for their layer. With __ARM_FEATURE_MVE they use vector instructions (the
 * hottest loops as inline assembly, when optimizing: the step counts and strides are then
 * immediates), elsewhere plain C with the same results (the arithmetic is TFLite's,
 * bit-exact).
 *
 * Requantization: per output channel o,
 *   y = clamp(MultiplyByQuantizedMultiplier(acc + bias[o], mult[o], shift[o]) + zy, lo, hi)
 * (bias folded with the input zero point; shifts in TFLite's convention: > 0 left, < 0 right).
 * Vector form: VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul exactly; gemmlowp's
 * rounding right shift (ties away from zero) is VRSHL (ties up) after subtracting one from the
 * negative values: with a multiplier in a scalar register, VQRDMLAH of the value onto its
 * sign (-1 or 0) does both in one instruction (right shifts of 1..31 only; 0 - 1 still rounds
 * to 0); else VAND of the value with the (negative) shift, VSHR by 31 and VQADD.
 * Per lane, the counts QEMU reports are instructions, not beats: one VMLADAV(A) is 16
 * multiply-accumulates.
 *
 * - utvm_mve_conv42_s8: convolutions (any window, stride, dilation, padding) in blocks of 4
 *   output pixels x 2 filter vectors: 8 VMLADAV(A) per 16-byte step (14 instructions per 128
 *   products); rows read in place (pointwise layers), from a band of the input re-laid out
 *   (few input channels) or gathered patches; requantization records beside the filters,
 *   pruned channels (weights all zero) from a constant template.
 * - utvm_mve_dwg_s8: 3x3 depthwise (multiplier 1, 8n channels): one VMLADAV per output on a
 *   gather (8-bit offsets into a tile of the input) shared by 2 or 3 output pixels.
 * - utvm_mve_dwt_s8: 3x3 depthwise on tiny maps (any channel count): every output pixel its own
 *   case (its taps inside the input only), 4 channels per vector of dot products.
 * - utvm_mve_fc4_s8: fully connected layers, 4 units per input load.
 * - utvm_mve_dw3x3_row_s8: 3x3 depthwise with 4n channels or dilation, one output row: four
 *   pixels x four channels per step, read in place (a tap in the padding adds the zero point
 *   times its weight).
 * - utvm_mve_add_s8: TFLite's int8 ADD of two tensors of n elements (same shape), 16 elements
 *   per step (4 x int32x4), the last n % 16 four at a time under a predicate.
 * - utvm_mve_im2col_s8 / utvm_mve_gemm_s8: one output pixel's patch made contiguous, and up to
 *   four such patches x all channels (the first Helium convolution helpers, kept for the
 *   phases of TRANSPOSE_CONV; utvm_mve_matvec_s8 of BATCH_MATMUL shares the GEMM loop).
 * - The 16x8 and recurrent helpers at the end of the file (utvm_mve_mac4_s16, utvm_mve_dw_row_s16,
 *   utvm_mve_lstm_*), described where they are defined.
 * The requantization of utvm_mve_dw3x3_row_s8 ("rq", utvm_mve_rq_t) is stored as compactly as
 * the generic kernels store it: the folded biases an int32 array; the multipliers an int32
 * array (UTVM_MVE_RQ_MULT) or one value m0; the shifts one value s0, or in the low byte of the
 * bias words (UTVM_MVE_RQ_PACKED: bias * 256 + (shift & 255), the byte VRSHL by a register
 * reads as its signed shift), or an int8 array (UTVM_MVE_RQ_SHIFT8); the unused pointers are
 * the bias pointer.
 */

#include <stdint.h>

#include "common.h" /* UTVM_INLINE */

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define UTVM_MVE_VECTOR 1
#endif

/* a value known when compiling with optimization (inline assembly may then take it as an
 * immediate operand; without optimization nothing is, and the helpers take their general path) */
#ifdef __OPTIMIZE__
#define UTVM_MVE_CONSTANT(v) __builtin_constant_p(v)
#else
#define UTVM_MVE_CONSTANT(v) 0
#endif

#endif /* UTVM_KERNELS_COMMON_MVE_H_ */
