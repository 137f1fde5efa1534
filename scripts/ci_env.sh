# Environment of the CI run (sourced by .ci/run). Nothing of Zephyr, CMSIS-NN or TVM 0.18 is
# kept in this project or beside it: the tests that need them read these variables and skip,
# with the reason, when they are unset. A value already set is kept.
#
#   ZEPHYR_BASE   a Zephyr tree (3.4 to 4.x): Zephyr's own scripts, schemas, boards, and the
#                 pytest-twister-harness (installed by scripts/setup.sh)
#   CMSIS_NN_DIR  Arm's CMSIS-NN sources (Include/, Source/): the --offload cmsis-nn tests
#   TVM_018_DIR   a checkout of TVM v0.18.0: tests/test_mlf_v018.py
for var in ZEPHYR_BASE CMSIS_NN_DIR TVM_018_DIR; do
  if [ -n "${!var:-}" ]; then
    echo "ci_env: $var=${!var}"
    export "${var?}"
  fi
done
