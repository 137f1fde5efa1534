/*
 * RPC server main for bare-metal Arm MPS2/MPS3 boards (QEMU or FPGA): serves the models of
 * utvm_rpc_models[] over the CMSDK APB UART0, by polling.
 *
 * Compiled only with -DUTVM_RPC_MAIN (so that building every file of ports/baremetal for a
 * plain model does not get a second main()). Link with platform_baremetal.c (cycles, log to
 * semihosting), lib/crt/src/rpc_server.c, the model(s) and a file that defines the model
 * table with UTVM_RPC_DEFINE_MODELS.
 *
 * Defines (defaults for mps2-an385/an386/an500):
 *   UTVM_RPC_UART_BASE     CMSDK UART0: 0x40004000 on MPS2, 0x49303000 on MPS3 AN547
 *   UTVM_RPC_COUNTER_HZ    rate of utvm_platform_cycles(): 25 MHz on MPS2 (FPGAIO COUNTER),
 *                          20 MHz on the AN547 in QEMU; used for the inter-byte timeout
 *   UTVM_RPC_IO_BUF_SIZE, UTVM_RPC_MAX_PAYLOAD, UTVM_RPC_POOL_SIZE (0: static pools),
 *   UTVM_RPC_INTERBYTE_MS  (default 100)
 *   UTVM_RPC_CONSOLE_UART_BASE  when defined, a second CMSDK UART on which the server
 *                          announces itself with one line, as samples/utvm_rpc_server does on
 *                          its Zephyr console: "utvm_rpc_server: ready, <n> model(s), max
 *                          payload <p>, on uart@<base>", the RPC UART's base in hex
 *
 * QEMU: -serial tcp:127.0.0.1:PORT,server=on,wait=on (or pty, pipe, stdio) connects UART0.
 * Under -icount the timeout counts virtual time, i.e. executed instructions.
 */
#ifdef UTVM_RPC_MAIN

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "utvm/crt.h"
#include "utvm/platform.h"
#include "utvm/rpc.h"

#ifndef UTVM_RPC_UART_BASE
#define UTVM_RPC_UART_BASE 0x40004000u
#endif
#ifndef UTVM_RPC_COUNTER_HZ
#define UTVM_RPC_COUNTER_HZ 25000000u
#endif
#ifndef UTVM_RPC_IO_BUF_SIZE
#define UTVM_RPC_IO_BUF_SIZE (256u * 1024u)
#endif
#ifndef UTVM_RPC_MAX_PAYLOAD
#define UTVM_RPC_MAX_PAYLOAD 1024u
#endif
#ifndef UTVM_RPC_POOL_SIZE
#define UTVM_RPC_POOL_SIZE 0u
#endif
#ifndef UTVM_RPC_INTERBYTE_MS
#define UTVM_RPC_INTERBYTE_MS 100u
#endif

/* CMSDK APB UART registers. */
#define UART_REG(base, offset) (*(volatile uint32_t*)(uintptr_t)((base) + (offset)))
#define UART_DATA UART_REG(UTVM_RPC_UART_BASE, 0x00u)
#define UART_STATE UART_REG(UTVM_RPC_UART_BASE, 0x04u)
#define UART_CTRL UART_REG(UTVM_RPC_UART_BASE, 0x08u)
#define UART_BAUDDIV UART_REG(UTVM_RPC_UART_BASE, 0x10u)
#define UART_STATE_TX_FULL 0x1u
#define UART_STATE_RX_FULL 0x2u
#define UART_CTRL_TX_EN 0x1u
#define UART_CTRL_RX_EN 0x2u

static uint8_t g_io_buf[UTVM_RPC_IO_BUF_SIZE] __attribute__((aligned(16)));
static uint8_t g_frame_buf[UTVM_RPC_FRAME_BUF_SIZE(UTVM_RPC_MAX_PAYLOAD)];
#if UTVM_RPC_POOL_SIZE > 0
static uint8_t g_pool[UTVM_RPC_POOL_SIZE] __attribute__((aligned(16)));
#endif
static utvm_rpc_server_t g_server;

