"""torch.profiler (Kineto) input: stream a Chrome trace JSON event by event (stream), collect
the events into typed columns (collect), Python stacks into frames and callsites (stacks),
and build the canonical tables (tables)."""
