#!/usr/bin/env bash
# Install everything utvm needs on a fresh Debian machine with Python 3.11 (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v arm-none-eabi-gcc >/dev/null || need+=(gcc-arm-none-eabi)
[ -e /usr/lib/picolibc/arm-none-eabi/picolibc.specs ] || need+=(picolibc-arm-none-eabi)
command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
# clang with libFuzzer: the fuzz targets of tests/fuzz (the RPC frame parser, a model's entry points)
command -v clang >/dev/null || need+=(clang)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
# Zephyr's pytest-twister-harness, from the Zephyr tree of ZEPHYR_BASE when it is set: the
# RPC sample's twister test runs against its device adapter in tests/test_twister_harness.py.
# Its pytest plugin needs ZEPHYR_BASE when loaded: pyproject.toml keeps it out of this suite
# (-p no:). Twister itself refuses to start where the harness is installed: run twister from
# another Python environment; its pytest scenarios (the RPC sample's) run under the `pytest` on
# PATH, which needs utvm's packages but not the installed harness (twister loads it with -p:
# 'Plugin already registered'): uninstall it before running twister.
harness="${ZEPHYR_BASE:-/nonexistent}/scripts/pylib/pytest-twister-harness"
# It is built from a copy: built in place, it leaves src/pytest_twister_harness.egg-info in the
# Zephyr tree, whose pytest11 entry point then loads the plugin a second time in twister's own
# pytest runs ('Plugin already registered under a different name: twister_harness').
if [ -f "$harness/setup.cfg" ]; then
  copy="$(mktemp -d)"
  cp -r "$harness" "$copy/harness"
  python3 -m pip install -q --disable-pip-version-check "$copy/harness"
  rm -rf "$copy"
fi
