"""Pure-PyTorch reference implementations of every op (the CPU kernels and the test oracles)."""
