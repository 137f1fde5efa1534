#!/usr/bin/env bash
# Build the libFuzzer target for the RPC frame parser.
#   tests/fuzz/build.sh [OUT]      (default OUT: build/fuzz/fuzz_rpc_frame)
# Run:  OUT -dict=tests/fuzz/rpc.dict -max_len=4096 -max_total_time=600 CORPUS_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/build/fuzz/fuzz_rpc_frame}"
mkdir -p "$(dirname "$out")"
CLANG="${CLANG:-clang}"
"$CLANG" -std=c99 -g -O1 -Wall -Wextra -Werror \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DFIXTURE_WORK=1 \
  -I"$root/lib/crt/include" \
  "$here/fuzz_rpc_frame.c" \
  "$root/lib/crt/src/rpc_server.c" \
  "$root/lib/crt/ports/host/platform_host.c" \
  "$root/tests/fixtures/rpc/fixture_models.c" \
  -o "$out"
echo "$out"
