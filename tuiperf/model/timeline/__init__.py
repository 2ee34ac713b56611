"""Logic over a Trace's events (no UI imports): the timeline lanes and their per-lane interval
index (lanes, lane_cache, lane_intervals), the viewport maths (viewport) and the timeline's
headless state (state); filter, sort and per-name summaries of the events table (query,
graph_launch) and its headless state (events_state); what one event is and who launched it
(attribution, callsites) and the next event of the same name (same_name)."""
