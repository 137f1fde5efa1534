"""Host-driven mode: talk to a utvm RPC server (lib/crt/src/rpc_server.c) on a board,
in QEMU or in a host process. docs/RPC.md specifies the protocol."""
