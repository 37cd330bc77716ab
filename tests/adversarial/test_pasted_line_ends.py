"""More ways a pasted `!` cell holds several lines: a terminal that sends its line ends as carriage
returns (old Mac files, some terminals' paste), Windows line ends, a heredoc. Each is asked
before it runs, shows the payload, and runs nothing on 'n' (tests/adversarial/
test_pasted_commands.py has the question's layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.adversarial.test_pasted_commands import paste_and_answer
from tests.cli_harness import Cli


@case(
    "terminal",
    "a pasted cell with CR or CRLF line ends, or a heredoc: asks, shows the payload; 'n' runs nothing",
)
@pytest.mark.parametrize(
    "text",
    [
        "!echo hello\rtouch pwned",
        "!echo hello\r\ntouch pwned\r\n",
        "!cat <<'EOF' > notes.txt\nhello\nEOF\ntouch pwned",
    ],
    ids=["carriage_returns", "windows_line_ends", "heredoc"],
)
def test_other_line_ends_still_ask(cli: Cli, project_dir: Path, text: str) -> None:
    shown = paste_and_answer(cli, text, "n", rows=24)

    assert "touch pwned" in shown
    assert not (project_dir / "pwned").exists() and not (project_dir / "notes.txt").exists()
