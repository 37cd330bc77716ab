"""The system prompt built ahead of the first message: used only while its sources are unchanged."""

from __future__ import annotations

import threading
from pathlib import Path

from mini_claude.prepared_prompt import PreparedPrompt
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, RecordedRequest, text_reply


class CountingBuild:
    def __init__(self, source: Path) -> None:
        self.source = source
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return self.source.read_text() if self.source.exists() else "(none)"


def test_a_prompt_built_ahead_is_used_once(tmp_path: Path) -> None:
    source = tmp_path / "MEMORY.md"
    source.write_text("index v1")
    build = CountingBuild(source)
    prompt = PreparedPrompt(build, (source,))

    prompt.prepare()

    assert prompt() == "index v1" and build.calls == 1
    assert prompt() == "index v1" and build.calls == 2  # a later conversation builds its own


def test_a_changed_or_new_source_means_building_again(tmp_path: Path) -> None:
    index, instructions = tmp_path / "MEMORY.md", tmp_path / "CLAUDE.md"
    index.write_text("index v1")
    build = CountingBuild(index)
    prompt = PreparedPrompt(build, (index, instructions))

    prompt.prepare()
    index.write_text("index v2, as a /memory rm would leave it")
    assert prompt() == "index v2, as a /memory rm would leave it" and build.calls == 2

    prompt.prepare()
    instructions.write_text("new project instructions")
    prompt()
    assert build.calls == 4


def system_text(request: RecordedRequest) -> str:
    return "".join(block["text"] for block in request.system or [])  # type: ignore[union-attr]


def test_a_memory_removed_before_the_first_message_is_not_in_its_system_prompt(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start()
    store = harness.session.store
    store.save(name="keep me", description="still true", memory_type="project", body="x\n")
    store.save(name="drop me", description="no longer true", memory_type="project", body="x\n")
    harness.session.warm_up()
    for thread in threading.enumerate():
        if thread.name == "memory-startup":
            thread.join(5)  # the re-index and the prompt built ahead are done
    store.delete(next(m for m in store.scan() if m.name == "drop me"))
    api_env.plain_replies.append(text_reply('{"selected_memories": []}'))
    api_env.stream_replies.append(text_reply("Hi."))

    harness.turn("hello there, what do you remember?")

    [request] = [r for r in api_env.requests if r.stream]
    system = system_text(request)
    assert "keep me" in system and "drop me" not in system
