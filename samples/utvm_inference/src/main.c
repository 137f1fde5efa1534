/*
 * utvm_inference: run a model compiled at build time by tvm_add_model() and check its output
 * against the one TFLite Micro computed for the same input (tvmgen_<name>_testdata.h).
 *
 * The model is driven through its descriptor (utvm/model.h), so this file does not depend on
 * the model's tensor names; CMakeLists.txt passes the model's name:
 *   UTVM_SAMPLE_MODEL, UTVM_SAMPLE_MODEL_UPPER, UTVM_SAMPLE_MODEL_H, UTVM_SAMPLE_TESTDATA_H.
 *
 * The last line is the verdict: "utvm_inference: PASS", or "utvm_inference: FAIL" followed by
 * twister's failure marker, so that twister ends the run at once instead of waiting for its
 * timeout. Without a reference output (tflite-micro has no wheels for the host the sample was
 * built on: macOS, Windows, Linux aarch64) the outputs cannot be checked: one line says so and
 * the verdict is "utvm_inference: PASS (outputs not checked)": the run itself (status, scratch,
 * pool guard) is still checked.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include "utvm/crt.h"
#include "utvm/model.h"
#include "utvm/platform.h"
#include "utvm_zephyr.h"

#include UTVM_SAMPLE_MODEL_H
#include UTVM_SAMPLE_TESTDATA_H

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)

#define MODEL CAT3(tvmgen_, UTVM_SAMPLE_MODEL, _model)
#define TEST_INPUTS CAT3(tvmgen_, UTVM_SAMPLE_MODEL, _test_inputs)
#define TEST_OUTPUTS CAT3(tvmgen_, UTVM_SAMPLE_MODEL, _test_outputs)
#define NUM_INPUTS CAT3(TVMGEN_, UTVM_SAMPLE_MODEL_UPPER, _TEST_NUM_INPUTS)
#define NUM_OUTPUTS CAT3(TVMGEN_, UTVM_SAMPLE_MODEL_UPPER, _TEST_NUM_OUTPUTS)
#define IO_BYTES CAT3(TVMGEN_, UTVM_SAMPLE_MODEL_UPPER, _TEST_IO_BYTES)
#define WORKSPACE_SIZE CAT3(TVMGEN_, UTVM_SAMPLE_MODEL_UPPER, _WORKSPACE_SIZE)

#define RUNS 3

/* What twister's harnesses take as a failed run (twisterlib/harness.py, RUN_FAILED). */
#define TWISTER_RUN_FAILED "PROJECT EXECUTION FAILED"

#define HAS_REFERENCE CAT3(TVMGEN_, UTVM_SAMPLE_MODEL_UPPER, _TEST_HAS_REFERENCE)
#define ALIGN_UP(n) (((n) + (UTVM_POOL_ALIGNMENT - 1u)) & ~(size_t)(UTVM_POOL_ALIGNMENT - 1u))

/* Application-owned I/O buffers (unless the model keeps its I/O inside its pool). */
static uint8_t io_buffer[IO_BYTES] __aligned(UTVM_POOL_ALIGNMENT);

#if defined(CONFIG_UTVM_WORKSPACE_CHECK)
/* A pool of the model's own, followed by guard bytes that inference must leave alone. */
#define GUARD_BYTES 64u
#define GUARD_VALUE 0xa5u
static uint8_t checked_pool[WORKSPACE_SIZE + GUARD_BYTES] __aligned(UTVM_POOL_ALIGNMENT);
#define POOL checked_pool
#else
#define POOL NULL /* the model's static pool */
#endif

static void* inputs[NUM_INPUTS];
static void* outputs[NUM_OUTPUTS];

static void place_io(const utvm_model_t* m) {
  size_t offset = 0;
  uint32_t i;

  for (i = 0; i < m->num_inputs; i++) {
    if (m->io_in_pool != NULL) {
      inputs[i] = m->io_in_pool(POOL, 0, i);
    } else {
      inputs[i] = &io_buffer[offset];
      offset += ALIGN_UP(m->inputs[i].size_bytes);
    }
  }
  for (i = 0; i < m->num_outputs; i++) {
    if (m->io_in_pool != NULL) {
      outputs[i] = m->io_in_pool(POOL, 1, i);
    } else {
      outputs[i] = &io_buffer[offset];
      offset += ALIGN_UP(m->outputs[i].size_bytes);
    }
  }
}

static void fill_inputs(const utvm_model_t* m) {
  uint32_t i;

  /* Refilled before every run: the model may reuse input memory for later layers. */
  for (i = 0; i < m->num_inputs; i++) {
    memcpy(inputs[i], TEST_INPUTS[i], m->inputs[i].size_bytes);
  }
  for (i = 0; i < m->num_outputs; i++) {
    memset(outputs[i], 0, m->outputs[i].size_bytes);
  }
}

static int32_t element(const utvm_tensor_info_t* t, const uint8_t* data, uint32_t k) {
  switch (t->dtype) {
    case UTVM_DTYPE_INT8:
      return ((const int8_t*)data)[k];
    case UTVM_DTYPE_UINT8:
    case UTVM_DTYPE_BOOL:
      return data[k];
    case UTVM_DTYPE_INT16:
      return ((const int16_t*)data)[k];
    case UTVM_DTYPE_INT32:
      return ((const int32_t*)data)[k];
    case UTVM_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, data + 8u * k, sizeof(v));
      return (int32_t)v;
    }
    case UTVM_DTYPE_FLOAT32:
    default: {
      /* printk has no %f: float outputs are printed in millionths. */
      float v;
      memcpy(&v, data + 4u * k, sizeof(v));
      return (int32_t)(v * 1e6f);
    }
  }
}

