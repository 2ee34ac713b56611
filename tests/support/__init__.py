"""Helpers the tests share (not tests): fixtures decompressed, report parsers."""
