"""Widgets: render and dispatch; they never compute over events."""
