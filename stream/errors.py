"""Errors a user can cause, which the CLI reports as one line (``vinestream: error: ...``) and exit 2.

Library code raises these (or plain ``ValueError`` / ``OSError``); the one place
that turns any exception into a message is :func:`vinestream.stream.app.cli.error_message`.
A message names what was wrong (the flag, variable, config key or file) and what
would be valid.
"""


class UsageError(ValueError):
    """A bad command line, config value or environment variable."""


class InputError(UsageError):
    """An input file that cannot be used as given (wrong format, wrong columns, unreadable)."""
