"""GPU memory sources (issue 33): PyTorch allocator snapshots (a safe, streaming pickle
reader), the `[memory]` events of torch.profiler and nsys `--cuda-memory-usage` rows, each
turned into one table of allocator events (`tables.EVENTS`)."""
