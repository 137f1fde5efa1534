#!/usr/bin/env bash
# The test command: lint, then the whole pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check scripts tests west-commands
python3 -m pytest -q tests "$@"
