"""Sub-agents in the real REPL (a pseudo-terminal): /agents lists the types and the agent files
that cannot be used; a sub-agent's permission question says whose it is, and is answered with
one key; its live line while it runs."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, multi_tool_reply, text_reply, tool_reply
from tests.test_subagents import Route, agent_call, subagent_requests


def test_agents_lists_types_and_says_why_a_file_is_not_used(cli: Cli, project_dir: Path) -> None:
    agents = project_dir / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews diffs\ntools:\n  - Read\n  - Grep\n---\nReview.\n",
        encoding="utf-8",
    )
    (agents / "broken.md").write_text("---\nname: Broken Name\ndescription: x\n---\nbody\n", encoding="utf-8")
    (agents / "nodesc.md").write_text("---\nname: nodesc\n---\nbody\n", encoding="utf-8")
    with cli.terminal(columns=140) as term:
        term.expect_prompt()
        term.submit("/agents")
        listing = term.expect("Not used:") + term.expect_prompt()
    assert "explore" in listing and "general" in listing
    assert (
        "reviewer  Reviews diffs" in listing
        and ".claude/agents/reviewer.md (read_file, grep_search)" in listing
    )
    assert ".claude/agents/broken.md: its name 'Broken Name' must be" in listing
    assert ".claude/agents/nodesc.md: no description in its frontmatter" in listing


def test_a_subagents_question_is_labelled_and_answered_with_one_key(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    route = Route(api_env)
    route.sub["make"] = deque(
        [tool_reply("write_file", {"file_path": "made.txt", "content": "hi\n"}), text_reply("made it")]
    )
    api_env.stream_replies.extend([agent_call("make made.txt"), text_reply("All done.")])
    with cli.terminal(columns=120) as term:
        term.expect_prompt()
        term.submit("make a file")
        term.expect(r"general \(sub-agent\) asks:")
        term.expect(r"\[y\]es")
        term.type("y")
        term.expect("All done.")
    assert (project_dir / "made.txt").read_text(encoding="utf-8") == "hi\n"


def test_a_running_subagent_has_a_live_line(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "app.py").write_text("x = 1\n", encoding="utf-8")
    route = Route(api_env)
    held = text_reply("found it", held=True)
    route.sub["look"] = deque([tool_reply("read_file", {"file_path": "app.py"}), held])
    api_env.stream_replies.extend([agent_call("look around", "explore", "scan the app"), text_reply("Done.")])
    with cli.terminal(columns=120) as term:
        term.expect_prompt()
        term.submit("look")
        term.expect(r"explore: scan the app · 1 tool · [\d,]+ tokens")
        held.release.set()
        term.expect(r"scan the app\).*explore: 1 tool, ")
        term.expect("Done.")


def test_esc_stops_agents_running_side_by_side(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    route = Route(api_env)
    held = [text_reply("never one", held=True), text_reply("never two", held=True)]
    route.sub["one"], route.sub["two"] = deque([held[0]]), deque([held[1]])
    calls = [
        ("agent", {"description": f"task {n}", "prompt": n, "subagent_type": "explore"})
        for n in ("one", "two")
    ]
    api_env.stream_replies.extend([multi_tool_reply(calls), text_reply("Back again.")])
    with cli.terminal(columns=120) as term:
        term.expect_prompt()
        term.submit("do both")
        assert all(reply.holding.wait(20) for reply in held)
        term.type("\x1b")  # Esc
        term.expect("Interrupted.")
        term.expect_prompt()
        for reply in held:
            reply.release.set()
        term.submit("again")
        term.expect("Back again.")
    assert len(subagent_requests(api_env)) == 2  # nothing ran on after Esc
