/*
 * utvm RPC server: frame parser with resynchronisation, command dispatch, streamed replies.
 * See utvm/rpc.h and docs/RPC.md. C99, no heap; replies never touch the frame buffer, so a
 * failed candidate frame can be rescanned in place for the next sync bytes.
 */
#include "utvm/rpc.h"

#include <string.h>

#include "utvm/crt.h"
#include "utvm/platform.h"

#ifndef UTVM_RPC_MAX_TENSORS
#define UTVM_RPC_MAX_TENSORS 16u
#endif

#define UTVM_RPC_DEFAULT_INTERBYTE_MS 100u
#define UTVM_RPC_MAX_LEN 0xFFFFu

/* ------------------------------------------------------------------------------------------ */
/* CRC-16/CCITT-FALSE, nibble table (32 bytes of flash).                                       */

static const uint16_t kCrcNibble[16] = {
    0x0000u, 0x1021u, 0x2042u, 0x3063u, 0x4084u, 0x50A5u, 0x60C6u, 0x70E7u,
    0x8108u, 0x9129u, 0xA14Au, 0xB16Bu, 0xC18Cu, 0xD1ADu, 0xE1CEu, 0xF1EFu,
};

uint16_t utvm_rpc_crc16(uint16_t crc, const uint8_t* data, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    crc = (uint16_t)((uint16_t)(crc << 4) ^ kCrcNibble[((crc >> 12) ^ (data[i] >> 4)) & 0x0Fu]);
    crc = (uint16_t)((uint16_t)(crc << 4) ^ kCrcNibble[((crc >> 12) ^ (data[i] & 0x0Fu)) & 0x0Fu]);
  }
  return crc;
}

/* ------------------------------------------------------------------------------------------ */
/* Little-endian helpers.                                                                      */

static uint16_t get_u16(const uint8_t* p) { return (uint16_t)(p[0] | ((uint16_t)p[1] << 8)); }

static uint32_t get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void set_u16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)(v & 0xFFu);
  p[1] = (uint8_t)(v >> 8);
}

static void set_u32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)(v & 0xFFu);
  p[1] = (uint8_t)((v >> 8) & 0xFFu);
  p[2] = (uint8_t)((v >> 16) & 0xFFu);
  p[3] = (uint8_t)(v >> 24);
}

static size_t align_up(size_t n) {
  return (n + (UTVM_RPC_IO_ALIGNMENT - 1u)) & ~(size_t)(UTVM_RPC_IO_ALIGNMENT - 1u);
}

/* ------------------------------------------------------------------------------------------ */
/* Sizes.                                                                                      */

static size_t model_io_size(const utvm_model_t* m) {
  size_t total = 0;
  uint32_t i;
  for (i = 0; i < m->num_inputs; i++) total += align_up(m->inputs[i].size_bytes);
  for (i = 0; i < m->num_outputs; i++) total += align_up(m->outputs[i].size_bytes);
  return total;
}

size_t utvm_rpc_io_size(const utvm_model_t* const* models, uint32_t num_models) {
  size_t total = 0;
  uint32_t i;
  for (i = 0; i < num_models; i++) {
    if (models[i] != NULL) total += model_io_size(models[i]);
  }
  return total;
}

size_t utvm_rpc_pool_size(const utvm_model_t* const* models, uint32_t num_models) {
  size_t best = 0;
  uint32_t i;
  for (i = 0; i < num_models; i++) {
    if (models[i] != NULL && models[i]->workspace_size > best) best = models[i]->workspace_size;
  }
  return best;
}

/* Where tensor `index` of model `mi` lives in io_buf. */
static uint8_t* tensor_ptr(const utvm_rpc_server_t* s, uint32_t mi, int is_output,
                           uint32_t index) {
  const utvm_model_t* m = s->cfg.models[mi];
  size_t off = s->slots[mi].base;
  uint32_t i;
  if (is_output) {
    for (i = 0; i < m->num_inputs; i++) off += align_up(m->inputs[i].size_bytes);
  }
  for (i = 0; i < index; i++) {
    off += align_up(is_output ? m->outputs[i].size_bytes : m->inputs[i].size_bytes);
  }
  return s->cfg.io_buf + off;
}

static size_t max_payload(const utvm_rpc_server_t* s) {
  size_t p = s->cfg.frame_buf_size - UTVM_RPC_OVERHEAD;
  return p > UTVM_RPC_MAX_LEN ? UTVM_RPC_MAX_LEN : p;
}

