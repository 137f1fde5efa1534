"""A C test program for any compiled model: fills the inputs, runs, prints outputs and timing.

The same program runs on the host and on the emulated boards (printf through picolibc's
semihosting). It prints:

    UTVM_CYCLES <per-run counter deltas, space separated>
    UTVM_OUTPUT <index> <hex bytes>
    UTVM_STATUS <return code of the last run>
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import UtvmError


def write_harness(directory: Path, model_name: str, inputs: list[np.ndarray],
                  output_sizes: list[int], repeats: int = 1) -> Path:
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        "",
        '#include "utvm/model.h"',
        '#include "utvm/platform.h"',
        f'#include "tvmgen_{model_name}.h"',
        "",
        "/* the descriptor (declared here too: the header of --compat tvm-0.18 does not) */",
        f"extern const utvm_model_t tvmgen_{model_name}_model;",
        "",
    ]
    for i, arr in enumerate(inputs):
        data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        body = ",".join(str(int(b)) for b in data)
        lines.append(f"static const uint8_t harness_in{i}[{max(data.size, 1)}] = {{{body}}};")
        lines.append(f"static uint8_t harness_in_buf{i}[{max(data.size, 1)}] __attribute__((aligned(16)));")
    for i, size in enumerate(output_sizes):
        lines.append(f"static uint8_t harness_out_buf{i}[{max(size, 1)}] __attribute__((aligned(16)));")
    n_in, n_out = len(inputs), len(output_sizes)
    lines += [
        f"#define HARNESS_REPEATS {repeats}",
        "",
        "int main(void) {",
        f"  const utvm_model_t* m = &tvmgen_{model_name}_model;",
        f"  void* in[{max(n_in, 1)}];",
        f"  void* out[{max(n_out, 1)}];",
        "  static uint32_t cycles[HARNESS_REPEATS];",
        "  int32_t rc = 0;",
        "  uint32_t r, i, k;",
    ]
    for i in range(n_in):
        lines.append(f"  in[{i}] = m->io_in_pool ? m->io_in_pool(NULL, 0, {i}u) : (void*)harness_in_buf{i};")
    for i in range(n_out):
        lines.append(f"  out[{i}] = m->io_in_pool ? m->io_in_pool(NULL, 1, {i}u) : (void*)harness_out_buf{i};")
    lines.append("  for (r = 0; r < HARNESS_REPEATS; ++r) {")
    for i in range(n_in):
        lines.append(f"    memcpy(in[{i}], harness_in{i}, sizeof(harness_in{i}));  /* refill: the pool may reuse it */")
    lines += [
        "    {",
        "      uint32_t t0 = utvm_platform_cycles();",
        "      rc = m->run(in, out, NULL);",
        "      cycles[r] = utvm_platform_cycles() - t0;",
        "    }",
        "    if (rc != 0) {",
        "      break;",
        "    }",
        "  }",
        '  printf("UTVM_STATUS %ld\\n", (long)rc);',
        '  printf("UTVM_CYCLES");',
        "  for (r = 0; r < HARNESS_REPEATS; ++r) {",
        '    printf(" %lu", (unsigned long)cycles[r]);',
        "  }",
        '  printf("\\n");',
        "  for (i = 0; i < m->num_outputs; ++i) {",
        "    const uint8_t* p = (const uint8_t*)out[i];",
        '    printf("UTVM_OUTPUT %lu ", (unsigned long)i);',
        "    for (k = 0; k < m->outputs[i].size_bytes; ++k) {",
        '      printf("%02x", p[k]);',
        "    }",
        '    printf("\\n");',
        "  }",
        "#ifdef UTVM_PROFILE",
        "  for (i = 0; i < m->num_ops; ++i) {",
        '    printf("UTVM_OP %s %lu\\n", m->op_names[i], (unsigned long)m->op_cycles[i]);',
        "  }",
        "#endif",
        "  return rc == 0 ? 0 : 3;",
        "}",
    ]
    path = directory / "harness_main.c"
    path.write_text("\n".join(lines) + "\n")
    return path


def parse_harness_output(stdout: str, dtypes: list[str], shapes: list[tuple[int, ...]]) -> tuple[list[np.ndarray], list[int], int]:
    """(outputs, cycles per run, status) from the harness's stdout."""
    status_m = re.search(r"^UTVM_STATUS (-?\d+)", stdout, re.M)
    if not status_m:
        raise UtvmError("the model program printed no result (crashed?)")
    status = int(status_m.group(1))
    cycles_m = re.search(r"^UTVM_CYCLES(.*)$", stdout, re.M)
    cycles = [int(v) for v in cycles_m.group(1).split()] if cycles_m else []
    outs: list[np.ndarray] = []
    for i, (dtype, shape) in enumerate(zip(dtypes, shapes)):
        m = re.search(rf"^UTVM_OUTPUT {i} ([0-9a-f]*)$", stdout, re.M)
        if not m:
            raise UtvmError(f"the model program printed no output {i}")
        outs.append(np.frombuffer(bytes.fromhex(m.group(1)), dtype=dtype).reshape(shape))
    return outs, cycles, status
