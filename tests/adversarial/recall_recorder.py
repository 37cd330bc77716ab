"""A process that counts recalls in a memory folder's recall history, for the concurrency test.

    python -m tests.adversarial.recall_recorder MEMORY_DIR FILE_NAME TIMES

Waits for MEMORY_DIR/go to appear, so two of them start recording at the same moment."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mini_claude.memory.recall.history import RecallHistory

START_WAIT_SECONDS = 30


def main() -> None:
    folder, file_name, times = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    deadline = time.monotonic() + START_WAIT_SECONDS
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    history = RecallHistory(folder)
    for _ in range(times):
        history.record([file_name])


if __name__ == "__main__":
    main()
