/*
 * RPC server for the host (Linux/macOS): serves the models of utvm_rpc_models[] over
 * stdin/stdout (default) or over a pseudo-terminal (--pty [LINK]).
 *
 *   rpc_host_main [--pty [LINK]] [--interbyte-ms N]
 *
 * The wire is binary: nothing but frames is ever written to stdout. Logs go to stderr through
 * utvm_platform_log (ports/host). With --pty the slave device name is logged as
 * "utvm-rpc: pty /dev/pts/N" and, given LINK, a symlink LINK -> /dev/pts/N is created; the
 * server then runs until killed (a client may open and close the pty many times).
 *
 * Compiled only with -DUTVM_RPC_MAIN (building every file of ports/host for a plain model
 * must not get a second main()).
 *
 * Build: this file, lib/crt/src/rpc_server.c, the host port, the model(s), and one file that
 * defines the model table with UTVM_RPC_DEFINE_MODELS (utvm/rpc.h). Buffer sizes:
 * -DUTVM_RPC_IO_BUF_SIZE=bytes, -DUTVM_RPC_MAX_PAYLOAD=bytes, -DUTVM_RPC_POOL_SIZE=bytes
 * (0: the models' static pools).
 */
#ifdef UTVM_RPC_MAIN

#define _XOPEN_SOURCE 600
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "utvm/crt.h"
#include "utvm/platform.h"
#include "utvm/rpc.h"

#ifndef UTVM_RPC_IO_BUF_SIZE
#define UTVM_RPC_IO_BUF_SIZE (4u * 1024u * 1024u)
#endif
#ifndef UTVM_RPC_MAX_PAYLOAD
#define UTVM_RPC_MAX_PAYLOAD 4096u
#endif
#ifndef UTVM_RPC_POOL_SIZE
#define UTVM_RPC_POOL_SIZE 0u
#endif

#if defined(__GNUC__)
#define UTVM_ALIGNED(n) __attribute__((aligned(n)))
#else
#define UTVM_ALIGNED(n)
#endif

static uint8_t g_io_buf[UTVM_RPC_IO_BUF_SIZE] UTVM_ALIGNED(16);
static uint8_t g_frame_buf[UTVM_RPC_FRAME_BUF_SIZE(UTVM_RPC_MAX_PAYLOAD)];
#if UTVM_RPC_POOL_SIZE > 0
static uint8_t g_pool[UTVM_RPC_POOL_SIZE] UTVM_ALIGNED(16);
#endif
static utvm_rpc_server_t g_server;

typedef struct {
  int in_fd;
  int out_fd;
} fd_transport_t;

static int32_t fd_read(void* ctx, uint8_t* buf, size_t n, uint32_t timeout_ms) {
  fd_transport_t* t = (fd_transport_t*)ctx;
  for (;;) {
    struct pollfd p;
    int rc;
    ssize_t got;
    p.fd = t->in_fd;
    p.events = POLLIN;
    p.revents = 0;
    rc = poll(&p, 1, timeout_ms == UTVM_RPC_WAIT_FOREVER ? -1 : (int)timeout_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (rc == 0) return 0;
    got = read(t->in_fd, buf, n);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EIO) {
        /* pty: no slave open at the moment; wait and retry. */
        (void)poll(NULL, 0, 20);
        return 0;
      }
      return -1;
    }
    if (got == 0) return -1; /* end of stream */
    return (int32_t)got;
  }
}

static int32_t fd_write(void* ctx, const uint8_t* buf, size_t n) {
  fd_transport_t* t = (fd_transport_t*)ctx;
  while (n > 0u) {
    ssize_t put = write(t->out_fd, buf, n);
    if (put < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -1;
    }
    buf += put;
    n -= (size_t)put;
  }
  return 0;
}

