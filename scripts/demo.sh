#!/usr/bin/env bash
# The main job: compile a bundled model and run it on an emulated Cortex-M4 board (QEMU),
# comparing its outputs with TFLite Micro.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
model=samples/utvm_inference/model/kws_ref_model.tflite
python3 -m utvm run "$model" --board host
python3 -m utvm run "$model" --board mps2/an386
