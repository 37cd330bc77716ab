"""Commands on the read-only list that write when spelled another way: a short option folded into
a cluster (`sort -mo`, `rg -uz`, `tree -fo`), a long option shortened as getopt allows (`sort
--out=`, `sort --comp=`, `file --comp`), and `uniq IN OUT`, whose second name is a file it
writes. Each must ask (and, answered no, write nothing), not run as a read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.tool_harness import Tools


@case("permissions", "a read-only command's writing option in another spelling asks; nothing written")
@pytest.mark.parametrize(
    "command",
    [
        "sort -mo out.txt in.txt",
        "sort -uo out.txt in.txt",
        "sort --out=out.txt in.txt",
        "sort --outp out.txt in.txt",
        "sort --compress=touch -S 1 in.txt",
        "uniq in.txt out.txt",
        "uniq -c -- in.txt out.txt",
        "uniq -f 1 in.txt out.txt",
    ],
)
def test_a_read_only_command_that_writes_asks(project_dir: Path, command: str) -> None:
    (project_dir / "in.txt").write_text("b\na\n")
    tools = Tools(project_dir, "ask", "n")
    result = tools.run("run_shell", command=command)
    assert result.denied and len(tools.user.questions) == 1, result.content
    assert not (project_dir / "out.txt").exists()


@case("permissions", "a read-only command's running or writing flag inside a cluster is not read-only")
@pytest.mark.parametrize(
    "args",
    [
        ["rg", "-uz", "foo"],
        ["rg", "-iz", "foo"],
        ["tree", "-fo", "x"],
        ["file", "-bC"],
        ["file", "--comp"],
        ["base64", "--out=x"],
    ],
)
def test_a_flag_in_a_cluster_or_abbreviated_is_seen(args: list[str]) -> None:
    from mini_claude.safety.shell.read_only import is_read_only

    assert not is_read_only(args)


@case("permissions", "the reading spellings of those commands still run unasked")
@pytest.mark.parametrize(
    "args",
    [["uniq", "in.txt"], ["uniq", "-f", "1", "in.txt"], ["uniq", "-c", "-"], ["sort", "-u", "-k1,1", "x"],
     ["rg", "-uu", "foo"], ["tree", "-fa"], ["file", "-b", "x"]],
)  # fmt: skip
def test_the_reading_spellings_still_run(args: list[str]) -> None:
    from mini_claude.safety.shell.read_only import is_read_only

    assert is_read_only(args)
