"""The Textual viewer: the only package that imports Textual."""
