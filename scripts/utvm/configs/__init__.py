"""Kernel configurations recorded for later compiles: the workload key of a kernel and the
tuning log, which ``utvm tune`` writes and compile applies (so compile needs no tuner)."""
