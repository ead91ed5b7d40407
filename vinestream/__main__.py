"""The command line: ``python -m vinestream`` and the ``vinestream`` script (:func:`main`).

The command's modules load inside :func:`main`'s guard: NumPy, pyarrow and the parser take a few tenths of a
second, and a Ctrl-C in them was Python's KeyboardInterrupt traceback (exit -2) where the running command's is
one line and exit status 130 (``cli.main``).
"""
import sys


def main() -> int:
    try:
        from vinestream.stream.app.cli import main as command
    except KeyboardInterrupt:
        print("vinestream: interrupted", file=sys.stderr)
        return 130
    return command()


if __name__ == "__main__":
    sys.exit(main())