static int32_t uart_read(void* ctx, uint8_t* buf, size_t n, uint32_t timeout_ms) {
  size_t got = 0;
  uint32_t start = utvm_platform_cycles();
  uint32_t ticks = timeout_ms * (UTVM_RPC_COUNTER_HZ / 1000u);
  (void)ctx;
  while (got < n) {
    if ((UART_STATE & UART_STATE_RX_FULL) != 0u) {
      buf[got++] = (uint8_t)(UART_DATA & 0xFFu);
      continue;
    }
    if (got > 0u) break; /* hand over what has arrived */
    if (timeout_ms != UTVM_RPC_WAIT_FOREVER &&
        (uint32_t)(utvm_platform_cycles() - start) >= ticks) {
      return 0;
    }
  }
  return (int32_t)got;
}

static int32_t uart_write(void* ctx, const uint8_t* buf, size_t n) {
  size_t i;
  (void)ctx;
  for (i = 0; i < n; i++) {
    while ((UART_STATE & UART_STATE_TX_FULL) != 0u) {
    }
    UART_DATA = buf[i];
  }
  return 0;
}

#ifdef UTVM_RPC_CONSOLE_UART_BASE
static void console_put(const char* s) {
  for (; *s != '\0'; s++) {
    while ((UART_REG(UTVM_RPC_CONSOLE_UART_BASE, 0x04u) & UART_STATE_TX_FULL) != 0u) {
    }
    UART_REG(UTVM_RPC_CONSOLE_UART_BASE, 0x00u) = (uint8_t)*s;
  }
}

/* Unsigned decimal (base 10) or lower-case hexadecimal (base 16) of v. */
static void console_put_u32(uint32_t v, uint32_t base) {
  char digits[11];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v != 0u);
  while (n > 0u) {
    char c[2] = {digits[--n], '\0'};
    console_put(c);
  }
}

static void announce(void) {
  UART_REG(UTVM_RPC_CONSOLE_UART_BASE, 0x10u) = 16u;
  UART_REG(UTVM_RPC_CONSOLE_UART_BASE, 0x08u) = UART_CTRL_TX_EN;
  console_put("utvm_rpc_server: ready, ");
  console_put_u32((uint32_t)utvm_rpc_num_models, 10u);
  console_put(" model(s), max payload ");
  console_put_u32((uint32_t)UTVM_RPC_MAX_PAYLOAD, 10u);
  console_put(", on uart@");
  console_put_u32((uint32_t)UTVM_RPC_UART_BASE, 16u);
  console_put("\n");
}
#endif

int main(void) {
  utvm_rpc_config_t cfg;
  utvm_status_t rc;
  UART_BAUDDIV = 16u;
  UART_CTRL = UART_CTRL_TX_EN | UART_CTRL_RX_EN;

  memset(&cfg, 0, sizeof(cfg));
  cfg.models = utvm_rpc_models;
  cfg.num_models = utvm_rpc_num_models;
  cfg.io_buf = g_io_buf;
  cfg.io_buf_size = sizeof(g_io_buf);
#if UTVM_RPC_POOL_SIZE > 0
  cfg.pool = g_pool;
  cfg.pool_size = sizeof(g_pool);
#endif
  cfg.frame_buf = g_frame_buf;
  cfg.frame_buf_size = sizeof(g_frame_buf);
  cfg.read = uart_read;
  cfg.write = uart_write;
  cfg.transport_ctx = NULL;
  cfg.interbyte_timeout_ms = UTVM_RPC_INTERBYTE_MS;
  rc = utvm_rpc_init(&g_server, &cfg);
  if (rc != UTVM_OK) {
    utvm_platform_log("utvm-rpc: bad configuration: io buffer %lu bytes (need %lu)",
                      (unsigned long)sizeof(g_io_buf),
                      (unsigned long)utvm_rpc_io_size(utvm_rpc_models, utvm_rpc_num_models));
    return 1;
  }
  utvm_platform_log("utvm-rpc: serving %lu model(s) on UART 0x%08lx",
                    (unsigned long)utvm_rpc_num_models, (unsigned long)UTVM_RPC_UART_BASE);
#ifdef UTVM_RPC_CONSOLE_UART_BASE
  announce();
#endif
  (void)utvm_rpc_serve(&g_server); /* the UART never reports end of stream */
  return 0;
}

#else
/* Not an RPC build: this translation unit is intentionally empty. */
typedef int utvm_rpc_uart_unused_t;
#endif /* UTVM_RPC_MAIN */
