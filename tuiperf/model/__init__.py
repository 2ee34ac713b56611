"""Normalized data and the pure logic over it (no UI imports)."""