/* ------------------------------------------------------------------------------------------ */
/* Init.                                                                                       */

utvm_status_t utvm_rpc_init(utvm_rpc_server_t* s, const utvm_rpc_config_t* c) {
  uint32_t i;
  size_t base = 0;
  if (s == NULL || c == NULL || c->write == NULL || c->frame_buf == NULL ||
      c->frame_buf_size < UTVM_RPC_MIN_FRAME_BUF_SIZE || c->num_models > UTVM_RPC_MAX_MODELS ||
      c->num_models > 255u || (c->num_models > 0u && c->models == NULL)) {
    return UTVM_ERR_ARGUMENT;
  }
  memset(s, 0, sizeof(*s));
  for (i = 0; i < c->num_models; i++) {
    const utvm_model_t* m = c->models[i];
    if (m == NULL || m->run == NULL || m->num_inputs > UTVM_RPC_MAX_TENSORS ||
        m->num_outputs > UTVM_RPC_MAX_TENSORS ||
        (m->num_inputs > 0u && m->inputs == NULL) ||
        (m->num_outputs > 0u && m->outputs == NULL)) {
      return UTVM_ERR_ARGUMENT;
    }
    s->slots[i].base = base;
    base += model_io_size(m);
  }
  if (base > 0u && (c->io_buf == NULL || c->io_buf_size < base ||
                    ((uintptr_t)c->io_buf % UTVM_RPC_IO_ALIGNMENT) != 0u)) {
    return UTVM_ERR_ARGUMENT;
  }
  if (c->pool != NULL && (c->pool_size < utvm_rpc_pool_size(c->models, c->num_models) ||
                          ((uintptr_t)c->pool % UTVM_POOL_ALIGNMENT) != 0u)) {
    return UTVM_ERR_ARGUMENT;
  }
  s->cfg = *c;
  if (s->cfg.interbyte_timeout_ms == 0u) s->cfg.interbyte_timeout_ms = UTVM_RPC_DEFAULT_INTERBYTE_MS;
  if (base > 0u) memset(s->cfg.io_buf, 0, base);
  return UTVM_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Reply output: an emitter that either counts bytes (dry run) or writes them with the CRC.    */

typedef struct {
  utvm_rpc_server_t* s;
  int dry;
  uint32_t count;
  uint16_t crc;
  uint8_t buf[64];
  size_t len;
} emitter_t;

static void em_flush(emitter_t* e) {
  if (e->len > 0u) {
    if (e->s->cfg.write(e->s->cfg.transport_ctx, e->buf, e->len) < 0) e->s->stats.write_errors++;
    e->len = 0;
  }
}

static void em_raw(emitter_t* e, const uint8_t* p, size_t n) {
  while (n > 0u) {
    size_t room = sizeof(e->buf) - e->len;
    size_t k = n < room ? n : room;
    memcpy(e->buf + e->len, p, k);
    e->len += k;
    p += k;
    n -= k;
    if (e->len == sizeof(e->buf)) em_flush(e);
  }
}

static void em_put(emitter_t* e, const void* data, size_t n) {
  e->count += (uint32_t)n;
  if (e->dry) return;
  e->crc = utvm_rpc_crc16(e->crc, (const uint8_t*)data, n);
  em_raw(e, (const uint8_t*)data, n);
}

static void em_u8(emitter_t* e, uint8_t v) { em_put(e, &v, 1); }

static void em_u16(emitter_t* e, uint16_t v) {
  uint8_t b[2];
  set_u16(b, v);
  em_put(e, b, 2);
}

static void em_u32(emitter_t* e, uint32_t v) {
  uint8_t b[4];
  set_u32(b, v);
  em_put(e, b, 4);
}

static void em_str(emitter_t* e, const char* str) {
  size_t n = 0;
  if (str != NULL) {
    while (n < UTVM_RPC_MAX_NAME && str[n] != '\0') n++;
  }
  em_u8(e, (uint8_t)n);
  if (n > 0u) em_put(e, str, n);
}

/* Start a reply frame of `len` payload bytes. */
static void em_begin(emitter_t* e, utvm_rpc_server_t* s, uint8_t cmd, uint8_t seq, uint16_t len) {
  uint8_t h[UTVM_RPC_HEADER_SIZE];
  e->s = s;
  e->dry = 0;
  e->count = 0;
  e->len = 0;
  h[0] = UTVM_RPC_SYNC0;
  h[1] = UTVM_RPC_SYNC1;
  set_u16(h + 2, len);
  h[4] = cmd;
  h[5] = seq;
  e->crc = utvm_rpc_crc16(0xFFFFu, h + 2, UTVM_RPC_HEADER_SIZE - 2u);
  em_raw(e, h, UTVM_RPC_HEADER_SIZE);
}

static void em_end(emitter_t* e) {
  uint8_t t[2];
  set_u16(t, e->crc);
  em_raw(e, t, 2);
  em_flush(e);
}

static void em_dry(emitter_t* e, utvm_rpc_server_t* s) {
  e->s = s;
  e->dry = 1;
  e->count = 0;
  e->len = 0;
  e->crc = 0;
}

static void reply_status(utvm_rpc_server_t* s, uint8_t cmd, uint8_t seq, uint8_t status) {
  emitter_t e;
  em_begin(&e, s, cmd, seq, 1);
  em_u8(&e, status);
  em_end(&e);
}

static void reply_frame_error(utvm_rpc_server_t* s, uint8_t seq, uint8_t status, uint8_t cmd) {
  emitter_t e;
  s->stats.frames_bad++;
  em_begin(&e, s, UTVM_RPC_CMD_FRAME_ERROR, seq, 2);
  em_u8(&e, status);
  em_u8(&e, cmd);
  em_end(&e);
}

/* ------------------------------------------------------------------------------------------ */
/* Commands. Each body writer is run twice: dry (to size the frame), then for real.            */

typedef struct {
  const uint8_t* payload;
  uint16_t len;
  uint32_t model;
  uint32_t arg; /* command specific */
} request_t;

static void body_info(emitter_t* e, const request_t* r) {
  const utvm_rpc_server_t* s = e->s;
  (void)r;
  em_u8(e, UTVM_RPC_OK);
  em_u8(e, (uint8_t)UTVM_RPC_PROTOCOL_VERSION);
  em_u8(e, (uint8_t)s->cfg.num_models);
  em_u8(e, 0);
  em_u32(e, (uint32_t)max_payload(s));
  em_u32(e, (uint32_t)s->cfg.io_buf_size);
  em_u32(e, s->cfg.pool != NULL ? (uint32_t)s->cfg.pool_size : 0u);
  em_u32(e, s->cfg.interbyte_timeout_ms);
}

static void em_tensor(emitter_t* e, const utvm_tensor_info_t* t) {
  int32_t d;
  int32_t ndim = t->ndim < 0 ? 0 : (t->ndim > UTVM_MAX_DIMS ? UTVM_MAX_DIMS : t->ndim);
  uint32_t scale_bits;
  em_str(e, t->name);
  em_u8(e, (uint8_t)t->dtype);
  em_u8(e, (uint8_t)ndim);
  for (d = 0; d < ndim; d++) em_u32(e, (uint32_t)t->shape[d]);
  em_u32(e, t->size_bytes);
  memcpy(&scale_bits, &t->scale, sizeof(scale_bits));
  em_u32(e, scale_bits);
  em_u32(e, (uint32_t)t->zero_point);
}

static void body_model_info(emitter_t* e, const request_t* r) {
  const utvm_model_t* m = e->s->cfg.models[r->model];
  uint8_t flags = 0;
  uint32_t i;
  if (m->op_cycles != NULL) flags |= UTVM_RPC_MODEL_PROFILING;
  if (m->io_in_pool != NULL) flags |= UTVM_RPC_MODEL_IO_IN_POOL;
  em_u8(e, UTVM_RPC_OK);
  em_str(e, m->name);
  em_u32(e, m->workspace_size);
  em_u32(e, m->num_ops);
  em_u8(e, flags);
  em_u8(e, (uint8_t)m->num_inputs);
  em_u8(e, (uint8_t)m->num_outputs);
  for (i = 0; i < m->num_inputs; i++) em_tensor(e, &m->inputs[i]);
  for (i = 0; i < m->num_outputs; i++) em_tensor(e, &m->outputs[i]);
}

/* Number of operator names from `first` that fit in a reply. */
static uint32_t op_names_count(const utvm_model_t* m, uint32_t first) {
  uint32_t size = 7u; /* status, total, first, count */
  uint32_t i;
  for (i = first; i < m->num_ops; i++) {
    const char* n = m->op_names != NULL ? m->op_names[i] : NULL;
    size_t len = 0;
    if (n != NULL) {
      while (len < UTVM_RPC_MAX_NAME && n[len] != '\0') len++;
    }
    if (size + 1u + len > UTVM_RPC_MAX_LEN) break;
    size += 1u + (uint32_t)len;
  }
  return i - first;
}

static void body_op_names(emitter_t* e, const request_t* r) {
  const utvm_model_t* m = e->s->cfg.models[r->model];
  uint32_t count = op_names_count(m, r->arg);
  uint32_t i;
  em_u8(e, UTVM_RPC_OK);
  em_u16(e, (uint16_t)m->num_ops);
  em_u16(e, (uint16_t)r->arg);
  em_u16(e, (uint16_t)count);
  for (i = r->arg; i < r->arg + count; i++) {
    em_str(e, m->op_names != NULL ? m->op_names[i] : NULL);
  }
}

static void body_profile(emitter_t* e, const request_t* r) {
  const utvm_model_t* m = e->s->cfg.models[r->model];
  uint32_t i;
  em_u8(e, UTVM_RPC_OK);
  em_u32(e, e->s->last_cycles[r->model]);
  em_u32(e, m->num_ops);
  for (i = 0; i < m->num_ops; i++) em_u32(e, m->op_cycles[i]);
}

typedef void (*body_fn)(emitter_t* e, const request_t* r);

static void reply_body(utvm_rpc_server_t* s, uint8_t cmd, uint8_t seq, body_fn fn,
                       const request_t* r) {
  emitter_t e;
  em_dry(&e, s);
  fn(&e, r);
  if (e.count > UTVM_RPC_MAX_LEN) {
    reply_status(s, cmd, seq, UTVM_RPC_ERR_UNSUPPORTED);
    return;
  }
  em_begin(&e, s, cmd, seq, (uint16_t)e.count);
  fn(&e, r);
  em_end(&e);
}

/* Stage the inputs of model `mi` where its run reads them and say where its outputs go. */
static uint8_t prepare_io(utvm_rpc_server_t* s, uint32_t mi, void** in, void** out) {
  const utvm_model_t* m = s->cfg.models[mi];
  uint32_t i;
  for (i = 0; i < m->num_inputs; i++) {
    uint8_t* staged = tensor_ptr(s, mi, 0, i);
    if (m->io_in_pool != NULL) {
      in[i] = m->io_in_pool(s->cfg.pool, 0, i);
      if (in[i] == NULL) return UTVM_RPC_ERR_RUN_FAILED;
      memcpy(in[i], staged, m->inputs[i].size_bytes);
    } else {
      in[i] = staged;
    }
  }
  for (i = 0; i < m->num_outputs; i++) {
    if (m->io_in_pool != NULL) {
      out[i] = m->io_in_pool(s->cfg.pool, 1, i);
      if (out[i] == NULL) return UTVM_RPC_ERR_RUN_FAILED;
    } else {
      out[i] = tensor_ptr(s, mi, 1, i);
    }
  }
  return UTVM_RPC_OK;
}

/* Run model `mi` `repeats` times (>= 1) and time the runs. A model with its own I/O buffers runs
 * back to back inside one timed window (the counter's resolution divides by `repeats`); a model
 * whose I/O lives in its pool gets its inputs copied in before every run, outside the timing. */
static uint8_t do_run(utvm_rpc_server_t* s, uint32_t mi, uint32_t repeats, int32_t* rc_out,
                      uint32_t* cycles_out) {
  const utvm_model_t* m = s->cfg.models[mi];
  void* in[UTVM_RPC_MAX_TENSORS];
  void* out[UTVM_RPC_MAX_TENSORS];
  uint32_t i;
  uint32_t t0;
  uint32_t total = 0;
  int32_t rc = 0;
  uint8_t st = prepare_io(s, mi, in, out);
  if (st != UTVM_RPC_OK) return st;
  if (m->io_in_pool == NULL) {
    t0 = utvm_platform_cycles();
    for (i = 0; i < repeats && rc == 0; i++) rc = m->run(in, out, s->cfg.pool);
    total = utvm_platform_cycles() - t0;
  } else {
    for (i = 0; i < repeats && rc == 0; i++) {
      if (i > 0u && (st = prepare_io(s, mi, in, out)) != UTVM_RPC_OK) return st;
      t0 = utvm_platform_cycles();
      rc = m->run(in, out, s->cfg.pool);
      total += utvm_platform_cycles() - t0;
    }
    for (i = 0; i < m->num_outputs; i++) {
      memcpy(tensor_ptr(s, mi, 1, i), out[i], m->outputs[i].size_bytes);
    }
  }
  *rc_out = rc;
  *cycles_out = total;
  s->last_cycles[mi] = total / repeats; /* PROFILE: per run, beside the last run's op_cycles */
  s->has_run[mi] = (uint8_t)(rc == 0);
  return rc == 0 ? (uint8_t)UTVM_RPC_OK : (uint8_t)UTVM_RPC_ERR_RUN_FAILED;
}

static void do_reset(utvm_rpc_server_t* s) {
  uint32_t mi;
  size_t io = utvm_rpc_io_size(s->cfg.models, s->cfg.num_models);
  if (io > 0u) memset(s->cfg.io_buf, 0, io);
  for (mi = 0; mi < s->cfg.num_models; mi++) {
    const utvm_model_t* m = s->cfg.models[mi];
    s->has_run[mi] = 0;
    s->last_cycles[mi] = 0;
    if (m->op_cycles != NULL) {
      uint32_t i;
      for (i = 0; i < m->num_ops; i++) m->op_cycles[i] = 0;
    }
  }
  memset(&s->stats, 0, sizeof(s->stats));
}

/* Check model index and (optionally) tensor index/range of an I/O request. */
static uint8_t check_tensor(const utvm_rpc_server_t* s, uint32_t mi, int is_output,
                            uint32_t index, uint32_t offset, uint32_t n) {
  const utvm_model_t* m;
  uint32_t size;
  if (mi >= s->cfg.num_models) return UTVM_RPC_ERR_BAD_MODEL;
  m = s->cfg.models[mi];
  if (index >= (is_output ? m->num_outputs : m->num_inputs)) return UTVM_RPC_ERR_BAD_TENSOR;
  size = is_output ? m->outputs[index].size_bytes : m->inputs[index].size_bytes;
  if (offset > size || n > size - offset) return UTVM_RPC_ERR_BAD_RANGE;
  return UTVM_RPC_OK;
}

static void dispatch(utvm_rpc_server_t* s) {
  const uint8_t* f = s->cfg.frame_buf;
  uint16_t len = get_u16(f + 2);
  uint8_t cmd = f[4];
  uint8_t seq = f[5];
  uint8_t rcmd = (uint8_t)(cmd | UTVM_RPC_REPLY);
  request_t r;
  uint8_t st;
  r.payload = f + UTVM_RPC_HEADER_SIZE;
  r.len = len;
  r.model = 0;
  r.arg = 0;

  if ((cmd & UTVM_RPC_REPLY) != 0u) {
    /* A reply frame (e.g. our own output echoed back by a terminal): never answer it. */
    return;
  }
  s->stats.frames_ok++;
  switch (cmd) {
    case UTVM_RPC_CMD_PING: {
      emitter_t e;
      if (len > UTVM_RPC_MAX_LEN - 1u) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_LENGTH);
        return;
      }
      em_begin(&e, s, rcmd, seq, (uint16_t)(len + 1u));
      em_u8(&e, UTVM_RPC_OK);
      em_put(&e, r.payload, len);
      em_end(&e);
      return;
    }
    case UTVM_RPC_CMD_INFO:
      if (len != 0u) break;
      reply_body(s, rcmd, seq, body_info, &r);
      return;
    case UTVM_RPC_CMD_MODEL_INFO:
      if (len != 1u) break;
      r.model = r.payload[0];
      if (r.model >= s->cfg.num_models) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_MODEL);
        return;
      }
      reply_body(s, rcmd, seq, body_model_info, &r);
      return;
    case UTVM_RPC_CMD_OP_NAMES:
      if (len != 3u) break;
      r.model = r.payload[0];
      r.arg = get_u16(r.payload + 1);
      if (r.model >= s->cfg.num_models) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_MODEL);
        return;
      }
      if (r.arg > s->cfg.models[r.model]->num_ops) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_RANGE);
        return;
      }
      reply_body(s, rcmd, seq, body_op_names, &r);
      return;
    case UTVM_RPC_CMD_WRITE_INPUT: {
      uint32_t index;
      uint32_t offset;
      uint32_t n;
      if (len < 6u) break;
      r.model = r.payload[0];
      index = r.payload[1];
      offset = get_u32(r.payload + 2);
      n = (uint32_t)len - 6u;
      st = check_tensor(s, r.model, 0, index, offset, n);
      if (st == UTVM_RPC_OK && n > 0u) {
        memcpy(tensor_ptr(s, r.model, 0, index) + offset, r.payload + 6, n);
      }
      reply_status(s, rcmd, seq, st);
      return;
    }
    case UTVM_RPC_CMD_READ_OUTPUT:
    case UTVM_RPC_CMD_READ_INPUT: {
      int is_output = cmd == UTVM_RPC_CMD_READ_OUTPUT;
      uint32_t index;
      uint32_t offset;
      uint32_t n;
      emitter_t e;
      if (len != 8u) break;
      r.model = r.payload[0];
      index = r.payload[1];
      offset = get_u32(r.payload + 2);
      n = get_u16(r.payload + 6);
      st = check_tensor(s, r.model, is_output, index, offset, n);
      if (st == UTVM_RPC_OK && n > UTVM_RPC_MAX_LEN - 1u) st = UTVM_RPC_ERR_BAD_RANGE;
      if (st != UTVM_RPC_OK) {
        reply_status(s, rcmd, seq, st);
        return;
      }
      em_begin(&e, s, rcmd, seq, (uint16_t)(n + 1u));
      em_u8(&e, UTVM_RPC_OK);
      em_put(&e, tensor_ptr(s, r.model, is_output, index) + offset, n);
      em_end(&e);
      return;
    }
    case UTVM_RPC_CMD_RUN: {
      int32_t rc = 0;
      uint32_t cycles = 0;
      uint32_t repeats = 1;
      emitter_t e;
      if (len != 1u && len != 3u) break;
      r.model = r.payload[0];
      if (r.model >= s->cfg.num_models) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_MODEL);
        return;
      }
      if (len == 3u) {
        repeats = (uint32_t)r.payload[1] | ((uint32_t)r.payload[2] << 8);
        if (repeats == 0u) {
          reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_RANGE);
          return;
        }
      }
      st = do_run(s, r.model, repeats, &rc, &cycles);
      em_begin(&e, s, rcmd, seq, 9);
      em_u8(&e, st);
      em_u32(&e, (uint32_t)rc);
      em_u32(&e, cycles);
      em_end(&e);
      return;
    }
    case UTVM_RPC_CMD_PROFILE:
      if (len != 1u) break;
      r.model = r.payload[0];
      if (r.model >= s->cfg.num_models) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_MODEL);
        return;
      }
      if (s->cfg.models[r.model]->op_cycles == NULL) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_UNSUPPORTED);
        return;
      }
      if (!s->has_run[r.model]) {
        reply_status(s, rcmd, seq, UTVM_RPC_ERR_NO_RUN);
        return;
      }
      reply_body(s, rcmd, seq, body_profile, &r);
      return;
    case UTVM_RPC_CMD_RESET:
      if (len != 0u) break;
      do_reset(s);
      reply_status(s, rcmd, seq, UTVM_RPC_OK);
      return;
    default:
      reply_status(s, rcmd, seq, UTVM_RPC_ERR_UNKNOWN_CMD);
      return;
  }
  /* Every `break` above is a payload of the wrong length for its command. */
  reply_status(s, rcmd, seq, UTVM_RPC_ERR_BAD_LENGTH);
}

