"""The C API: the generated run functions' argument checks (their int32 returns are utvm_status_t
values), application-owned pools, io-in-pool mapping; the runtime's entry points that can fail
return utvm_status_t (issue 24)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from utvm.compiler import CompileOptions, compile_model
from utvm.run.host import HOST_CFLAGS, mlf_sources

MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "tvmgen_ad.h"
#include "utvm/crt.h"

static uint8_t in[TVMGEN_AD_INPUT_1_SIZE + 4] __attribute__((aligned(16)));
static uint8_t out_a[TVMGEN_AD_IDENTITY_SIZE] __attribute__((aligned(16)));
static uint8_t out_b[TVMGEN_AD_IDENTITY_SIZE] __attribute__((aligned(16)));
static uint8_t pool[TVMGEN_AD_WORKSPACE_SIZE + 16] __attribute__((aligned(16)));

int main(void) {
  struct tvmgen_ad_inputs i = {in};
  struct tvmgen_ad_outputs o = {out_a};
  unsigned k;
  for (k = 0; k < sizeof(in); ++k) in[k] = (uint8_t)(k * 7u);
  printf("null %d\n", tvmgen_ad_run(NULL, &o) == UTVM_ERR_ARGUMENT);
  i.input_1 = in + 1;
  printf("misaligned_input %d\n", tvmgen_ad_run(&i, &o) == UTVM_ERR_ARGUMENT);
  i.input_1 = in;
  printf("misaligned_pool %d\n", tvmgen_ad_run_with_pool(&i, &o, pool + 1) == UTVM_ERR_ARGUMENT);
  printf("static %d\n", tvmgen_ad_run(&i, &o) == UTVM_OK);
  o.output = out_b;
  printf("own_pool %d\n", tvmgen_ad_run_with_pool(&i, &o, pool) == UTVM_OK);
  printf("same %d\n", memcmp(out_a, out_b, sizeof(out_a)) == 0);
  return 0;
}
"""


def test_argument_checks_and_own_pool(models_dir: Path, tmp_path: Path) -> None:
    result = compile_model(models_dir / "ad01_int8.tflite", tmp_path / "mlf", CompileOptions(name="ad"))
    header = (result.mlf_dir / "codegen" / "host" / "include" / "tvmgen_ad.h").read_text()
    assert "TVMGEN_AD_INPUT_1_SIZE 640" in header and "TVMGEN_AD_WORKSPACE_SIZE" in header
    main = tmp_path / "main.c"
    main.write_text(MAIN.replace("o.output", "o.identity"))
    sources, includes = mlf_sources(result.mlf_dir, "host")
    exe = tmp_path / "api"
    subprocess.run(["cc", *HOST_CFLAGS, *[f"-I{d}" for d in includes], *map(str, sources), str(main),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    out = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                      check=True).stdout.splitlines())
    assert out == {"null": "1", "misaligned_input": "1", "misaligned_pool": "1", "static": "1",
                   "own_pool": "1", "same": "1"}


REPO = Path(__file__).resolve().parents[1]
CRT = REPO / "lib" / "crt"

STATUS = r"""
#include <stdio.h>
#include <string.h>
#include "utvm/crt.h"
#include "utvm/rpc.h"
#ifdef ZEPHYR_PORT
#include "utvm_zephyr.h"
#endif

/* the declared types, exactly: a different return type is an incompatible pointer (-Werror) */
static utvm_status_t (*const init_fn)(utvm_rpc_server_t*, const utvm_rpc_config_t*) = utvm_rpc_init;
static utvm_status_t (*const serve_fn)(utvm_rpc_server_t*) = utvm_rpc_serve;
static void (*const feed_fn)(utvm_rpc_server_t*, const uint8_t*, size_t) = utvm_rpc_feed;
static void (*const scratch_fn)(void*, size_t) = utvm_scratch_set;

static int32_t no_write(void* ctx, const uint8_t* buf, size_t n) { (void)ctx, (void)buf; return (int32_t)n; }

static utvm_rpc_server_t server;
static uint8_t frame[UTVM_RPC_MIN_FRAME_BUF_SIZE];

int main(void) {
  utvm_rpc_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  printf("init_null %d\n", init_fn(&server, NULL) == UTVM_ERR_ARGUMENT);
  printf("init_no_write %d\n", init_fn(&server, &cfg) == UTVM_ERR_ARGUMENT);
  cfg.write = no_write;
  cfg.frame_buf = frame;
  cfg.frame_buf_size = sizeof(frame);
  printf("init_ok %d\n", init_fn(&server, &cfg) == UTVM_OK);
  feed_fn(&server, frame, 0);
  printf("serve_no_read %d\n", serve_fn(&server) == UTVM_ERR_ARGUMENT);
  scratch_fn(NULL, 0);
#ifdef ZEPHYR_PORT
  {
    utvm_status_t (*const stack_fn)(size_t*) = utvm_zephyr_stack_unused;
    size_t unused = 1;
    printf("stack %d\n", (int)stack_fn(&unused));
    printf("stack_null %d\n", stack_fn(NULL) == UTVM_ERR_ARGUMENT);
  }
#endif
  return 0;
}
"""


@pytest.mark.parametrize("port", ["host", "zephyr", "zephyr_stack_check"])
def test_runtime_entry_points_return_utvm_status(port: str, tmp_path: Path) -> None:
    """utvm_rpc_init / utvm_rpc_serve / utvm_zephyr_stack_unused are utvm_status_t, the calls that
    cannot fail void; real lib/crt sources, the Zephyr port against tests/zephyr/host's stand-ins."""
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler")
    main = tmp_path / "status.c"
    main.write_text(STATUS)
    srcs = [CRT / "src/rpc_server.c", CRT / "src/backend.c"]
    flags = [f"-I{CRT / 'include'}"]
    if port == "host":
        srcs.append(CRT / "ports/host/platform_host.c")
    else:
        stubs = REPO / "tests/zephyr/host"
        srcs += [CRT / "ports/zephyr/platform_zephyr.c", stubs / "zephyr_host.c"]
        flags += [f"-I{stubs}", f"-I{CRT / 'ports/zephyr'}", "-DZEPHYR_PORT", "-DCONFIG_UTVM_LOG_LINE_SIZE=128"]
        if port == "zephyr_stack_check":
            flags.append("-DCONFIG_UTVM_STACK_CHECK=1")
    exe = tmp_path / "status"
    r = subprocess.run(["cc", *HOST_CFLAGS, *flags, *map(str, srcs), str(main), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                      check=True).stdout.splitlines())
    expected = {"init_null": "1", "init_no_write": "1", "init_ok": "1", "serve_no_read": "1"}
    if port != "host":  # UTVM_OK with the stack check (the stand-in reports 0 bytes), else UNSUPPORTED
        expected |= {"stack": "0" if port == "zephyr_stack_check" else "4", "stack_null": "1"}
    assert out == expected