static int open_pty(const char* link, int* keep_slave) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  const char* name;
  struct termios tio;
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return -1;
  name = ptsname(master);
  if (name == NULL) return -1;
  /* Keep one slave descriptor open so the master never reads EIO between clients, and make
   * the line raw: no echo (the server would see its own replies), no CR/LF translation. */
  *keep_slave = open(name, O_RDWR | O_NOCTTY);
  if (*keep_slave < 0 || tcgetattr(*keep_slave, &tio) != 0) return -1;
  cfmakeraw(&tio);
  if (tcsetattr(*keep_slave, TCSANOW, &tio) != 0) return -1;
  if (link != NULL) {
    (void)unlink(link);
    if (symlink(name, link) != 0) {
      utvm_platform_log("utvm-rpc: cannot create link %s", link);
      return -1;
    }
  }
  utvm_platform_log("utvm-rpc: pty %s", name);
  return master;
}

/* The longest inter-byte timeout accepted: 10 minutes (poll() takes an int of milliseconds). */
#define MAX_INTERBYTE_MS 600000L

/* A decimal number of milliseconds in [1, MAX_INTERBYTE_MS], nothing else in the text. */
static int parse_ms(const char* text, long* out) {
  char* end = NULL;
  long v;
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 1 || v > MAX_INTERBYTE_MS) return 0;
  *out = v;
  return 1;
}

int main(int argc, char** argv) {
  utvm_rpc_config_t cfg;
  fd_transport_t tr;
  int i;
  int use_pty = 0;
  const char* link = NULL;
  int keep_slave = -1;
  long interbyte_ms = 100;
  utvm_status_t rc;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--pty") == 0) {
      use_pty = 1;
      if (i + 1 < argc && argv[i + 1][0] != '-') link = argv[++i];
    } else if (strcmp(argv[i], "--interbyte-ms") == 0 && i + 1 < argc) {
      if (!parse_ms(argv[++i], &interbyte_ms)) {
        fprintf(stderr, "error: --interbyte-ms must be a whole number of milliseconds from 1 to %ld, not '%s'\n",
                MAX_INTERBYTE_MS, argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: %s [--pty [LINK]] [--interbyte-ms N]\n", argv[0]);
      return 2;
    }
  }
  (void)signal(SIGPIPE, SIG_IGN);

  tr.in_fd = 0;
  tr.out_fd = 1;
  if (use_pty) {
    int fd = open_pty(link, &keep_slave);
    if (fd < 0) {
      utvm_platform_log("utvm-rpc: cannot open a pty: %s", strerror(errno));
      return 1;
    }
    tr.in_fd = fd;
    tr.out_fd = fd;
  }

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
  cfg.read = fd_read;
  cfg.write = fd_write;
  cfg.transport_ctx = &tr;
  cfg.interbyte_timeout_ms = (uint32_t)interbyte_ms;
  rc = utvm_rpc_init(&g_server, &cfg);
  if (rc != UTVM_OK) {
    utvm_platform_log("utvm-rpc: bad configuration: io buffer %lu bytes (need %lu), pool %lu "
                      "bytes (need %lu or 0), %lu models",
                      (unsigned long)sizeof(g_io_buf),
                      (unsigned long)utvm_rpc_io_size(utvm_rpc_models, utvm_rpc_num_models),
                      (unsigned long)UTVM_RPC_POOL_SIZE,
                      (unsigned long)utvm_rpc_pool_size(utvm_rpc_models, utvm_rpc_num_models),
                      (unsigned long)utvm_rpc_num_models);
    return 1;
  }
  utvm_platform_log("utvm-rpc: serving %lu model(s), max payload %lu bytes",
                    (unsigned long)utvm_rpc_num_models, (unsigned long)UTVM_RPC_MAX_PAYLOAD);
  rc = utvm_rpc_serve(&g_server);
  if (keep_slave >= 0) (void)close(keep_slave);
  return rc == UTVM_OK ? 0 : 1;
}

#else
/* Not an RPC build: this translation unit is intentionally empty. */
typedef int utvm_rpc_host_main_unused_t;
#endif /* UTVM_RPC_MAIN */
