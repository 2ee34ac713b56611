"""Findings engine: rules over a Trace (and ncu metrics) that say what to change."""
