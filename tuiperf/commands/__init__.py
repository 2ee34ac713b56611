"""Headless subcommands. Each module defines COMMAND: a `Command` (see base.py)."""
