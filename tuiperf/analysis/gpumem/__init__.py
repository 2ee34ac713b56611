"""GPU memory (issue 33): the allocator's events replayed into allocated / reserved over
time per device, the peak and what is live at it by user source line, fragmentation,
memory at each step's start, an out-of-memory's details, and the memory findings."""
