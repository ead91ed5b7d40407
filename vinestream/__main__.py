"""``python -m vinestream``: the command line (the same as the ``vinestream`` script)."""
import sys

from vinestream.stream.app.cli import main

sys.exit(main())
