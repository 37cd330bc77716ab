"""Sub-agents with the rest of the session: their file changes are kept for /rewind, their model
calls count toward the spend cap, and a general sub-agent uses the model /model chose."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

from mini_claude.app.rewind import rewind, rewind_points
from mini_claude.core.events import ToolFinished
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.test_subagents import Route, agent_call, subagent_requests

# $0.05 at the default model's price; any next call's worst case (16,000 tokens out) is $0.16 more.
COSTLY = {"input_tokens": 20_000, "output_tokens": 1_000}


def test_a_subagents_edit_is_undone_by_rewind(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "app.py").write_text("version = 1\n")
    route = Route(api_env)
    edit = {"file_path": "app.py", "old_string": "1", "new_string": "2"}
    route.sub["bump"] = deque([tool_reply("edit_file", edit), text_reply("bumped")])
    api_env.stream_replies.extend([agent_call("bump the version", "general"), text_reply("Done.")])
    harness.answers.append("y")  # the sub-agent's edit

    assert harness.turn("bump it").reason == "done"
    assert (project_dir / "app.py").read_text() == "version = 2\n"

    [point] = rewind_points(harness.session)
    assert point.files_changed_then == 1
    done = rewind(harness.session, point, code=True, conversation=False)

    assert (project_dir / "app.py").read_text() == "version = 1\n"
    assert done.restored is not None and [Path(p).name for p in done.restored.written] == ["app.py"]
    records = [json.loads(line) for line in harness.session.transcript.writer.path.read_text().splitlines()]
    assert [r["type"] for r in records].count("checkpoint") == 1  # in the session's own transcript


def test_a_subagents_calls_count_toward_the_spend_cap(api_env: FakeAnthropic, project_dir: Path) -> None:
    harness = Harness().start(max_cost=0.20)
    route = Route(api_env)
    route.sub["look"] = deque([tool_reply("list_files", {"path": "."}, usage=COSTLY), text_reply("never")])
    api_env.stream_replies.append(agent_call("look around", "explore"))

    ended = harness.turn("look")

    # The sub-agent's first call spent $0.05; its second could pass the cap, so it was not made,
    # and neither was the main agent's next one.
    assert ended.reason == "spend_cap"
    assert len(subagent_requests(api_env)) == 1 and len(api_env.stream_replies) == 0
    [call] = [e for e in harness.of_type(ToolFinished) if e.name == "agent"]
    assert call.is_error
    assert "$0.05 spent" in ended.problem
    assert harness.session.llm.usage_total.input_tokens >= COSTLY["input_tokens"]


def test_a_general_subagent_uses_the_model_chosen_with_slash_model(cli: Cli, api_env: FakeAnthropic) -> None:
    route = Route(api_env)
    route.sub["check"] = deque([text_reply("checked")])
    api_env.stream_replies.extend([agent_call("check the build", "general"), text_reply("All good.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/model my-local-model")
        term.expect("Model set to my-local-model")
        term.submit("check it")
        term.expect("All good.")
        term.expect_prompt()

    [sub] = subagent_requests(api_env)
    assert sub.model == "my-local-model"