static uint32_t element_size(utvm_dtype_t dtype) {
  switch (dtype) {
    case UTVM_DTYPE_INT8:
    case UTVM_DTYPE_UINT8:
    case UTVM_DTYPE_BOOL:
      return 1u;
    case UTVM_DTYPE_INT16:
      return 2u;
    case UTVM_DTYPE_INT64:
      return 8u;
    default:
      return 4u;
  }
}

#if HAS_REFERENCE
/* Integers must match exactly; floats to 1e-5 absolute plus 1e-4 relative. */
static bool output_matches(const utvm_tensor_info_t* t, const uint8_t* got, const uint8_t* want) {
  uint32_t k, n;

  if (t->dtype != UTVM_DTYPE_FLOAT32) {
    return memcmp(got, want, t->size_bytes) == 0;
  }
  n = t->size_bytes / 4u;
  for (k = 0; k < n; k++) {
    float a, b, d;
    memcpy(&a, got + 4u * k, sizeof(a));
    memcpy(&b, want + 4u * k, sizeof(b));
    d = a > b ? a - b : b - a;
    if (!(d <= 1e-5f + 1e-4f * (b < 0 ? -b : b))) {
      return false;
    }
  }
  return true;
}
#endif

static void print_tensor(const char* what, uint32_t index, const utvm_tensor_info_t* t,
                         const uint8_t* data) {
  uint32_t n = t->size_bytes / element_size(t->dtype);
  uint32_t k;

  printk("%s %u (%s):", what, (unsigned)index, t->name);
  for (k = 0; k < n && k < 32u; k++) {
    printk(" %d", (int)element(t, data, k));
  }
  printk("%s\n", n > 32u ? " ..." : "");
}

/* Prints the verdict line (and twister's failure marker); main() returns its result. */
static int verdict(bool pass) {
  if (pass) {
    printk("utvm_inference: PASS%s\n", HAS_REFERENCE ? "" : " (outputs not checked)");
    return 0;
  }
  printk("utvm_inference: FAIL\n");
  printk("%s\n", TWISTER_RUN_FAILED);
  return 1;
}

int main(void) {
  const utvm_model_t* m = &MODEL;
  uint32_t best = UINT32_MAX;
  bool pass = true;
  uint32_t i;
  int run;

  printk("utvm_inference: model %s, %u input(s), %u output(s), pool %u bytes\n", m->name,
         (unsigned)m->num_inputs, (unsigned)m->num_outputs, (unsigned)m->workspace_size);
  place_io(m);
#if defined(CONFIG_UTVM_WORKSPACE_CHECK)
  memset(&checked_pool[WORKSPACE_SIZE], GUARD_VALUE, GUARD_BYTES);
#endif

  for (run = 0; run < RUNS; run++) {
    uint32_t start, cycles;
    int32_t status;

    fill_inputs(m);
    start = utvm_platform_cycles();
    status = m->run(inputs, outputs, POOL);
    cycles = utvm_platform_cycles() - start;
    if (status != UTVM_OK) {
      printk("utvm_inference: run failed with status %d\n", (int)status);
      return verdict(false);
    }
    if (utvm_scratch_in_use() != 0u) {
      printk("utvm_inference: %u bytes of kernel scratch not released\n",
             (unsigned)utvm_scratch_in_use());
      pass = false;
    }
#if defined(CONFIG_UTVM_WORKSPACE_CHECK)
    for (i = 0; i < GUARD_BYTES; i++) {
      if (checked_pool[WORKSPACE_SIZE + i] != GUARD_VALUE) {
        printk("utvm_inference: pool overrun at byte %u past its end\n", (unsigned)i);
        pass = false;
        break;
      }
    }
#endif
    if (cycles < best) {
      best = cycles;
    }
  }

  for (i = 0; i < m->num_outputs; i++) {
    const utvm_tensor_info_t* t = &m->outputs[i];
    print_tensor("output", i, t, outputs[i]);
#if HAS_REFERENCE
    if (!output_matches(t, outputs[i], TEST_OUTPUTS[i])) {
      print_tensor("expected", i, t, TEST_OUTPUTS[i]);
      pass = false;
    }
#endif
  }
#if !HAS_REFERENCE
  printk("utvm_inference: outputs not checked: no reference output (tflite-micro was not "
         "installed where the sample was built)\n");
#endif

  printk("utvm_inference: %u %s per inference (%u us)\n", (unsigned)best,
         utvm_zephyr_cycles_unit(), (unsigned)(utvm_zephyr_cycles_to_ns(best) / 1000u));

#if defined(CONFIG_UTVM_PROFILE)
  if (m->op_cycles != NULL) {
    for (i = 0; i < m->num_ops; i++) {
      printk("utvm_inference: op %u %s: %u %s\n", (unsigned)i, m->op_names[i],
             (unsigned)m->op_cycles[i], utvm_zephyr_cycles_unit());
    }
  }
#endif
#if defined(CONFIG_UTVM_STACK_CHECK)
  {
    size_t unused = 0;
    if (utvm_zephyr_stack_unused(&unused) == UTVM_OK) {
      printk("utvm_inference: %u bytes of the main stack never used\n", (unsigned)unused);
    }
  }
#endif

  return verdict(pass);
}
