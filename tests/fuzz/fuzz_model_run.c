/*
 * libFuzzer target for a compiled model's descriptor entry points (utvm_model_t: run, reset,
 * io_in_pool), for any model: build with -DUTVM_FUZZ_MODEL=tvmgen_<name>_model (build_model.sh).
 *
 * Input: byte 0 picks the case (the low 2 bits: the pool given to run: NULL, an own aligned pool,
 * a misaligned pool; bit 2: one input or output pointer misaligned; bit 3: one of them NULL;
 * bits 4-7: which tensor), the rest fills the inputs (repeated when short). Checks, besides
 * ASan/UBSan: a bad pointer or pool is refused with UTVM_ERR_ARGUMENT and nothing is written;
 * otherwise run returns 0 and gives the same outputs for the static pool and an own pool.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utvm/crt.h"
#include "utvm/model.h"

#ifndef UTVM_FUZZ_MODEL
#error "define UTVM_FUZZ_MODEL as the descriptor, e.g. tvmgen_kws_model"
#endif

extern const utvm_model_t UTVM_FUZZ_MODEL;
#define M (&UTVM_FUZZ_MODEL)
#define MAX_IO 16u

static uint8_t* own_pool;
static uint8_t* bufs[2][MAX_IO];
static uint8_t* ref[MAX_IO];

/* 16-aligned, with 16 spare bytes for a misaligned view; kept for the process's life */
static uint8_t* aligned_alloc16(size_t n) {
  uint8_t* p = (uint8_t*)malloc(n + 32u);
  if (p == NULL) abort();
  return p + ((16u - ((uintptr_t)p & 15u)) & 15u);
}

static void setup(void) {
  uint32_t i;
  if (own_pool != NULL) return;
  own_pool = aligned_alloc16(M->workspace_size > 0u ? M->workspace_size : 1u);
  for (i = 0; i < M->num_inputs && i < MAX_IO; ++i) bufs[0][i] = aligned_alloc16(M->inputs[i].size_bytes);
  for (i = 0; i < M->num_outputs && i < MAX_IO; ++i) {
    bufs[1][i] = aligned_alloc16(M->outputs[i].size_bytes);
    ref[i] = aligned_alloc16(M->outputs[i].size_bytes);
  }
  if (M->num_inputs > MAX_IO || M->num_outputs > MAX_IO || own_pool == NULL) abort();
}

static void fill(const uint8_t* data, size_t size) {
  uint32_t i, j;
  size_t k = 0;
  for (i = 0; i < M->num_inputs; ++i) {
    uint8_t* p = bufs[0][i];
    for (j = 0; j < M->inputs[i].size_bytes; ++j) {
      uint8_t b = size > 0u ? data[k++ % size] : 0u;
      if (M->inputs[i].dtype == UTVM_DTYPE_BOOL) b &= 1u;
      p[j] = b;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  void* ins[MAX_IO];
  void* outs[MAX_IO];
  uint8_t* pool;
  uint8_t mode;
  uint32_t i, which, n_io;
  int32_t rc;
  int bad;
  setup();
  if (size < 1u) return 0;
  mode = data[0];
  fill(data + 1, size - 1u);
  for (i = 0; i < M->num_inputs; ++i) ins[i] = bufs[0][i];
  for (i = 0; i < M->num_outputs; ++i) outs[i] = bufs[1][i];
  pool = (mode & 3u) == 0u ? NULL : (mode & 3u) == 1u ? own_pool : own_pool + 1 + (mode & 3u);
  bad = (mode & 3u) >= 2u;
  n_io = M->num_inputs + M->num_outputs;
  which = (uint32_t)(mode >> 4) % (n_io > 0u ? n_io : 1u);
  if (mode & 12u) {
    void** slot = which < M->num_inputs ? &ins[which] : &outs[which - M->num_inputs];
    *slot = (mode & 8u) ? NULL : (void*)((uint8_t*)*slot + 1 + (mode & 2u));
    bad = 1;
  }
  if (M->reset != NULL) M->reset();
  rc = M->run(ins, outs, pool);
  if (bad) {
    if (rc != UTVM_ERR_ARGUMENT) abort();
    return 0;
  }
  if (rc != UTVM_OK) abort();
  for (i = 0; i < M->num_outputs; ++i) memcpy(ref[i], outs[i], M->outputs[i].size_bytes);
  if (M->reset != NULL) M->reset();
  rc = M->run(ins, outs, pool == NULL ? own_pool : NULL);
  if (rc != UTVM_OK) abort();
  for (i = 0; i < M->num_outputs; ++i) {
    if (memcmp(ref[i], outs[i], M->outputs[i].size_bytes) != 0) abort();
  }
  return 0;
}
