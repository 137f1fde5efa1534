"""tune stage: measure the kernel variants and knobs of a model's MAC-carrying operators on a
board (QEMU's exact instruction counts, or a device through the RPC server) and keep the best
configuration per workload in a log that compile and run apply."""