/* ------------------------------------------------------------------------------------------ */
/* Parser.                                                                                     */

/*
 * Take one byte. Returns 1 when the candidate frame in frame_buf[0..pos) has just failed
 * (bad CRC, oversized length): the caller rescans those bytes for a later sync pair.
 */
static int rx_byte(utvm_rpc_server_t* s, uint8_t b) {
  uint8_t* f = s->cfg.frame_buf;
  if (s->pos == 0u) {
    if (b == UTVM_RPC_SYNC0) {
      f[s->pos++] = b;
    } else {
      s->stats.bytes_skipped++;
    }
    return 0;
  }
  if (s->pos == 1u) {
    if (b == UTVM_RPC_SYNC1) {
      f[s->pos++] = b;
    } else if (b != UTVM_RPC_SYNC0) {
      s->pos = 0;
      s->stats.bytes_skipped += 2u;
    } /* else: A5 A5 -> the second A5 may start the frame; stay at pos 1 */
    return 0;
  }
  f[s->pos++] = b;
  if (s->pos == UTVM_RPC_HEADER_SIZE) {
    size_t len = get_u16(f + 2);
    if (len > max_payload(s)) {
      reply_frame_error(s, f[5], UTVM_RPC_ERR_TOO_LONG, f[4]);
      return 1;
    }
    s->expected = UTVM_RPC_HEADER_SIZE + len + UTVM_RPC_TRAILER_SIZE;
  }
  if (s->expected != 0u && s->pos == s->expected) {
    size_t body = s->expected - UTVM_RPC_TRAILER_SIZE;
    uint16_t want = get_u16(f + body);
    uint16_t got = utvm_rpc_crc16(0xFFFFu, f + 2, body - 2u);
    if (want != got) {
      reply_frame_error(s, f[5], UTVM_RPC_ERR_CRC, f[4]);
      return 1;
    }
    dispatch(s);
    s->pos = 0;
    s->expected = 0;
  }
  return 0;
}

