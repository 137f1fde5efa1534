"""Build a compiled model (an MLF) on the host with AddressSanitizer and UndefinedBehaviorSanitizer
and run it through every entry point on extreme and random inputs.

The C harness fills the inputs with all-zero, all-minimum, all-maximum (the element type's
extremes; for float32 the largest finite magnitudes) and ``randoms`` seeded random patterns; for
each it runs the model through ``tvmgen_<name>_run``, ``tvmgen_<name>_run_with_pool`` and the
descriptor's ``run`` (static pool and an own pool), checks that all four give the same bytes, and
checks that every entry point refuses NULL and misaligned buffers with UTVM_ERR_ARGUMENT. Any
sanitizer finding aborts the program (``-fno-sanitize-recover=all``).
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
#: -O0: as thorough for the sanitizers, and eight times faster to compile than -O1 on big kernels
CFLAGS = ["-std=c99", "-O0", "-g", "-Wall", "-Wextra", "-Werror"]
KINDS = ("zero", "min", "max")

_FILL = {  # dtype code -> (min, max) as C expressions of the element type
    0: ("int8_t", "-128", "127"), 1: ("uint8_t", "0", "255"), 2: ("int16_t", "-32768", "32767"),
    3: ("int32_t", "INT32_MIN", "INT32_MAX"), 4: ("float", "-FLT_MAX", "FLT_MAX"), 5: ("uint8_t", "0", "1"),
}


@dataclass
class SanitizerRun:
    problem: str      # '' when clean
    inputs: int       # input sets run (each through every entry point)
    output: str


def _fields(header: str, prefix: str, which: str) -> list[str]:
    m = re.search(rf"struct {prefix}_{which} \{{(.*?)\}};", header, re.S)
    return re.findall(r"void\* (\w+);", m.group(1)) if m else []


def harness_source(mlf: Path, name: str, randoms: int) -> str:
    prefix = f"tvmgen_{name}"
    header = (mlf / "codegen" / "host" / "include" / f"{prefix}.h").read_text()
    ins, outs = _fields(header, prefix, "inputs"), _fields(header, prefix, "outputs")
    fill_cases = "\n".join(
        f"      case {code}: {{ {ctype}* p = ({ctype}*)buf; for (j = 0; j < n / sizeof(*p); ++j) "
        f"p[j] = kind == 0 ? ({ctype})0 : kind == 1 ? ({ctype}){lo} : ({ctype}){hi}; break; }}"
        for code, (ctype, lo, hi) in _FILL.items())
    set_in = "\n".join(f"  ti->{f} = in[{i}];" for i, f in enumerate(ins))
    set_out = "\n".join(f"  to->{f} = out[{i}];" for i, f in enumerate(outs))
    n_in, n_out = max(len(ins), 1), max(len(outs), 1)
    return f"""\
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utvm/crt.h"
#include "utvm/model.h"
#include "{prefix}.h"

extern const utvm_model_t {prefix}_model;
#define M (&{prefix}_model)
#define MAXB 16777216u
static uint8_t* in[{n_in}];
static uint8_t* out[{n_out}];
static uint8_t* ref[{n_out}];
static uint8_t pool_store[{prefix.upper()}_WORKSPACE_SIZE + 32] __attribute__((aligned(16)));
static uint32_t rng = 12345u;

static uint32_t next(void) {{
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}}

static void fill(uint8_t* buf, uint32_t n, int dtype, int kind) {{
  uint32_t j;
  if (kind >= 3) {{
    for (j = 0; j < n; ++j) buf[j] = (uint8_t)next();
    if (dtype == 4) {{
      float* f = (float*)buf;
      for (j = 0; j < n / 4u; ++j) f[j] = (float)((int32_t)(next() % 2001u) - 1000) / 100.0f;
    }} else if (dtype == 5) {{
      for (j = 0; j < n; ++j) buf[j] &= 1u;
    }}
    return;
  }}
  switch (dtype) {{
{fill_cases}
    default: memset(buf, 0, n);
  }}
}}

