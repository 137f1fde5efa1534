"""A C test program for any compiled model: fills the inputs, runs, prints outputs and timing.

The same program runs on the host and on the emulated boards (printf through picolibc's
semihosting). It prints:

    UTVM_CYCLES <per-run counter deltas, space separated>
    UTVM_OUTPUT <index> <hex bytes>
    UTVM_STATUS <return code of the last run>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UtvmError


@dataclass
class HarnessModel:
    """One model the test program runs: its C name, input values and output sizes; ``kept``
    output indices are printed only after every model has run (--keep: they must survive)."""

    name: str
    inputs: list[np.ndarray]
    output_sizes: list[int]
    kept: tuple[int, ...] = ()


def write_harness(directory: Path, model_name: str, inputs: list[np.ndarray],
                  output_sizes: list[int], repeats: int = 1) -> Path:
    return write_models_harness(directory, [HarnessModel(model_name, inputs, output_sizes)], repeats)


def write_models_harness(directory: Path, models: list[HarnessModel], repeats: int = 1) -> Path:
    """The test program of one model, or of several run one after the other (each model's lines
    then follow a line ``UTVM_MODEL <k>``; :func:`parse_models_output` splits them)."""
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        "",
        '#include "utvm/model.h"',
        '#include "utvm/platform.h"',
        *[f'#include "tvmgen_{m.name}.h"' for m in models],
        "",
        "/* the descriptors (declared here too: the header of --compat tvm-0.18 does not) */",
        *[f"extern const utvm_model_t tvmgen_{m.name}_model;" for m in models],
        "",
        f"#define HARNESS_REPEATS {repeats}",
        "",
        "static void print_output(uint32_t i, const uint8_t* p, uint32_t size, const char* tag) {",
        "  uint32_t k;",
        '  printf("%s %lu ", tag, (unsigned long)i);',
        "  for (k = 0; k < size; ++k) {",
        '    printf("%02x", p[k]);',
        "  }",
        '  printf("\\n");',
        "}",
        "",
    ]
    main = ["int main(void) {", "  static uint32_t cycles[HARNESS_REPEATS];", "  int32_t rc = 0;", "  uint32_t r, i;",
            "  const utvm_model_t* m;"]
    tail: list[str] = []
    for k, model in enumerate(models):
        n_in, n_out = len(model.inputs), len(model.output_sizes)
        for i, arr in enumerate(model.inputs):
            data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
            body = ",".join(str(int(b)) for b in data)
            lines.append(f"static const uint8_t harness{k}_in{i}[{max(data.size, 1)}] = {{{body}}};")
            lines.append(f"static uint8_t harness{k}_in_buf{i}[{max(data.size, 1)}] __attribute__((aligned(16)));")
        for i, size in enumerate(model.output_sizes):
            lines.append(f"static uint8_t harness{k}_out_buf{i}[{max(size, 1)}] __attribute__((aligned(16)));")
        main += [f"  void* in{k}[{max(n_in, 1)}];", f"  void* out{k}[{max(n_out, 1)}];"]
        body = [f"  m = &tvmgen_{model.name}_model;"]
        if len(models) > 1:
            body.append(f'  printf("UTVM_MODEL {k}\\n");')
        for i in range(n_in):
            body.append(f"  in{k}[{i}] = m->io_in_pool ? m->io_in_pool(NULL, 0, {i}u) : (void*)harness{k}_in_buf{i};")
        for i in range(n_out):
            body.append(f"  out{k}[{i}] = m->io_in_pool ? m->io_in_pool(NULL, 1, {i}u) : (void*)harness{k}_out_buf{i};")
        body.append("  for (r = 0; r < HARNESS_REPEATS; ++r) {")
        for i in range(n_in):
            body.append(f"    memcpy(in{k}[{i}], harness{k}_in{i}, sizeof(harness{k}_in{i}));"
                        "  /* refill: the pool may reuse it */")
        body += [
            "    {",
            "      uint32_t t0 = utvm_platform_cycles();",
            f"      rc = m->run(in{k}, out{k}, NULL);",
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
            f"  for (i = 0; i < {n_out}u; ++i) {{",
        ]
        if model.kept:
            body.append(f"    if ({' || '.join(f'i == {i}u' for i in model.kept)}) {{\n      continue;\n    }}")
        body += [
            f'    print_output(i, (const uint8_t*)out{k}[i], m->outputs[i].size_bytes, "UTVM_OUTPUT");',
            "  }",
            "#ifdef UTVM_PROFILE",
            "  for (i = 0; i < m->num_ops; ++i) {",
            '    printf("UTVM_OP %s %lu\\n", m->op_names[i], (unsigned long)m->op_cycles[i]);',
            "  }",
            "#endif",
            "  if (rc != 0) {",
            "    return 3;",
            "  }",
        ]
        main += body
        for i in model.kept:
            tail.append(f'  printf("UTVM_KEPT {k} ");')
            tail.append(f'  print_output({i}u, (const uint8_t*)out{k}[{i}], tvmgen_{model.name}_model.outputs[{i}].size_bytes, "");')
    main += [*tail, "  return 0;", "}"]
    path = directory / "harness_main.c"
    path.write_text("\n".join(lines + [""] + main) + "\n")
    return path


def parse_models_output(stdout: str, count: int) -> list[str]:
    """The test program's output of several models: model k's lines, its kept outputs (printed
    at the end as ``UTVM_KEPT k  i <hex>``) put back among them as ``UTVM_OUTPUT i <hex>``."""
    if count == 1:
        return [stdout]
    parts = re.split(r"^UTVM_MODEL (\d+)$", stdout, flags=re.M)
    blocks = [""] * count
    for index, text in zip(parts[1::2], parts[2::2]):
        blocks[int(index)] = text
    for k, i, data in re.findall(r"^UTVM_KEPT (\d+)\s+(\d+) ([0-9a-f]*)$", stdout, re.M):
        blocks[int(k)] += f"\nUTVM_OUTPUT {i} {data}\n"
    return blocks


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
