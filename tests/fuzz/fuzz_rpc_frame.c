/*
 * libFuzzer target for the RPC frame parser and command dispatch (lib/crt/src/rpc_server.c),
 * serving the fixture models of tests/fixtures/rpc/fixture_models.c.
 *
 * Input layout: byte 0 picks the frame buffer size, byte 1 the inter-byte timeout period
 * (0: none; n: utvm_rpc_timeout() after every n bytes fed), the rest is the received stream.
 *
 * Checked on every input, besides the sanitizers:
 *  - the server only ever writes well-formed reply frames (sync, length, CRC recomputed
 *    bit by bit here, cmd with the reply bit set), back to back;
 *  - after the stream, repeated timeouts return the parser to idle within a bounded count;
 *  - a good PING frame sent then is answered (the server keeps serving).
 *
 * Build: tests/fuzz/build.sh (clang -fsanitize=fuzzer,address,undefined).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utvm/rpc.h"

static uint8_t g_io[4096] __attribute__((aligned(16)));
static uint8_t g_frame[UTVM_RPC_FRAME_BUF_SIZE(512)];
static utvm_rpc_server_t g_srv;

/* Reply stream checker. */
static uint8_t g_rx[70000];
static size_t g_rx_len;
static uint32_t g_replies;
static uint8_t g_last_cmd;
static uint8_t g_last_seq;

static uint16_t crc_bitwise(const uint8_t* p, size_t n) {
  uint16_t crc = 0xFFFFu;
  size_t i;
  int b;
  for (i = 0; i < n; i++) {
    crc ^= (uint16_t)(p[i] << 8);
    for (b = 0; b < 8; b++) {
      crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
  }
  return crc;
}

static void fail(const char* what) {
  fprintf(stderr, "fuzz_rpc_frame: invariant violated: %s\n", what);
  abort();
}

static void check_stream(void) {
  for (;;) {
    size_t len;
    size_t total;
    uint16_t want;
    if (g_rx_len < 4u) return;
    if (g_rx[0] != UTVM_RPC_SYNC0 || g_rx[1] != UTVM_RPC_SYNC1) fail("reply without sync");
    len = (size_t)g_rx[2] | ((size_t)g_rx[3] << 8);
    total = len + UTVM_RPC_OVERHEAD;
    if (g_rx_len < total) return;
    want = (uint16_t)(g_rx[total - 2u] | (g_rx[total - 1u] << 8));
    if (crc_bitwise(g_rx + 2, total - 4u) != want) fail("reply CRC");
    if ((g_rx[4] & UTVM_RPC_REPLY) == 0u) fail("reply cmd without reply bit");
    if (len < 1u) fail("reply without status");
    g_last_cmd = g_rx[4];
    g_last_seq = g_rx[5];
    g_replies++;
    memmove(g_rx, g_rx + total, g_rx_len - total);
    g_rx_len -= total;
  }
}

static int32_t fz_write(void* ctx, const uint8_t* buf, size_t n) {
  (void)ctx;
  if (n > sizeof(g_rx) - g_rx_len) fail("reply larger than 64 KiB + overhead");
  memcpy(g_rx + g_rx_len, buf, n);
  g_rx_len += n;
  check_stream();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const size_t kPayloads[4] = {64u, 100u, 300u, 512u};
  utvm_rpc_config_t cfg;
  size_t period;
  size_t i;
  size_t guard;
  uint8_t ping[UTVM_RPC_OVERHEAD + 2u];
  uint16_t crc;
  if (size < 2u) return 0;

  memset(&cfg, 0, sizeof(cfg));
  cfg.models = utvm_rpc_models;
  cfg.num_models = utvm_rpc_num_models;
  cfg.io_buf = g_io;
  cfg.io_buf_size = sizeof(g_io);
  cfg.frame_buf = g_frame;
  cfg.frame_buf_size = UTVM_RPC_FRAME_BUF_SIZE(kPayloads[data[0] & 3u]);
  cfg.write = fz_write;
  if (utvm_rpc_init(&g_srv, &cfg) != UTVM_OK) fail("init");
  g_rx_len = 0;
  g_replies = 0;
  period = data[1];
  data += 2;
  size -= 2;

  for (i = 0; i < size; i++) {
    utvm_rpc_feed(&g_srv, data + i, 1);
    if (period != 0u && (i + 1u) % period == 0u) utvm_rpc_timeout(&g_srv);
  }
  for (guard = 0; utvm_rpc_in_frame(&g_srv); guard++) {
    if (guard > size + 2u) fail("parser does not return to idle on timeouts");
    utvm_rpc_timeout(&g_srv);
  }
  if (g_rx_len != 0u) fail("partial reply left");

  /* A good PING with seq 0xEE and payload "ok" must be answered. */
  ping[0] = UTVM_RPC_SYNC0;
  ping[1] = UTVM_RPC_SYNC1;
  ping[2] = 2;
  ping[3] = 0;
  ping[4] = UTVM_RPC_CMD_PING;
  ping[5] = 0xEE;
  ping[6] = 'o';
  ping[7] = 'k';
  crc = crc_bitwise(ping + 2, 6);
  ping[8] = (uint8_t)(crc & 0xFFu);
  ping[9] = (uint8_t)(crc >> 8);
  g_replies = 0;
  utvm_rpc_feed(&g_srv, ping, sizeof(ping));
  if (g_replies != 1u || g_last_cmd != (UTVM_RPC_CMD_PING | UTVM_RPC_REPLY) ||
      g_last_seq != 0xEEu) {
    fail("good frame after the stream not answered");
  }
  return 0;
}
