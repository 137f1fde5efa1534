"""A stand-in for `python -m utvm compile`, for testing cmake/tvm.cmake's build logic fast.

Installed by tests/test_zephyr_module.py as scripts/utvm/__main__.py of a throw-away copy of
the repository layout. It writes the files of a Model Library Format directory that
tvm_add_model() lists as outputs: a model descriptor whose run() copies the reference output
of tvmgen_<name>_testdata.h (so the host program's check passes), the header with the size
macros, metadata.json, and the runtime copied from lib/crt. Each call appends a line to
<out>.calls, so the test can count compiler runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LIB0 = """#include <stdint.h>
int32_t tvmgen_{n}_kernel(void) {{ return 0; }}
"""
LIB1 = """#include <string.h>
#include "tvmgen_{n}.h"
#include "tvmgen_{n}_testdata.h"
static uint8_t tvmgen_{n}_global_workspace_pool[TVMGEN_{N}_WORKSPACE_SIZE];
static const utvm_tensor_info_t in_info[1] = {{{{"input", UTVM_DTYPE_INT8, 1, {{{isz}}}, {isz}, 0.0f, 0}}}};
static const utvm_tensor_info_t out_info[1] = {{{{"output", UTVM_DTYPE_INT8, 1, {{{osz}}}, {osz}, 0.0f, 0}}}};
static int32_t run(void* const* in, void* const* out, uint8_t* pool) {{
  (void)in;
  if (pool == NULL) pool = tvmgen_{n}_global_workspace_pool;
  pool[0] = 1;
  memcpy(out[0], tvmgen_{n}_test_outputs[0], {osz});
  return 0;
}}
const utvm_model_t tvmgen_{n}_model = {{"{n}", 1, 1, in_info, out_info,
    TVMGEN_{N}_WORKSPACE_SIZE, run, NULL, 0, NULL, NULL}};
"""
LIB2 = """#include <stdint.h>
const uint8_t tvmgen_{n}_constants[64] = {{1}};
"""
HEADER = """#ifndef TVMGEN_{N}_H_
#define TVMGEN_{N}_H_
#include "utvm/model.h"
#define TVMGEN_{N}_WORKSPACE_SIZE 64
#define TVMGEN_{N}_INPUT_SIZE {isz}
#define TVMGEN_{N}_OUTPUT_SIZE {osz}
extern const utvm_model_t tvmgen_{n}_model;
#endif
"""


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("command")
    p.add_argument("model", type=Path)
    p.add_argument("--name", required=True)
    p.add_argument("-o", type=Path, required=True, dest="out")
    p.add_argument("--cpu", help="as a compiler that specialises kernels for a CPU would")
    p.add_argument("--offload", action="append", default=[], help="external module: writes its glue")
    args, _ = p.parse_known_args()
    n, out = args.name, args.out
    with open(f"{out}.calls", "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\n")
    fmt = {"n": n, "N": n.upper(), "isz": 490, "osz": 12}
    shutil.rmtree(out, ignore_errors=True)  # as utvm compile: the directory is replaced whole
    src = out / "codegen/host/src"
    inc = out / "codegen/host/include"
    src.mkdir(parents=True, exist_ok=True)
    inc.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate((LIB0, LIB1, LIB2)):
        (src / f"{n}_lib{i}.c").write_text(text.format(**fmt))
    (inc / f"tvmgen_{n}.h").write_text(HEADER.format(**fmt))
    for module in args.offload:
        c_name = module.replace("-", "_")
        glue = out / "codegen" / c_name / "src"
        glue.mkdir(parents=True, exist_ok=True)
        (glue / f"{n}_{c_name}.c").write_text(f"int tvmgen_{n}_{c_name}_glue(void) {{ return 0; }}\n")
    (out / "metadata.json").write_text(json.dumps({"version": 7, "modules": {n: {}}}))
    shutil.copytree(ROOT / "lib/crt", out / "runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
