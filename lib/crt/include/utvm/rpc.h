/*
 * utvm RPC server: host-driven mode. A transport-independent server that lets a host write
 * inputs, run a model, read outputs and per-operator cycles over a byte stream (UART, pipe,
 * pty, TCP). C99, no heap: every buffer is owned by the caller and sized up front.
 *
 * Wire format (docs/RPC.md is the full specification):
 *
 *   0xA5 0x5A | len:u16le | cmd:u8 | seq:u8 | payload[len] | crc:u16le
 *
 * crc is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over len, cmd, seq and payload.
 * A reply has the same framing, cmd = request cmd | 0x80, the request's seq, and a payload
 * that starts with a status byte (utvm_rpc_status_t). Frames that cannot be attributed to a
 * command (bad CRC, oversized length, inter-byte timeout) are answered with cmd 0xFF.
 *
 * Two ways to drive the server:
 *  - blocking: utvm_rpc_serve() pulls bytes through the read callback (with a timeout) until
 *    the transport reports end of stream;
 *  - feed: utvm_rpc_feed() with the bytes received (e.g. from a UART interrupt or a ring
 *    buffer) and utvm_rpc_timeout() when no byte came for the inter-byte timeout.
 * Replies always go out through the write callback, from the thread that feeds the server.
 */
#ifndef UTVM_RPC_H_
#define UTVM_RPC_H_

#include <stddef.h>
#include <stdint.h>

#include "crt.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UTVM_RPC_PROTOCOL_VERSION 2u

#define UTVM_RPC_SYNC0 0xA5u
#define UTVM_RPC_SYNC1 0x5Au
/** Bytes before the payload: sync (2), len (2), cmd, seq. */
#define UTVM_RPC_HEADER_SIZE 6u
/** Bytes after the payload: crc (2). */
#define UTVM_RPC_TRAILER_SIZE 2u
#define UTVM_RPC_OVERHEAD (UTVM_RPC_HEADER_SIZE + UTVM_RPC_TRAILER_SIZE)
/** Frame buffer bytes needed to receive requests with up to `payload` payload bytes. */
#define UTVM_RPC_FRAME_BUF_SIZE(payload) ((size_t)(payload) + UTVM_RPC_OVERHEAD)
/** Smallest frame buffer the server accepts (64 payload bytes). */
#define UTVM_RPC_MIN_FRAME_BUF_SIZE UTVM_RPC_FRAME_BUF_SIZE(64u)
/** Alignment of every tensor inside the I/O buffer. */
#define UTVM_RPC_IO_ALIGNMENT 16u
/** Longest name (model, tensor or operator) sent; longer names are cut. */
#define UTVM_RPC_MAX_NAME 255u

/** Request commands; the reply carries cmd | UTVM_RPC_REPLY. */
typedef enum {
  UTVM_RPC_CMD_PING = 0x00,        /**< payload echoed back */
  UTVM_RPC_CMD_INFO = 0x01,        /**< server: version, models, buffer sizes */
  UTVM_RPC_CMD_MODEL_INFO = 0x02,  /**< u8 model -> name, sizes, tensors */
  UTVM_RPC_CMD_OP_NAMES = 0x03,    /**< u8 model, u16 first -> operator names */
  UTVM_RPC_CMD_WRITE_INPUT = 0x10, /**< u8 model, u8 index, u32 offset, bytes */
  UTVM_RPC_CMD_READ_OUTPUT = 0x11, /**< u8 model, u8 index, u32 offset, u16 length */
  UTVM_RPC_CMD_READ_INPUT = 0x12,  /**< u8 model, u8 index, u32 offset, u16 length */
  UTVM_RPC_CMD_RUN = 0x20,         /**< u8 model [u16 repeats] -> i32 model status, u32 cycles */
  UTVM_RPC_CMD_PROFILE = 0x21,     /**< u8 model, u16 first -> cycles of the last run */
  UTVM_RPC_CMD_RESET = 0x30,       /**< zero all I/O buffers, forget the last runs */
} utvm_rpc_cmd_t;

#define UTVM_RPC_REPLY 0x80u
/** cmd of the reply to a frame that could not be parsed (no command to answer). */
#define UTVM_RPC_CMD_FRAME_ERROR 0xFFu

/** First byte of every reply payload. */
typedef enum {
  UTVM_RPC_OK = 0,
  UTVM_RPC_ERR_CRC = 1,          /**< frame CRC mismatch */
  UTVM_RPC_ERR_TOO_LONG = 2,     /**< len larger than the frame buffer */
  UTVM_RPC_ERR_TRUNCATED = 3,    /**< inter-byte timeout inside a frame */
  UTVM_RPC_ERR_UNKNOWN_CMD = 4,  /**< no such command */
  UTVM_RPC_ERR_BAD_LENGTH = 5,   /**< payload too short or too long for the command */
  UTVM_RPC_ERR_BAD_MODEL = 6,    /**< model index out of range */
  UTVM_RPC_ERR_BAD_TENSOR = 7,   /**< tensor index out of range */
  UTVM_RPC_ERR_BAD_RANGE = 8,    /**< offset/length outside the tensor (or op list) */
  UTVM_RPC_ERR_RUN_FAILED = 9,   /**< the model's run returned non-zero */
  UTVM_RPC_ERR_UNSUPPORTED = 10, /**< e.g. profile of a model built without UTVM_PROFILE */
  UTVM_RPC_ERR_NO_RUN = 11,      /**< profile before any successful run */
} utvm_rpc_status_t;

