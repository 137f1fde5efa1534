/* int8 average pooling of the utvm plain-C external module (see utvm_plainc.h). */
#include "utvm_plainc.h"

#include <stddef.h>

static int32_t utvm_plainc_max(int32_t a, int32_t b) { return a > b ? a : b; }

static int32_t utvm_plainc_min(int32_t a, int32_t b) { return a < b ? a : b; }

int32_t utvm_plainc_avgpool_s8_buffer_size(int32_t channels) {
  return channels > 0 ? channels * (int32_t)sizeof(int32_t) : 0;
}

static int utvm_plainc_pool_params_ok(const utvm_plainc_pool_params_t* p) {
  return p->batches > 0 && p->in_h > 0 && p->in_w > 0 && p->channels > 0 && p->out_h > 0 && p->out_w > 0 &&
         p->pool_h > 0 && p->pool_w > 0 && p->stride_h > 0 && p->stride_w > 0 && p->pad_top >= 0 &&
         p->pad_left >= 0 && p->act_min <= p->act_max && p->act_min >= -128 && p->act_max <= 127;
}

/* Rounded quotient, halves away from zero, as TFLite's reference average pool. */
static int32_t utvm_plainc_average(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

utvm_plainc_status_t utvm_plainc_avgpool_s8(const utvm_plainc_pool_params_t* params, const int8_t* input,
                                            int8_t* output, int32_t* scratch, int32_t scratch_size) {
  int32_t b, oy, ox, y, x, c;
  if (params == NULL || input == NULL || output == NULL || scratch == NULL ||
      !utvm_plainc_pool_params_ok(params) ||
      scratch_size < utvm_plainc_avgpool_s8_buffer_size(params->channels)) {
    return UTVM_PLAINC_ERR_ARGUMENT;
  }
  for (b = 0; b < params->batches; ++b) {
    const int8_t* image = input + (size_t)b * (size_t)params->in_h * (size_t)params->in_w * (size_t)params->channels;
    int8_t* result = output + (size_t)b * (size_t)params->out_h * (size_t)params->out_w * (size_t)params->channels;
    for (oy = 0; oy < params->out_h; ++oy) {
      const int32_t y0 = oy * params->stride_h - params->pad_top;
      const int32_t y_begin = utvm_plainc_max(y0, 0);
      const int32_t y_end = utvm_plainc_min(y0 + params->pool_h, params->in_h);
      for (ox = 0; ox < params->out_w; ++ox) {
        const int32_t x0 = ox * params->stride_w - params->pad_left;
        const int32_t x_begin = utvm_plainc_max(x0, 0);
        const int32_t x_end = utvm_plainc_min(x0 + params->pool_w, params->in_w);
        const int32_t count = (y_end - y_begin) * (x_end - x_begin);
        int8_t* out = result + ((size_t)oy * (size_t)params->out_w + (size_t)ox) * (size_t)params->channels;
        if (y_end <= y_begin || x_end <= x_begin) {
          return UTVM_PLAINC_ERR_ARGUMENT; /* a window entirely in the padding */
        }
        for (c = 0; c < params->channels; ++c) {
          scratch[c] = 0;
        }
        for (y = y_begin; y < y_end; ++y) {
          for (x = x_begin; x < x_end; ++x) {
            const int8_t* cell = image + ((size_t)y * (size_t)params->in_w + (size_t)x) * (size_t)params->channels;
            for (c = 0; c < params->channels; ++c) {
              scratch[c] += cell[c];
            }
          }
        }
        for (c = 0; c < params->channels; ++c) {
          const int32_t v = utvm_plainc_average(scratch[c], count);
          out[c] = (int8_t)utvm_plainc_min(utvm_plainc_max(v, params->act_min), params->act_max);
        }
      }
    }
  }
  return UTVM_PLAINC_OK;
}
