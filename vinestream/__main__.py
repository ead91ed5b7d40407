"""The command line: ``python -m vinestream`` and the ``vinestream`` script (:func:`main`).

The command's modules load inside :func:`main`'s guard: NumPy, pyarrow and the parser take a few tenths of a
second, and a Ctrl-C in them was Python's KeyboardInterrupt traceback (exit -2) where the running command's is
one line and exit status 130 (``cli.main``).  For the commands that stop on SIGTERM (``run``, ``replay``: exit 0
and one line) the signal is a stop request from here on (:class:`~vinestream.stream.app.signals.StartupSignals`,
standard library only): in those tenths of a second it ended them with 143 and no word.
"""
import contextlib
import sys

#: the commands a SIGTERM stops as a request (what their loops do later), from the first moment
STOPPED_BY_SIGTERM = ("run", "replay")


def _command(argv) -> str | None:
    """The command word: the first argument that is no option (the top level has none that takes a value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main() -> int:
    guard = contextlib.nullcontext()
    if _command(sys.argv[1:]) in STOPPED_BY_SIGTERM:
        from vinestream.stream.app.signals import StartupSignals
        guard = StartupSignals()
    with guard:
        try:
            from vinestream.stream.app.cli import main as command
        except KeyboardInterrupt:
            print("vinestream: interrupted", file=sys.stderr)
            return 130
        return command()


if __name__ == "__main__":
    sys.exit(main())
