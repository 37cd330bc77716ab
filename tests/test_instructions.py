"""The instruction files a Claude Code user already has, as the model is shown them: the user's,
each folder's from the project root down to the working directory, `CLAUDE.local.md`, `AGENTS.md`
where there is no CLAUDE.md, `@path` imports, rules always or by `paths:`, sub-folder CLAUDE.md
files once a tool uses a file there; each under its own path and scope, most general first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mini_claude.app.instructions.hierarchy import INSTRUCTIONS_TOTAL_MAX_BYTES
from mini_claude.core.events import Notice
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, reminders_in, system_text

OPENING = re.compile(r'<project-instructions path="([^"]+)" scope="(\w+)"(?: imported-by="([^"]+)")?>')


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def files_in(text: str) -> list[tuple[str, str]]:
    """(path, scope) of each instruction file in `text`, in order."""
    return [(match.group(1), match.group(2)) for match in OPENING.finditer(text)]


def first_system(api_env: FakeAnthropic, **settings: object) -> tuple[Harness, str]:
    harness = Harness().start(**settings)
    api_env.stream_replies.append(text_reply("ok"))
    assert harness.turn("hello").reason == "done", harness.events
    return harness, system_text(main_calls(api_env)[-1])


def warnings(harness: Harness) -> list[str]:
    return [n.text for n in harness.events if isinstance(n, Notice) and n.level == "warning"]


@pytest.fixture
def repo(project_dir: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    return project_dir


@pytest.fixture
def home(isolated_env: Path) -> Path:
    return isolated_env


def test_the_whole_hierarchy_most_general_first(
    api_env: FakeAnthropic, repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(home / ".claude/CLAUDE.md", "claude user notes\n")
    write(home / ".mini-claude/CLAUDE.md", "mini user notes\n")
    write(repo / "CLAUDE.md", "root notes\n")
    write(repo / ".claude/CLAUDE.md", "root dot-claude notes\n")
    write(repo / "CLAUDE.local.md", "my own root notes\n")
    write(repo / "app/AGENTS.md", "app agents notes\n")
    write(repo / "app/api/CLAUDE.md", "api notes\n")
    write(repo / "app/api/AGENTS.md", "api agents notes: not used, CLAUDE.md is there\n")
    monkeypatch.chdir(repo / "app/api")

    _, system = first_system(api_env)

    assert files_in(system) == [
        (str(home / ".claude/CLAUDE.md"), "user"),
        (str(home / ".mini-claude/CLAUDE.md"), "user"),
        (str(repo / "CLAUDE.md"), "project"),
        (str(repo / ".claude/CLAUDE.md"), "project"),
        (str(repo / "CLAUDE.local.md"), "local"),
        (str(repo / "app/AGENTS.md"), "project"),
        (str(repo / "app/api/CLAUDE.md"), "project"),
    ]
    assert "api agents notes" not in system
    assert system.index("mini user notes") < system.index("api notes") < system.index("# Memory")


def test_outside_a_work_tree_only_the_working_directory_counts(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project_dir / "CLAUDE.md", "parent notes\n")
    write(project_dir / "sub/CLAUDE.md", "sub notes\n")
    monkeypatch.chdir(project_dir / "sub")
    _, system = first_system(api_env)
    assert "sub notes" in system and "parent notes" not in system


def test_imports_follow_their_file_relative_home_and_absolute(
    api_env: FakeAnthropic, repo: Path, home: Path
) -> None:
    write(repo / "docs/style.md", "use tabs\n")
    write(repo / "docs/more/deep.md", "deep import\n")
    write(repo / "docs/links.md", "see @more/deep.md for more\n")
    write(home / "notes/me.md", "my personal notes\n")
    write(repo / "abs.md", "absolute import\n")
    write(
        repo / "CLAUDE.md",
        f"Style: @docs/style.md. Also @docs/links.md and @~/notes/me.md and @{repo / 'abs.md'}\n"
        "Ask @alice, not `@docs/nothing.md`; a decorator @dataclass stays.\n"
        "```\n@docs/fenced.md\n```\n",
    )
    write(repo / "docs/fenced.md", "FENCED must not load\n")
    write(repo / "docs/nothing.md", "SPAN must not load\n")

    _, system = first_system(api_env)

    assert [path for path, _ in files_in(system)] == [
        str(repo / "CLAUDE.md"),
        str(repo / "docs/style.md"),
        str(repo / "docs/links.md"),
        str(repo / "docs/more/deep.md"),
        str(home / "notes/me.md"),
        str(repo / "abs.md"),
    ]
    assert f'imported-by="{repo / "docs/links.md"}"' in system
    assert "FENCED" not in system and "SPAN" not in system


def test_an_import_chain_stops_after_five_levels_and_says_so(api_env: FakeAnthropic, repo: Path) -> None:
    for level in range(1, 9):
        write(repo / f"level{level}.md", f"level {level} text @level{level + 1}.md\n")
    write(repo / "CLAUDE.md", "@level1.md\n")

    harness, system = first_system(api_env)

    assert "level 5 text" in system and "level 6 text" not in system
    assert any(
        w.startswith("level6.md not read: ") and "more than 5 levels deep" in w for w in warnings(harness)
    )


def test_an_import_cycle_reads_each_file_once(api_env: FakeAnthropic, repo: Path) -> None:
    write(repo / "a.md", "alpha @b.md @a.md\n")
    write(repo / "b.md", "beta @a.md @CLAUDE.md\n")
    write(repo / "CLAUDE.md", "root @a.md\n")
    harness, system = first_system(api_env)
    assert system.count("alpha") == 1 and system.count("beta") == 1 and system.count("root @a.md") == 1
    assert warnings(harness) == []


def test_rules_always_loaded_and_by_path(api_env: FakeAnthropic, repo: Path, home: Path) -> None:
    write(repo / ".claude/rules/style.md", "always: two spaces\n")
    write(repo / ".claude/rules/web/react.md", '---\npaths:\n  - "src/**/*.tsx"\n---\nreact: hooks only\n')
    write(repo / ".mini-claude/rules/sql.md", '---\npaths: "**/*.{sql,psql}"\n---\nsql: lower case\n')
    write(home / ".claude/rules/mine.md", "---\npaths: [docs/*.md]\n---\ndocs: british spelling\n")
    write(repo / "src/ui/App.tsx", "export {}\n")
    write(repo / "db/schema.sql", "create table t();\n")
    write(repo / "src/other.ts", "x\n")

    harness = Harness().start()
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "src/other.ts"}),
            tool_reply("read_file", {"file_path": "src/ui/App.tsx"}),
            tool_reply("read_file", {"file_path": "db/schema.sql"}),
            tool_reply("read_file", {"file_path": "src/ui/App.tsx"}),
            text_reply("done"),
        ]
    )
    assert harness.turn("look around").reason == "done"
    calls = main_calls(api_env)

    system = system_text(calls[0])
    assert "always: two spaces" in system
    assert "react:" not in system and "sql:" not in system and "docs:" not in system
    assert [r for r in reminders_in(calls[1]) if "react" in r] == []  # src/other.ts matched nothing
    assert any("react: hooks only" in r for r in reminders_in(calls[2]))
    assert any("sql: lower case" in r for r in reminders_in(calls[3]))
    assert sum("react: hooks only" in r for r in reminders_in(calls[4])) == 1  # given once
    assert not any("british" in r for r in reminders_in(calls[4]))


def test_a_subfolders_claude_md_arrives_once_a_tool_uses_a_file_there(
    api_env: FakeAnthropic, repo: Path
) -> None:
    write(repo / "CLAUDE.md", "root notes\n")
    write(repo / "pkg/CLAUDE.md", "pkg notes\n")
    write(repo / "pkg/deep/CLAUDE.local.md", "deep personal notes\n")
    write(repo / "pkg/deep/x.py", "x = 1\n")
    write(repo / "pkg/y.py", "y = 1\n")

    harness = Harness().start()
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "pkg/deep/x.py"}),
            tool_reply("write_file", {"file_path": "pkg/y.py", "content": "y = 2\n"}),
            text_reply("done"),
        ]
    )
    harness.answers.append("y")
    assert harness.turn("read it").reason == "done", harness.events
    calls = main_calls(api_env)

    assert "pkg notes" not in system_text(calls[0])
    reminders = reminders_in(calls[1])
    assert len(reminders) == 2  # pkg/ first, then pkg/deep/
    assert "pkg notes" in reminders[0] and 'scope="folder"' in reminders[0]
    assert "deep personal notes" in reminders[1]
    assert reminders_in(calls[2]) == reminders  # not given again for pkg/y.py
    assert system_text(calls[2]) == system_text(calls[0])  # the cached prompt is untouched

    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "pkg/y.py"}), text_reply("done")])
    harness.session.new_conversation()
    assert harness.turn("again").reason == "done"
    assert any("pkg notes" in r for r in reminders_in(main_calls(api_env)[-1]))  # a new conversation


def test_a_file_changed_mid_conversation_is_used_from_the_next_one(
    api_env: FakeAnthropic, repo: Path
) -> None:
    write(repo / "CLAUDE.md", "first version\n")
    harness, system = first_system(api_env)
    assert "first version" in system
    write(repo / "CLAUDE.md", "second version\n")
    api_env.stream_replies.append(text_reply("ok"))
    harness.turn("more")
    assert "first version" in system_text(main_calls(api_env)[-1])
    harness.session.new_conversation()
    api_env.stream_replies.append(text_reply("ok"))
    harness.turn("fresh")
    assert "second version" in system_text(main_calls(api_env)[-1])


def test_past_the_total_the_most_specific_files_win(
    api_env: FakeAnthropic, repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = "g" * (INSTRUCTIONS_TOTAL_MAX_BYTES // 3 - 100)
    write(home / ".claude/CLAUDE.md", "USER-START " + chunk)
    write(repo / "CLAUDE.md", "ROOT-START " + chunk)
    write(repo / "a/CLAUDE.md", "A-START " + chunk)
    write(repo / "a/b/CLAUDE.md", "B-START " + chunk)
    monkeypatch.chdir(repo / "a/b")

    harness, system = first_system(api_env)

    assert "B-START" in system and "A-START" in system and "ROOT-START" in system
    assert "USER-START" not in system
    [line] = [w for w in warnings(harness) if w.startswith("Instructions over 100 KB")]
    assert "~/.claude/CLAUDE.md" in line and "(the most general)" in line


def test_memory_lists_instruction_files_with_scope_size_and_skips(
    api_env: FakeAnthropic, repo: Path, home: Path
) -> None:
    from rich.console import Console

    from mini_claude.ui.commands.memory import command  # noqa: F401 - registers /memory
    from mini_claude.ui.commands.registry import CommandContext, dispatch
    from mini_claude.ui.render.console import make_renderer

    write(home / ".claude/CLAUDE.md", "user notes\n")
    write(repo / "CLAUDE.md", "root notes @docs/a.md @../outside.md\n")
    write(repo / "docs/a.md", "imported\n")
    write(repo.parent / "outside.md", "outside\n")
    write(repo / ".claude/rules/api.md", "---\npaths: src/api/**\n---\napi rules\n")
    harness = Harness().start()
    console = Console(record=True, width=1000)
    dispatch(
        "/memory",
        CommandContext(console, harness.session, make_renderer(console, plain=True), lambda _: True),
    )

    shown = console.export_text()
    assert "Instruction files (4):" in shown
    assert "~/.claude/CLAUDE.md  (user, 11 bytes)" in shown
    assert f"{repo / 'CLAUDE.md'}  (project, " in shown
    assert f"{repo / 'docs/a.md'}  (project, 9 bytes, imported by {repo / 'CLAUDE.md'})" in shown
    assert "(project rule, 36 bytes; when a tool uses src/api/**)" in shown
    assert "skipped: outside.md not read: " in shown and "outside the project and your home folder" in shown
    assert shown.index("Instruction files") < shown.index("No memories")


def test_a_path_rules_imports_come_with_it_and_a_stowed_user_rules_folder_counts(
    api_env: FakeAnthropic, repo: Path, home: Path
) -> None:
    write(home / "dotfiles/claude/rules/style.md", "STOWED user rule\n")
    (home / ".claude").mkdir()
    (home / ".claude/rules").symlink_to(home / "dotfiles/claude/rules", target_is_directory=True)
    write(repo / "docs/sql-style.md", "SQL STYLE GUIDE\n")
    write(repo / ".claude/rules/sql.md", "---\npaths: db/**\n---\nsql rule, see @../../docs/sql-style.md\n")
    write(repo / "db/q.sql", "select 1;\n")

    harness = Harness().start()
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "db/q.sql"}), text_reply("ok")])
    assert harness.turn("look").reason == "done"

    assert "STOWED user rule" in system_text(main_calls(api_env)[0])
    [reminder] = reminders_in(main_calls(api_env)[1])
    assert "sql rule" in reminder and "SQL STYLE GUIDE" in reminder


def test_markdown_in_claude_folders_may_be_imported_but_not_other_projects_state(
    api_env: FakeAnthropic, repo: Path, home: Path
) -> None:
    write(home / ".claude/my-project-instructions.md", "PERSONAL for this project\n")
    write(home / ".mini-claude/projects/0123456789abcdef/memory/other.md", "OTHER PROJECT memory\n")
    write(home / ".claude/settings.json", '{"env": {}}\n')
    write(
        repo / "CLAUDE.md",
        "@~/.claude/my-project-instructions.md @~/.mini-claude/projects/0123456789abcdef/memory/other.md "
        "@~/.claude/settings.json\n",
    )
    harness, system = first_system(api_env)
    assert "PERSONAL for this project" in system
    assert "OTHER PROJECT" not in system and '"env"' not in system
    assert len(warnings(harness)) == 2


def test_a_reminder_left_waiting_by_a_turn_cap_stays_with_its_conversation(
    api_env: FakeAnthropic, repo: Path
) -> None:
    write(repo / "pkg/CLAUDE.md", "pkg notes\n")
    write(repo / "pkg/x.py", "x = 1\n")
    write(repo / "other/CLAUDE.md", "other notes\n")
    write(repo / "other/y.py", "y = 1\n")
    harness = Harness().start(max_turns=1)
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "pkg/x.py"}))
    assert harness.turn("read it").reason == "turn_cap"

    api_env.stream_replies.append(text_reply("ok"))
    harness.turn("go on")  # the same conversation: the reminder comes now
    assert any("pkg notes" in r for r in reminders_in(main_calls(api_env)[-1]))

    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "other/y.py"}))
    assert harness.turn("again").reason == "turn_cap"
    harness.session.new_conversation()
    api_env.stream_replies.append(text_reply("ok"))
    harness.turn("fresh start")  # a new conversation: nothing from the last one's tools
    assert reminders_in(main_calls(api_env)[-1]) == []


def test_a_conversation_with_reminders_resumes_whole(api_env: FakeAnthropic, repo: Path) -> None:
    from tests.cli_harness import Cli

    write(repo / "pkg/CLAUDE.md", "pkg notes\n")
    write(repo / "pkg/x.py", "x = 1\n")
    cli = Cli(repo)
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "pkg/x.py"}), text_reply("read")])
    assert cli.run("-p", "read pkg/x.py").returncode == 0

    api_env.stream_replies.append(text_reply("still here"))
    resumed = cli.run("-c", "-p", "go on")

    assert resumed.returncode == 0 and "skipped" not in resumed.stderr, resumed.stderr
    assert any("pkg notes" in r for r in reminders_in(main_calls(api_env)[-1]))


def test_a_quoted_path_keeps_its_hash_and_a_plain_one_loses_its_comment(
    api_env: FakeAnthropic, repo: Path
) -> None:
    # YAML: ` #` starts a comment only outside quotes; "issue #12" is a folder's name.
    write(repo / ".claude/rules/a.md", '---\npaths: "a/issue #1/*.md"\n---\nrule a\n')
    write(repo / ".claude/rules/b.md", '---\npaths:\n  - "b/issue #2/*.md"\n---\nrule b\n')
    write(repo / ".claude/rules/c.md", '---\npaths: ["c/issue #3/*.md"]\n---\nrule c\n')
    write(repo / ".claude/rules/d.md", "---\npaths: d/*.md # the docs\n---\nrule d\n")
    for name in ("a/issue #1", "b/issue #2", "c/issue #3", "d"):
        write(repo / name / "x.md", "x\n")
    harness = Harness().start()
    reads = [
        tool_reply("read_file", {"file_path": f"{name}/x.md"})
        for name in ("a/issue #1", "b/issue #2", "c/issue #3", "d")
    ]
    api_env.stream_replies.extend([*reads, text_reply("done")])
    assert harness.turn("read them").reason == "done"
    calls = main_calls(api_env)

    for call, rule in zip(calls[1:], ("rule a", "rule b", "rule c", "rule d"), strict=True):
        assert any(rule in r for r in reminders_in(call)), rule
