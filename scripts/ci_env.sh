# Environment of the CI run (sourced by .ci/run): material beside the repository that the
# tests use when it is there.
#
# CMSIS_NN_DIR: Arm's CMSIS-NN sources (a pinned commit in ../shared/third_party/CMSIS-NN), so
# that the --offload cmsis-nn tests run instead of skipping. A value already set is kept.
if [ -z "${CMSIS_NN_DIR:-}" ] && [ -f ../shared/third_party/CMSIS-NN/Include/arm_nnfunctions.h ]; then
  CMSIS_NN_DIR="$(cd ../shared/third_party/CMSIS-NN && pwd)"
  export CMSIS_NN_DIR
fi
