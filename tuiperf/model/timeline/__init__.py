"""Logic over a Trace's events (no UI imports): the timeline lanes and their per-lane interval
index (lanes, lane_cache, lane_intervals) and the viewport maths (viewport); filter, sort and
per-name summaries of the events table (query, graph_launch); what one event is and who
launched it (attribution, callsites) and the next event of the same name (same_name). The
viewer's state over these (the timeline's, the events table's) is in tuiperf.tui.viewstate."""