/* First index >= 1 in f[0..n) that may start a frame (A5 5A, or A5 as the last byte). */
static size_t find_sync(const uint8_t* f, size_t n) {
  size_t i;
  for (i = 1; i < n; i++) {
    if (f[i] == UTVM_RPC_SYNC0 && (i + 1u == n || f[i + 1u] == UTVM_RPC_SYNC1)) return i;
  }
  return n;
}

/*
 * frame_buf[0..pos) holds a failed candidate. Drop its first sync byte and parse what follows
 * again, in place: while replaying byte j we write at most at index j, so unread bytes stay
 * intact. A replayed candidate that fails again is handled by the next loop iteration; each
 * iteration drops at least one byte, so this ends.
 */
static void recover(utvm_rpc_server_t* s) {
  uint8_t* f = s->cfg.frame_buf;
  size_t n = s->pos;
  for (;;) {
    size_t i = find_sync(f, n);
    size_t m;
    size_t j;
    int failed = 0;
    s->stats.bytes_skipped += (uint32_t)i;
    s->pos = 0;
    s->expected = 0;
    if (i >= n) return;
    m = n - i;
    memmove(f, f + i, m);
    for (j = 0; j < m; j++) {
      if (rx_byte(s, f[j])) {
        failed = 1;
        break;
      }
    }
    if (!failed) return;
    /* Candidate f[0..pos) failed; the unread tail f[j+1..m) follows it. */
    memmove(f + s->pos, f + j + 1u, m - j - 1u);
    n = s->pos + (m - j - 1u);
  }
}

