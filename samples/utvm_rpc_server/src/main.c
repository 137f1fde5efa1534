/*
 * utvm RPC server on Zephyr: serves the model compiled by tvm_add_model() over a UART
 * (the chosen "utvm,rpc-uart" node if the devicetree has one, else the console UART).
 *
 * Receiving is interrupt driven into a ring buffer; the server thread (main) pulls bytes
 * with a timeout and writes replies with uart_poll_out(). The console gets one line,
 * "utvm_rpc_server: ready, ..., on <uart>"; when the RPC UART is the console, nothing but
 * reply frames follows it (CONFIG_LOG=n).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>
#include <zephyr/sys/ring_buffer.h>

#include "utvm/crt.h"
#include "utvm/rpc.h"

#if DT_HAS_CHOSEN(utvm_rpc_uart)
#define RPC_UART_NODE DT_CHOSEN(utvm_rpc_uart)
#else
#define RPC_UART_NODE DT_CHOSEN(zephyr_console)
#endif

/* With -DUTVM_RPC_MODELS (utvm tune --device) a generated table defines utvm_rpc_models. */
#ifndef UTVM_RPC_SAMPLE_MODELS_TABLE
extern const utvm_model_t UTVM_RPC_SAMPLE_MODEL;
UTVM_RPC_DEFINE_MODELS(&UTVM_RPC_SAMPLE_MODEL);
#endif

#ifdef UTVM_RPC_SAMPLE_IO_BUF_SIZE
#define IO_BUF_SIZE UTVM_RPC_SAMPLE_IO_BUF_SIZE
#else
#define IO_BUF_SIZE CONFIG_APP_RPC_IO_BUF_SIZE
#endif

static const struct device* const rpc_uart = DEVICE_DT_GET(RPC_UART_NODE);

static uint8_t io_buf[IO_BUF_SIZE] __aligned(16);
static uint8_t frame_buf[UTVM_RPC_FRAME_BUF_SIZE(CONFIG_APP_RPC_MAX_PAYLOAD)];
#if CONFIG_APP_RPC_POOL_SIZE > 0
static uint8_t pool[CONFIG_APP_RPC_POOL_SIZE] __aligned(16);
#endif
static utvm_rpc_server_t server;

RING_BUF_DECLARE(rx_ring, CONFIG_APP_RPC_RX_RING_SIZE);
static K_SEM_DEFINE(rx_sem, 0, 1);

static void uart_isr(const struct device* dev, void* user_data) {
  uint8_t buf[16];
  ARG_UNUSED(user_data);
  while (uart_irq_update(dev) && uart_irq_is_pending(dev)) {
    if (!uart_irq_rx_ready(dev)) {
      break;
    }
    int n = uart_fifo_read(dev, buf, sizeof(buf));
    if (n > 0) {
      /* On overflow the excess is dropped: the protocol resynchronises. */
      (void)ring_buf_put(&rx_ring, buf, (uint32_t)n);
      k_sem_give(&rx_sem);
    }
  }
}

static int32_t rpc_read(void* ctx, uint8_t* buf, size_t n, uint32_t timeout_ms) {
  ARG_UNUSED(ctx);
  for (;;) {
    unsigned int key = irq_lock();
    uint32_t got = ring_buf_get(&rx_ring, buf, (uint32_t)n);
    irq_unlock(key);
    if (got > 0u) {
      return (int32_t)got;
    }
    k_timeout_t wait = timeout_ms == UTVM_RPC_WAIT_FOREVER ? K_FOREVER : K_MSEC(timeout_ms);
    if (k_sem_take(&rx_sem, wait) != 0) {
      return 0;
    }
  }
}

static int32_t rpc_write(void* ctx, const uint8_t* buf, size_t n) {
  ARG_UNUSED(ctx);
  for (size_t i = 0; i < n; i++) {
    uart_poll_out(rpc_uart, buf[i]);
  }
  return 0;
}

int main(void) {
  utvm_rpc_config_t cfg;

  if (!device_is_ready(rpc_uart)) {
    printk("utvm_rpc_server: UART not ready\n");
    return 0;
  }
  memset(&cfg, 0, sizeof(cfg));
  cfg.models = utvm_rpc_models;
  cfg.num_models = utvm_rpc_num_models;
  cfg.io_buf = io_buf;
  cfg.io_buf_size = sizeof(io_buf);
#if CONFIG_APP_RPC_POOL_SIZE > 0
  cfg.pool = pool;
  cfg.pool_size = sizeof(pool);
#endif
  cfg.frame_buf = frame_buf;
  cfg.frame_buf_size = sizeof(frame_buf);
  cfg.read = rpc_read;
  cfg.write = rpc_write;
  cfg.interbyte_timeout_ms = CONFIG_APP_RPC_INTERBYTE_TIMEOUT_MS;
  if (utvm_rpc_init(&server, &cfg) != UTVM_OK) {
    printk("utvm_rpc_server: bad configuration: CONFIG_APP_RPC_IO_BUF_SIZE=%u, need %u\n",
           (unsigned int)sizeof(io_buf),
           (unsigned int)utvm_rpc_io_size(utvm_rpc_models, utvm_rpc_num_models));
    return 0;
  }

  uart_irq_callback_user_data_set(rpc_uart, uart_isr, NULL);
  uart_irq_rx_enable(rpc_uart);

  printk("utvm_rpc_server: ready, %u model(s), max payload %u, on %s\n",
         (unsigned int)utvm_rpc_num_models, (unsigned int)CONFIG_APP_RPC_MAX_PAYLOAD,
         rpc_uart->name);
  (void)utvm_rpc_serve(&server); /* rpc_read never reports end of stream */
  return 0;
}
