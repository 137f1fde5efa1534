"""Kernel configurations: the map a compile lowers with (``kernels``: operator -> configuration,
with where each came from), and those recorded for later compiles: the workload key of a kernel
and the tuning log, which ``utvm tune`` writes and compile reads (so compile needs no tuner)."""