void utvm_rpc_feed(utvm_rpc_server_t* s, const uint8_t* data, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (rx_byte(s, data[i])) recover(s);
  }
}

void utvm_rpc_timeout(utvm_rpc_server_t* s) {
  if (s->pos == 0u) return;
  if (s->pos < 2u) {
    s->stats.bytes_skipped += (uint32_t)s->pos;
    s->pos = 0;
    s->expected = 0;
    return;
  }
  reply_frame_error(s, s->pos > 5u ? s->cfg.frame_buf[5] : 0u, UTVM_RPC_ERR_TRUNCATED,
                    s->pos > 4u ? s->cfg.frame_buf[4] : 0u);
  recover(s);
}

int utvm_rpc_in_frame(const utvm_rpc_server_t* s) { return s->pos > 0u; }

utvm_status_t utvm_rpc_serve(utvm_rpc_server_t* s) {
  uint8_t buf[64];
  if (s->cfg.read == NULL) return UTVM_ERR_ARGUMENT;
  for (;;) {
    uint32_t timeout = s->pos > 0u ? s->cfg.interbyte_timeout_ms : UTVM_RPC_WAIT_FOREVER;
    int32_t n = s->cfg.read(s->cfg.transport_ctx, buf, sizeof(buf), timeout);
    if (n < 0) return UTVM_OK;
    if (n == 0) {
      utvm_rpc_timeout(s);
      continue;
    }
    utvm_rpc_feed(s, buf, (size_t)n);
  }
}
