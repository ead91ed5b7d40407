"""Errors a user can cause, which the CLI reports as one line (``vinestream: error: ...``) and exit 2.

Library code raises these (or plain ``ValueError`` / ``OSError``); the one place
that turns any exception into a message is :func:`vinestream.stream.app.cli.error_message`.
A message names what was wrong (the flag, variable, config key or file) and what
would be valid.
"""
from __future__ import annotations

import os


class UsageError(ValueError):
    """A bad command line, config value or environment variable."""


class InputError(UsageError):
    """An input file that cannot be used as given (wrong format, wrong columns, unreadable)."""


def undecodable_name(path) -> str | None:
    """``path`` with its bytes that are no UTF-8 shown escaped (``bad\\xffname.parquet``) when its name is not UTF-8
    text, else None.  A file name is bytes, and Python keeps the bytes that are no UTF-8 as lone surrogates, which
    pyarrow (and a log's metadata, and a dead letter's source) cannot take: such a name failed deep inside with
    "'utf-8' codec can't encode character '\\udcff' ...: surrogates not allowed", naming neither the file nor the
    flag."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return None


#: what to do about a name :func:`undecodable_name` finds
NOT_UTF8 = "the name is not valid UTF-8 (its non-UTF-8 bytes shown as \\xNN), which vinestream cannot open or " \
    "write: use a UTF-8 name (rename it, or link to it under one)"
