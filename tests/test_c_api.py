"""The generated C API: argument checks, application-owned pools, io-in-pool mapping."""

from __future__ import annotations

import subprocess
from pathlib import Path

from utvm.compiler import CompileOptions, compile_model
from utvm.run.host import HOST_CFLAGS, mlf_sources

MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "tvmgen_ad.h"

static uint8_t in[TVMGEN_AD_INPUT_1_SIZE + 4] __attribute__((aligned(16)));
static uint8_t out_a[TVMGEN_AD_IDENTITY_SIZE] __attribute__((aligned(16)));
static uint8_t out_b[TVMGEN_AD_IDENTITY_SIZE] __attribute__((aligned(16)));
static uint8_t pool[TVMGEN_AD_WORKSPACE_SIZE + 16] __attribute__((aligned(16)));

int main(void) {
  struct tvmgen_ad_inputs i = {in};
  struct tvmgen_ad_outputs o = {out_a};
  unsigned k;
  for (k = 0; k < sizeof(in); ++k) in[k] = (uint8_t)(k * 7u);
  printf("null %d\n", (int)tvmgen_ad_run(NULL, &o));
  i.input_1 = in + 1;
  printf("misaligned_input %d\n", (int)tvmgen_ad_run(&i, &o));
  i.input_1 = in;
  printf("misaligned_pool %d\n", (int)tvmgen_ad_run_with_pool(&i, &o, pool + 1));
  printf("static %d\n", (int)tvmgen_ad_run(&i, &o));
  o.output = out_b;
  printf("own_pool %d\n", (int)tvmgen_ad_run_with_pool(&i, &o, pool));
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
    assert out == {"null": "1", "misaligned_input": "1", "misaligned_pool": "1", "static": "0",
                   "own_pool": "0", "same": "1"}
