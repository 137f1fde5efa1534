/*
 * Host program of the CMake test project: runs the model compiled by tvm_add_model() on the
 * input of tvmgen_<name>_testdata.h and checks the outputs against TFLite Micro's, exactly.
 * Exit code 0 only when they are equal.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utvm/crt.h"
#include "utvm/model.h"

#include MODEL_H
#include TESTDATA_H

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)

#define MODEL CAT3(tvmgen_, MODEL_NAME, _model)
#define TEST_INPUTS CAT3(tvmgen_, MODEL_NAME, _test_inputs)
#define TEST_OUTPUTS CAT3(tvmgen_, MODEL_NAME, _test_outputs)
#define NUM_INPUTS CAT3(TVMGEN_, MODEL_NAME_UPPER, _TEST_NUM_INPUTS)
#define NUM_OUTPUTS CAT3(TVMGEN_, MODEL_NAME_UPPER, _TEST_NUM_OUTPUTS)
#define IO_BYTES CAT3(TVMGEN_, MODEL_NAME_UPPER, _TEST_IO_BYTES)
/* The pool size macro of the generated header must be a compile-time constant. */
#define WORKSPACE_SIZE CAT3(TVMGEN_, MODEL_NAME_UPPER, _WORKSPACE_SIZE)

/* The model's descriptor: utvm's header declares it, TVM 0.18's (COMPAT tvm-0.18) does not. */
extern const utvm_model_t MODEL;

static uint8_t pool[WORKSPACE_SIZE + 1u] __attribute__((aligned(16)));
static uint8_t io[IO_BYTES] __attribute__((aligned(16)));

int main(void) {
  const utvm_model_t* m = &MODEL;
  void* in[NUM_INPUTS];
  void* out[NUM_OUTPUTS];
  size_t off = 0;
  uint32_t i, k;
  int pass = 1;
  int use_pool;

  if (m->num_inputs != NUM_INPUTS || m->num_outputs != NUM_OUTPUTS ||
      m->workspace_size != WORKSPACE_SIZE) {
    printf("descriptor and headers disagree\n");
    return 1;
  }
  printf("model %s: pool %u bytes\n", m->name, (unsigned)m->workspace_size);
  /* Once with the static pool, once with an application-owned one. */
  for (use_pool = 0; use_pool < 2; use_pool++) {
    uint8_t* p = use_pool ? pool : NULL;
    int32_t status;
    off = 0;
    for (i = 0; i < m->num_inputs; i++) {
      in[i] = m->io_in_pool != NULL ? m->io_in_pool(p, 0, i) : &io[off];
      off += (m->inputs[i].size_bytes + 15u) & ~15u;
      memcpy(in[i], TEST_INPUTS[i], m->inputs[i].size_bytes);
    }
    for (i = 0; i < m->num_outputs; i++) {
      out[i] = m->io_in_pool != NULL ? m->io_in_pool(p, 1, i) : &io[off];
      off += (m->outputs[i].size_bytes + 15u) & ~15u;
      memset(out[i], 0, m->outputs[i].size_bytes);
    }
    status = m->run(in, out, p);
    if (status != UTVM_OK) {
      printf("run failed: status %d\n", (int)status);
      return 1;
    }
    for (i = 0; i < m->num_outputs; i++) {
      const uint8_t* got = (const uint8_t*)out[i];
      printf("output %u (%s, %s pool):", (unsigned)i, m->outputs[i].name,
             use_pool ? "own" : "static");
      for (k = 0; k < m->outputs[i].size_bytes && k < 32u; k++) {
        printf(" %d", m->outputs[i].dtype == UTVM_DTYPE_INT8 ? (int)(int8_t)got[k] : (int)got[k]);
      }
      printf("\n");
      if (memcmp(got, TEST_OUTPUTS[i], m->outputs[i].size_bytes) != 0) {
        printf("output %u differs from TFLite Micro's\n", (unsigned)i);
        pass = 0;
      }
    }
    if (utvm_scratch_in_use() != 0u) {
      printf("scratch not released\n");
      pass = 0;
    }
  }
  printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
