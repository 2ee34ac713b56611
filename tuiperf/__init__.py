"""tuiperf: GPU profiles (Nsight Systems, Nsight Compute, torch.profiler) in the terminal."""

__version__ = "0.1.0"