/** Model flags in the MODEL_INFO reply. */
#define UTVM_RPC_MODEL_PROFILING 0x01u /**< op_cycles recorded (built with UTVM_PROFILE) */
#define UTVM_RPC_MODEL_IO_IN_POOL 0x02u

/** Timeout value for "wait as long as it takes". */
#define UTVM_RPC_WAIT_FOREVER 0xFFFFFFFFu

/**
 * Read up to n bytes, waiting at most timeout_ms (UTVM_RPC_WAIT_FOREVER: no limit) for the
 * first one. Returns the number of bytes read, 0 on timeout, negative when the transport is
 * closed (utvm_rpc_serve then returns).
 */
typedef int32_t (*utvm_rpc_read_fn)(void* ctx, uint8_t* buf, size_t n, uint32_t timeout_ms);
/** Write all n bytes; returns 0 on success, negative on failure. */
typedef int32_t (*utvm_rpc_write_fn)(void* ctx, const uint8_t* buf, size_t n);

typedef struct {
  const utvm_model_t* const* models;
  uint32_t num_models; /**< at most 255 */
  /** Inputs and outputs of every model, laid out one after the other (utvm_rpc_io_size). */
  uint8_t* io_buf;
  size_t io_buf_size;
  /** Workspace for runs, 16-aligned, >= the largest workspace_size; NULL: static pools. */
  uint8_t* pool;
  size_t pool_size;
  /** Receive buffer: the largest request is frame_buf_size - UTVM_RPC_OVERHEAD bytes. */
  uint8_t* frame_buf;
  size_t frame_buf_size;
  utvm_rpc_read_fn read; /**< may be NULL when only the feed API is used */
  utvm_rpc_write_fn write;
  void* transport_ctx;
  /** A frame whose next byte does not come within this time is dropped (0: 100 ms). */
  uint32_t interbyte_timeout_ms;
} utvm_rpc_config_t;

/** Counters, for diagnostics. */
typedef struct {
  uint32_t frames_ok;
  uint32_t frames_bad; /**< CRC, length, timeout */
  uint32_t bytes_skipped; /**< bytes outside frames while hunting for the sync bytes */
  uint32_t write_errors;
} utvm_rpc_stats_t;

/** Offsets of one model's tensors in the I/O buffer (internal; sized by the config). */
typedef struct {
  size_t base; /**< offset of the model's first tensor in io_buf */
} utvm_rpc_model_slot_t;

#ifndef UTVM_RPC_MAX_MODELS
#define UTVM_RPC_MAX_MODELS 8u
#endif

typedef struct {
  utvm_rpc_config_t cfg;
  utvm_rpc_model_slot_t slots[UTVM_RPC_MAX_MODELS];
  uint32_t last_cycles[UTVM_RPC_MAX_MODELS];
  uint8_t has_run[UTVM_RPC_MAX_MODELS];
  /* parser */
  size_t pos;      /**< bytes of the current frame in frame_buf */
  size_t expected; /**< total frame bytes once len is known, else 0 */
  utvm_rpc_stats_t stats;
  uint16_t tx_crc;
} utvm_rpc_server_t;

/** Bytes of io_buf needed for the given models (each tensor 16-aligned). */
size_t utvm_rpc_io_size(const utvm_model_t* const* models, uint32_t num_models);

/** Largest workspace_size of the given models (the size of a shared pool). */
size_t utvm_rpc_pool_size(const utvm_model_t* const* models, uint32_t num_models);

/**
 * Check the configuration and prepare the server. Returns UTVM_OK, or UTVM_ERR_ARGUMENT when
 * a buffer is missing or too small, too many models are given, or write is NULL.
 */
utvm_status_t utvm_rpc_init(utvm_rpc_server_t* server, const utvm_rpc_config_t* config);

/** Feed received bytes; complete frames are answered through the write callback. */
void utvm_rpc_feed(utvm_rpc_server_t* server, const uint8_t* data, size_t n);

/** Tell the server that no byte arrived for the inter-byte timeout: drops a partial frame
 *  (replying UTVM_RPC_ERR_TRUNCATED). Harmless between frames. */
void utvm_rpc_timeout(utvm_rpc_server_t* server);

/** 1 while the parser is inside a frame (the transport should then time out reads). */
int utvm_rpc_in_frame(const utvm_rpc_server_t* server);

/** Serve through the read callback until it reports end of stream; returns UTVM_OK, or
 *  UTVM_ERR_ARGUMENT when the configuration has no read callback. */
utvm_status_t utvm_rpc_serve(utvm_rpc_server_t* server);

/** CRC-16/CCITT-FALSE update (poly 0x1021, no reflection); start with 0xFFFF. */
uint16_t utvm_rpc_crc16(uint16_t crc, const uint8_t* data, size_t n);

/**
 * The model table of a server program: rpc_host_main.c, rpc_uart.c and the Zephyr sample
 * declare these; one translation unit of the application defines them, e.g.
 *   extern const utvm_model_t tvmgen_kws_model;
 *   UTVM_RPC_DEFINE_MODELS(&tvmgen_kws_model)
 */
extern const utvm_model_t* const utvm_rpc_models[];
extern const uint32_t utvm_rpc_num_models;

#define UTVM_RPC_DEFINE_MODELS(...)                                        \
  const utvm_model_t* const utvm_rpc_models[] = {__VA_ARGS__};             \
  const uint32_t utvm_rpc_num_models =                                      \
      (uint32_t)(sizeof(utvm_rpc_models) / sizeof(utvm_rpc_models[0]))

#ifdef __cplusplus
}
#endif

#endif /* UTVM_RPC_H_ */
