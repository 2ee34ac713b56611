"""Loaders: each turns a path into canonical Arrow tables (no UI imports)."""
