"""Signals during a command's start-up (:class:`StartupSignals`), in a module of its own: standard library only, so
that the command line installs it before it imports the application (pyarrow.dataset and pandas: a few tenths of a
second, in which a SIGTERM ended `vinestream run` with -15 and no word)."""
from __future__ import annotations

import logging
import signal
import threading

log = logging.getLogger("vinestream.stream.app.application")


class StartupSignals:
    """SIGTERM from a command's very start until :func:`run_application` takes the signals over: a stop request.

    Python's default would end the process at once with -15 and no word (a worker's start-up imports, builds
    and checks for seconds); with this installed the signal is noted, the start-up step in hand finishes, and
    the command stops there with exit 0 (``requested`` says which signal), or, if the application is reached
    first, it starts stopped (drain, checkpoint, commit: what SIGTERM does later).  SIGINT keeps Python's
    KeyboardInterrupt, which the command line turns into exit 130 without a traceback.
    """

    active: StartupSignals | None = None

    def __init__(self):
        self.requested: str | None = None
        self._previous = None
        self._depth = 0                  # entered again while in place (StartupSignals.current)

    @classmethod
    def current(cls) -> StartupSignals:
        """The one in place (the command line's entry point installs one before its imports for the commands
        that stop on SIGTERM: ``vinestream.__main__``), or a new one: entered again, the one in place stays
        (nothing installed twice, its noted signal kept)."""
        return cls.active if cls.active is not None else cls()

    def __enter__(self) -> StartupSignals:
        if StartupSignals.active is self:
            self._depth += 1
            return self
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._note)
            StartupSignals.active = self
        return self

    def __exit__(self, *exc) -> None:
        if self._depth:
            self._depth -= 1
            return
        if StartupSignals.active is self:
            StartupSignals.active = None
            signal.signal(signal.SIGTERM, self._previous)

    def _note(self, signum, _frame) -> None:
        if self.requested is None:
            log.info("%s during start-up: stopping once the step in hand is done", signal.Signals(signum).name)
        self.requested = signal.Signals(signum).name
