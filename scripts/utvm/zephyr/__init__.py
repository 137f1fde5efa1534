"""Zephyr integration: the logic behind ``west tvm`` (build, run, report) and build-time helpers."""
