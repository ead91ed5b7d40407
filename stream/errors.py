"""Errors a user can cause, which the CLI reports as one line (``vinestream: error: ...``) and exit 2.

Library code raises these (or plain ``ValueError`` / ``OSError``); the one place
that turns any exception into a message is :func:`vinestream.stream.app.cli.error_message`.
A message names what was wrong (the flag, variable, config key or file) and what
would be valid.
"""


class UsageError(ValueError):
    """A bad command line, config value or environment variable."""


def error_text(exc: BaseException) -> str:
    """``exc`` as one line naming its class once: kafka-python's errors put their class name in their own text
    (``KafkaConnectionError: 111 ECONNREFUSED``), others do not (``[Errno 111] Connection refused``); lines that
    wrote ``type(exc).__name__: exc`` said kafka-python's names twice."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())
    if not text:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


class InputError(UsageError):
    """An input file that cannot be used as given (wrong format, wrong columns, unreadable)."""