static void set_typed(struct {prefix}_inputs* ti, struct {prefix}_outputs* to) {{
{set_in}
{set_out}
  (void)ti; (void)to;
}}

static int run_all(int kind, int* bad) {{
  struct {prefix}_inputs ti;
  struct {prefix}_outputs to;
  uint32_t i, seed = rng;
  int e;
  for (e = 0; e < 4; ++e) {{
    int32_t rc;
    rng = seed;  /* the same random input for every entry point */
    for (i = 0; i < M->num_inputs; ++i) fill(in[i], M->inputs[i].size_bytes, (int)M->inputs[i].dtype, kind);
    for (i = 0; i < M->num_outputs; ++i) memset(out[i], 0xA5, M->outputs[i].size_bytes);
    if (M->reset != NULL) M->reset();
    set_typed(&ti, &to);
    if (e == 0) rc = {prefix}_run(&ti, &to);
    else if (e == 1) rc = {prefix}_run_with_pool(&ti, &to, pool_store);
    else rc = M->run((void* const*)in, (void* const*)out, e == 2 ? NULL : pool_store);
    if (rc != 0) {{
      printf("entry point %d returned %ld on input kind %d\\n", e, (long)rc, kind);
      *bad = 1;
      return 0;
    }}
    for (i = 0; i < M->num_outputs; ++i) {{
      if (e == 0) memcpy(ref[i], out[i], M->outputs[i].size_bytes);
      else if (memcmp(ref[i], out[i], M->outputs[i].size_bytes) != 0) {{
        printf("entry point %d gives other outputs than {prefix}_run on input kind %d\\n", e, kind);
        *bad = 1;
      }}
    }}
  }}
  return 1;
}}

static int refuses(void) {{
  struct {prefix}_inputs ti;
  struct {prefix}_outputs to;
  void* ptrs[{max(n_in, n_out)}];
  uint32_t i;
  int ok = 1;
  ok &= M->run(NULL, (void* const*)out, NULL) == UTVM_ERR_ARGUMENT;
  ok &= M->run((void* const*)in, NULL, NULL) == UTVM_ERR_ARGUMENT;
  ok &= M->run((void* const*)in, (void* const*)out, pool_store + 1) == UTVM_ERR_ARGUMENT;
  ok &= {prefix}_run_with_pool(NULL, NULL, pool_store) == UTVM_ERR_ARGUMENT;
  for (i = 0; i < M->num_outputs; ++i) {{
    uint32_t k;
    for (k = 0; k < M->num_outputs; ++k) ptrs[k] = out[k] + (k == i ? 1 : 0);
    ok &= M->run((void* const*)in, (void* const*)ptrs, NULL) == UTVM_ERR_ARGUMENT;
    ptrs[i] = NULL;
    ok &= M->run((void* const*)in, (void* const*)ptrs, NULL) == UTVM_ERR_ARGUMENT;
  }}
  for (i = 0; i < M->num_inputs; ++i) {{
    uint32_t k;
    for (k = 0; k < M->num_inputs; ++k) ptrs[k] = in[k] + (k == i ? 1 : 0);
    ok &= M->run((void* const*)ptrs, (void* const*)out, NULL) == UTVM_ERR_ARGUMENT;
  }}
  (void)ti; (void)to;
  return ok;
}}

static int typed_refuses(void) {{
  struct {prefix}_inputs ti;
  struct {prefix}_outputs to;
  int ok = 1;
  uint8_t* keep;
  uint32_t i;
  for (i = 0; i < M->num_outputs; ++i) {{
    keep = out[i];
    out[i] = keep + 1;
    set_typed(&ti, &to);
    ok &= {prefix}_run(&ti, &to) == UTVM_ERR_ARGUMENT;
    ok &= {prefix}_run_with_pool(&ti, &to, pool_store) == UTVM_ERR_ARGUMENT;
    out[i] = keep;
  }}
  return ok;
}}

