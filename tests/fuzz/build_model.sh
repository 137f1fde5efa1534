#!/usr/bin/env bash
# Build the libFuzzer target for a compiled model's descriptor entry points.
#   tests/fuzz/build_model.sh MLF_DIR NAME [OUT]     (OUT default: build/fuzz/fuzz_model_run_NAME)
# MLF_DIR is what `utvm compile MODEL --name NAME -o MLF_DIR` wrote (no --io-in-pool, no --offload).
# Run:  OUT -max_len=65536 -max_total_time=600 CORPUS_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mlf="$1"
name="$2"
out="${3:-$root/build/fuzz/fuzz_model_run_$name}"
mkdir -p "$(dirname "$out")"
CLANG="${CLANG:-clang}"
"$CLANG" -std=c99 -g -O1 -Wall -Wextra -Werror -Wno-unused-command-line-argument \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -DUTVM_FUZZ_MODEL="tvmgen_${name}_model" \
  -I"$mlf/codegen/host/include" -I"$mlf/runtime/include" \
  "$here/fuzz_model_run.c" "$mlf"/codegen/host/src/*.c "$mlf"/runtime/src/*.c "$mlf"/runtime/ports/host/*.c \
  -o "$out"
echo "$out"
