"""Modal screens of the viewer."""
