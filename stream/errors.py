"""Errors the CLI reports as one line (exit 2) instead of a traceback."""


class UsageError(Exception):
    """A bad command line or config value."""
