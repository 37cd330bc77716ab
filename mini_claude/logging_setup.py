"""The debug log: one file under the platform's log dir, never the terminal."""

from __future__ import annotations

import logging
import logging.handlers

from mini_claude.config import log_file

LOG_MAX_BYTES = 1_000_000
LOG_FORMAT = "%(asctime)s %(process)d %(threadName)s %(name)s %(levelname)s %(message)s"


def setup_logging() -> None:
    """Send our records (DEBUG up) and everyone else's warnings to the log file, not stderr."""
    root = logging.getLogger()
    if any(getattr(h, "_mini_claude", False) for h in root.handlers):
        return
    path = log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
        )
    except OSError:
        handler = logging.NullHandler()  # an unwritable log dir must not stop the agent
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler._mini_claude = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("mini_claude").setLevel(logging.DEBUG)