static uint8_t arena[MAXB] __attribute__((aligned(16)));

int main(void) {{
  uint32_t i, used = 0u;
  int kind, bad = 0, runs = 0;
  for (i = 0; i < M->num_inputs; ++i) {{ in[i] = arena + used; used += (M->inputs[i].size_bytes + 31u) & ~15u; }}
  for (i = 0; i < M->num_outputs; ++i) {{ out[i] = arena + used; used += (M->outputs[i].size_bytes + 31u) & ~15u; }}
  for (i = 0; i < M->num_outputs; ++i) {{ ref[i] = arena + used; used += (M->outputs[i].size_bytes + 31u) & ~15u; }}
  if (used > MAXB) {{ printf("tensors too large for the harness\\n"); return 3; }}
  for (kind = 0; kind < 3 + {randoms}; ++kind) {{
    if (!run_all(kind, &bad)) break;
    ++runs;
  }}
  if (!refuses() || !typed_refuses()) {{
    printf("an entry point accepted a NULL or misaligned buffer\\n");
    bad = 1;
  }}
  printf("UTVM_SANITIZER_RUNS %d\\n", runs);
  return bad;
}}
"""


def build(mlf: Path, name: str, out: Path, sanitize: bool = True, randoms: int = 3, cc: str = "cc") -> Path:
    """Build the harness and the model into ``out`` (raises CalledProcessError with the compiler's
    messages when it does not build)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from utvm.run.host import mlf_sources

    out.parent.mkdir(parents=True, exist_ok=True)
    harness = out.with_suffix(".c")
    harness.write_text(harness_source(mlf, name, randoms))
    sources, includes = mlf_sources(mlf, "host")
    flags = [*CFLAGS, *(SANITIZE if sanitize else []), *[f"-I{d}" for d in includes]]
    objdir = out.parent / f"{out.name}.o"
    objdir.mkdir(exist_ok=True)

    def compile_one(k_src: tuple[int, Path]) -> Path:
        k, src = k_src
        if src.suffix != ".c":
            return src
        obj = objdir / f"{k}_{src.stem}.o"
        subprocess.run([cc, *flags, "-c", str(src), "-o", str(obj)], check=True, capture_output=True, text=True)
        return obj

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        objects = list(pool.map(compile_one, enumerate([*sources, harness])))
    subprocess.run([cc, *flags, *map(str, objects), "-o", str(out), "-lm"], check=True, capture_output=True, text=True)
    return out


def _unlimited() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def run(binary: Path, timeout: float = 300) -> SanitizerRun:
    try:
        proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_unlimited)
    except subprocess.TimeoutExpired:
        return SanitizerRun(f"{binary.name} did not finish within {timeout:.0f} s", 0, "")
    m = re.search(r"UTVM_SANITIZER_RUNS (\d+)", proc.stdout)
    runs = int(m.group(1)) if m else 0
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or not m:
        finding = next((ln for ln in text.splitlines() if "runtime error" in ln or "ERROR: AddressSanitizer" in ln
                        or "entry point" in ln), text.strip()[-400:])
        return SanitizerRun(f"exit {proc.returncode}: {finding}", runs, text)
    return SanitizerRun("", runs, text)


def build_and_run(mlf: Path, name: str, sanitize: bool = True, randoms: int = 3,
                  workdir: Path | None = None) -> SanitizerRun:
    binary = (workdir or mlf.parent) / f"{name}_sanitized"
    try:
        build(mlf, name, binary, sanitize, randoms)
    except subprocess.CalledProcessError as exc:
        first = next((ln for ln in exc.stderr.splitlines() if "error" in ln), exc.stderr.strip()[:300])
        return SanitizerRun(f"does not build: {first}", 0, exc.stderr)
    return run(binary)
