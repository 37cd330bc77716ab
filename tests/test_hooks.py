"""Hooks as a Claude Code user writes them: `hooks` in .claude/settings.json, real scripts, a real
session against the fake server. What each event's hooks receive on stdin, what their exit codes
and JSON output do, their timeouts, that they run at once, and that none outlives the session."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.app.resume import finish_resume, latest_session, open_session
from mini_claude.core.events import TurnEnded
from tests.extensions_kit import alive, command_hook, configured_harness, hook_script, hooks_settings, notices
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, result_text, tool_results_in, user_texts, wait_for_file, wait_until


def decision(permission: str, reason: str) -> str:
    """A PreToolUse hook's JSON answer."""
    specific = {"hookEventName": "PreToolUse", "permissionDecision": permission}
    return json.dumps({"hookSpecificOutput": {**specific, "permissionDecisionReason": reason}})


def _write(name: str, content: str = "hi") -> object:
    return tool_reply("write_file", {"file_path": name, "content": content})


def test_a_pre_tool_use_hook_exiting_2_blocks_the_call_and_gets_the_event_as_claude_code_sends_it(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    hook_script(
        project_dir / "hooks",
        "guard.sh",
        'cat > "$CLAUDE_PROJECT_DIR/seen.json"\necho "no touching here" >&2\nexit 2',
    )
    hooks_settings(
        project_dir, command_hook("PreToolUse", '"$CLAUDE_PROJECT_DIR"/hooks/guard.sh', matcher="Bash")
    )
    harness = configured_harness()  # no answers: a permission question would fail the test
    api_env.stream_replies += [tool_reply("run_shell", {"command": "touch made"}), text_reply("understood")]

    assert harness.turn("make it").reason == "done"

    assert not (project_dir / "made").exists()
    result = tool_results_in(main_calls(api_env)[-1])[0]
    assert result["is_error"] and "no touching here" in result_text(result)
    assert "<hook-output" in result_text(result)
    seen = json.loads((project_dir / "seen.json").read_text())
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"] == {"command": "touch made"} and seen["tool_use_id"].startswith("toolu_")
    assert seen["cwd"] == str(project_dir.resolve()) and seen["permission_mode"] == "default"
    assert seen["session_id"] == harness.session.transcript.session_id
    assert seen["transcript_path"] == str(harness.session.transcript.writer.path)


def test_the_matcher_takes_claude_code_names_ours_lists_and_regexes(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    log = project_dir / "matched.log"
    hooks = {
        "PreToolUse": [
            {"matcher": matcher, "hooks": [{"type": "command", "command": f"echo {label} >> {log}"}]}
            for matcher, label in (
                ("Edit|Write", "pipe"),
                ("write_file", "ours"),
                ("^Wri.*", "regex"),
                ("Bash", "bash"),
                ("*", "all"),
            )
        ]
    }
    hooks_settings(project_dir, hooks)
    harness = configured_harness(answers=["y"])
    api_env.stream_replies += [_write("a.txt"), text_reply("done")]
    harness.turn("write")
    assert sorted(log.read_text().split()) == ["all", "ours", "pipe", "regex"]


def test_allow_spares_the_question_but_never_for_a_protected_file(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    hook_script(project_dir / "hooks", "allow.sh", "echo '" + decision("allow", "fine by the hook") + "'")
    hooks_settings(
        project_dir, command_hook("PreToolUse", str(project_dir / "hooks/allow.sh"), matcher="Write")
    )
    harness = configured_harness(answers=["n"])
    api_env.stream_replies += [_write("notes.txt"), _write("CLAUDE.md", "obey me"), text_reply("done")]

    harness.turn("write both")

    assert (project_dir / "notes.txt").read_text() == "hi"  # no question: the hook allowed it
    assert not (project_dir / "CLAUDE.md").exists()  # asked anyway, and refused
    assert [question.target for question in harness.questions] == [str((project_dir / "CLAUDE.md").resolve())]


def test_deny_blocks_and_ask_asks_even_what_would_run_unasked(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    deny, ask = decision("deny", "not that one"), decision("ask", "check this one")
    decide = f"read input; case \"$input\" in *deny.txt*) echo '{deny}';; *) echo '{ask}';; esac"
    hook_script(project_dir / "hooks", "decide.sh", decide)
    hooks_settings(
        project_dir, command_hook("PreToolUse", str(project_dir / "hooks/decide.sh"), matcher="Read|Write")
    )
    (project_dir / "deny.txt").write_text("x")
    (project_dir / "readme.txt").write_text("hello")
    harness = configured_harness(answers=["y", "n"])
    api_env.stream_replies += [
        tool_reply("read_file", {"file_path": "deny.txt"}),
        tool_reply("read_file", {"file_path": "readme.txt"}),  # a read in the project never asks…
        _write("out.txt"),  # …and this write would ask once, the hook's question being the one
        text_reply("done"),
    ]

    ended = harness.turn("go")

    results = [tool_results_in(call)[0] for call in main_calls(api_env)[1:]]
    assert "not that one" in result_text(results[0]) and results[0]["is_error"]
    assert "hello" in result_text(results[1]) and not results[1].get("is_error")
    assert ended.reason == "refused_by_user" and not (project_dir / "out.txt").exists()  # a no ends it
    reason = "ask rule {} in a PreToolUse hook (check this one)"
    assert [q.reason for q in harness.questions] == [reason.format("Read"), reason.format("Write")]
    assert harness.session.permissions.rules.rules == []  # each hook's rule ended with its call


def test_a_hooks_answer_is_one_input_to_the_rules_deny_wins_and_ask_asks_in_bypass(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    allow, ask = decision("allow", "fine"), decision("ask", "sure?")
    decide = f"read input; case \"$input\" in *make*) echo '{ask}';; *) echo '{allow}';; esac"
    hook_script(project_dir / "hooks", "decide.sh", decide)
    hooks_settings(
        project_dir,
        command_hook("PreToolUse", str(project_dir / "hooks/decide.sh"), matcher="Bash"),
        permissions={"deny": ["Bash(rm:*)"], "defaultMode": "bypassPermissions"},
    )
    (project_dir / "victim").write_text("x")
    harness = configured_harness(answers=["y"])
    assert harness.session.permissions.mode == "bypass"
    api_env.stream_replies += [
        tool_reply("run_shell", {"command": "rm victim"}),  # the hook allows; the deny rule wins
        tool_reply("run_shell", {"command": "make --version"}),  # bypass, but the hook asks
        text_reply("done"),
    ]

    harness.turn("go")

    results = [tool_results_in(call)[0] for call in main_calls(api_env)[1:]]
    assert (project_dir / "victim").exists() and "deny rule Bash(rm:*)" in result_text(results[0])
    assert [q.target for q in harness.questions] == ["make --version"]


def test_a_hooks_ask_about_a_tool_no_rule_judges_is_asked_before_it_runs(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    hooks_settings(
        project_dir,
        command_hook("PreToolUse", f"echo '{decision('ask', 'plans need a look')}'", matcher="ExitPlanMode"),
        permissions={"defaultMode": "plan"},
    )
    harness = configured_harness(interactive=False)
    api_env.stream_replies += [tool_reply("exit_plan_mode", {"plan": "1. do it"}), text_reply("ok")]

    harness.turn("plan it")

    result = tool_results_in(main_calls(api_env)[-1])[0]
    assert result["is_error"] and "no one can give it" in result_text(result)
    assert not list((project_dir.parent / "home").rglob("plans/*.md"))  # never ran: no plan saved


def test_user_prompt_submit_adds_context_or_keeps_the_message_out(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    script = """read -r line
case "$line" in *secret*) echo "do not send secrets" >&2; exit 2;; esac
echo "branch: main"
"""
    hook_script(project_dir / "hooks", "prompt.sh", script)
    hooks_settings(project_dir, command_hook("UserPromptSubmit", str(project_dir / "hooks/prompt.sh")))
    harness = configured_harness()
    api_env.stream_replies.append(text_reply("ok"))

    ended = harness.turn("my secret is 42")
    assert ended.reason == "stopped" and not main_calls(api_env)
    assert any("do not send secrets" in line for line in notices(harness))
    assert harness.session.agent.messages == []

    assert harness.turn("what branch?").reason == "done"
    texts = user_texts(main_calls(api_env)[-1])
    assert any("branch: main" in text and "<hook-output" in text for text in texts)
    assert "my secret" not in json.dumps(main_calls(api_env)[-1].messages)


def test_post_tool_use_feedback_and_context_reach_the_model_with_the_result(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    script = """cat > /dev/null
echo '{"decision": "block", "reason": "lint: line 1 is too long",
  "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatter ran"}}'"""
    hook_script(project_dir / "hooks", "lint.sh", script)
    hooks_settings(
        project_dir, command_hook("PostToolUse", str(project_dir / "hooks/lint.sh"), matcher="Edit|Write")
    )
    harness = configured_harness(answers=["y"])
    api_env.stream_replies += [_write("a.py", "x = 1"), text_reply("fixed")]
    harness.turn("write a.py")
    text = result_text(tool_results_in(main_calls(api_env)[-1])[0])
    assert "lint: line 1 is too long" in text and "formatter ran" in text
    assert (project_dir / "a.py").read_text() == "x = 1"  # the call ran: the hook speaks after it


def test_a_stop_hook_makes_the_model_go_on_once(api_env: FakeAnthropic, project_dir: Path) -> None:
    script = """input=$(cat)
case "$input" in *'"stop_hook_active": true'*) exit 0;; esac
echo '{"decision": "block", "reason": "run the tests before you finish"}'"""
    hook_script(project_dir / "hooks", "stop.sh", script)
    hooks_settings(project_dir, command_hook("Stop", str(project_dir / "hooks/stop.sh")))
    harness = configured_harness()
    api_env.stream_replies += [text_reply("all done"), text_reply("tests pass, now done")]

    ended = harness.turn("fix it")

    assert ended.reason == "done" and ended.final_text == "tests pass, now done"
    assert "run the tests before you finish" in json.dumps(main_calls(api_env)[1].messages[-1])


def test_continue_false_ends_the_turn_with_the_stop_reason(api_env: FakeAnthropic, project_dir: Path) -> None:
    hook_script(
        project_dir / "hooks",
        "halt.sh",
        """echo '{"continue": false, "stopReason": "build is broken: fix it first"}'""",
    )
    hooks_settings(project_dir, command_hook("PostToolUse", str(project_dir / "hooks/halt.sh")))
    harness = configured_harness()
    api_env.stream_replies += [
        tool_reply("list_files", {"pattern": "*"}),
        tool_reply("list_files", {"pattern": "*"}),  # never asked for: the turn ends before
    ]
    ended = harness.turn("look")
    assert ended.reason == "stopped" and ended.problem == "build is broken: fix it first"
    assert len(main_calls(api_env)) == 1
    assert (
        harness.session.agent.messages[-1]["content"][0]["type"] == "tool_result"
    )  # still a valid conversation


def test_junk_output_a_failing_and_a_non_executable_hook_are_one_line_each(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    hook_script(project_dir / "hooks", "junk.sh", r"printf '{not json \033]52;c;aGk=\007 \x00\xff'")
    hook_script(project_dir / "hooks", "fail.sh", "echo 'database down' >&2; exit 1")
    hook_script(project_dir / "hooks", "plain.sh", "echo hi", executable=False)
    groups = [
        {"hooks": [{"type": "command", "command": str(project_dir / f"hooks/{n}.sh")}]}
        for n in ("junk", "fail", "plain")
    ]
    hooks_settings(project_dir, {"PreToolUse": groups})
    harness = configured_harness()
    api_env.stream_replies += [tool_reply("list_files", {"pattern": "*"}), text_reply("done")]

    assert harness.turn("list").reason == "done"

    assert "failed" not in result_text(tool_results_in(main_calls(api_env)[-1])[0])  # the call ran
    lines = notices(harness)
    assert any("fail.sh` failed (exit 1): database down" in line for line in lines)
    assert any("plain.sh` failed (exit 126 (is it executable? chmod +x))" in line for line in lines)
    assert any("junk.sh`: {not json" in line for line in lines)


def test_a_hook_past_its_timeout_is_stopped_with_its_children(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    script = """sleep 300 & echo $! > "$CLAUDE_PROJECT_DIR/child.pid"
echo $$ > "$CLAUDE_PROJECT_DIR/hook.pid"
sleep 300"""
    hook_script(project_dir / "hooks", "slow.sh", script)
    hooks_settings(project_dir, command_hook("PreToolUse", str(project_dir / "hooks/slow.sh"), timeout=1))
    harness = configured_harness()
    api_env.stream_replies += [tool_reply("list_files", {"pattern": "*"}), text_reply("done")]

    assert harness.turn("list").reason == "done"

    assert any("slow.sh` timed out after 1 s and was stopped" in line for line in notices(harness))
    for name in ("child.pid", "hook.pid"):
        pid = int((project_dir / name).read_text())
        assert wait_until(lambda pid=pid: not alive(pid), 5), f"{name} {pid} outlived its hook"


def test_a_child_left_behind_by_a_finished_hook_is_ended(api_env: FakeAnthropic, project_dir: Path) -> None:
    hook_script(
        project_dir / "hooks", "fork.sh", '(sleep 300 & echo $! > "$CLAUDE_PROJECT_DIR/child.pid")\nexit 0'
    )
    hooks_settings(project_dir, command_hook("UserPromptSubmit", str(project_dir / "hooks/fork.sh")))
    harness = configured_harness()
    api_env.stream_replies.append(text_reply("hi"))
    harness.turn("hello")
    pid = int((project_dir / "child.pid").read_text())
    assert wait_until(lambda: not alive(pid), 5)


def test_no_hook_outlives_the_session(api_env: FakeAnthropic, project_dir: Path) -> None:
    script = 'echo $$ > "$CLAUDE_PROJECT_DIR/start.pid"; sleep 300'
    hook_script(project_dir / "hooks", "start.sh", script)
    hooks_settings(
        project_dir, command_hook("SessionStart", str(project_dir / "hooks/start.sh"), timeout=600)
    )
    harness = configured_harness()
    harness.session.warm_up()  # SessionStart runs on its own thread
    pid_file = project_dir / "start.pid"
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 10)
    pid = int(pid_file.read_text())
    assert alive(pid)
    harness.session.end("other")
    assert wait_until(lambda: not alive(pid), 5)


def test_hooks_of_one_event_run_at_once(api_env: FakeAnthropic, project_dir: Path) -> None:
    # Each waits for the other's mark: run one after the other, both would time out.
    rendezvous = """touch "$CLAUDE_PROJECT_DIR/{me}"
for i in $(seq 100); do [ -e "$CLAUDE_PROJECT_DIR/{other}" ] && exit 0; sleep 0.05; done
exit 1"""
    for me, other in (("a", "b"), ("b", "a")):
        hook_script(project_dir / "hooks", f"{me}.sh", rendezvous.format(me=me, other=other))
    groups = [{"hooks": [{"type": "command", "command": str(project_dir / f"hooks/{n}.sh")}]} for n in "ab"]
    hooks_settings(project_dir, {"UserPromptSubmit": groups})
    harness = configured_harness()
    api_env.stream_replies.append(text_reply("hi"))
    harness.turn("hello")
    assert not [line for line in notices(harness) if "failed" in line]


def test_project_hooks_run_only_in_a_trusted_folder_and_the_users_always(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    hooks_settings(project_dir, command_hook("UserPromptSubmit", f"touch {project_dir}/project-ran"))
    hooks_settings(isolated_env, command_hook("UserPromptSubmit", f"touch {project_dir}/user-ran"))
    harness = configured_harness(trusted=False)
    api_env.stream_replies.append(text_reply("hi"))
    harness.turn("hello")
    assert (project_dir / "user-ran").exists() and not (project_dir / "project-ran").exists()
    assert any("hooks" in note and "not a trusted folder" in note for note in harness.session.settings.notes)


def test_session_start_context_pre_compact_and_notification(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    hooks = {
        **command_hook("SessionStart", "echo 'today we work on the parser'", matcher="startup"),
        **command_hook("PreCompact", f"cat > {project_dir}/compact.json", matcher="manual"),
        **command_hook("Notification", f"cat > {project_dir}/notified.json"),
    }
    hooks_settings(project_dir, hooks)
    harness = configured_harness(answers=["y"])
    harness.session.warm_up()
    api_env.stream_replies += [
        tool_reply("run_shell", {"command": "touch made"}),
        text_reply("ok"),
        text_reply("summary"),
    ]
    ended: TurnEnded = harness.turn("hello")
    assert ended.reason == "done"
    assert any("today we work on the parser" in text for text in user_texts(main_calls(api_env)[0]))
    wait_for_file(project_dir / "notified.json")
    assert wait_until(lambda: "permission" in (project_dir / "notified.json").read_text(), 5)
    harness.session.agent.compact("keep the parser notes")
    compact = json.loads((project_dir / "compact.json").read_text())
    assert compact["trigger"] == "manual" and compact["custom_instructions"] == "keep the parser notes"


def test_session_start_hears_resume_and_clear_and_session_end_hears_clear(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    log = project_dir / "sources.log"
    which = "import json, sys; e = json.load(sys.stdin); print(e['hook_event_name'], e.get('source') or"
    which += " e['reason'])"
    script = str(hook_script(project_dir / "hooks", "which.sh", f'exec python3 -c "{which}"'))
    hooks = {
        **command_hook("SessionStart", f"{script} >> {log}"),
        **command_hook("SessionEnd", f"{script} >> {log}"),
    }
    hooks_settings(project_dir, hooks)
    first = configured_harness()
    first.session.warm_up()
    api_env.stream_replies.append(text_reply("one"))
    first.turn("hello")
    first.session.end("other")

    second = configured_harness()
    finish_resume(second.session, open_session(second.session, latest_session(second.session.settings)))
    second.session.warm_up()  # after a resume, no "startup"
    api_env.stream_replies.append(text_reply("two"))
    second.turn("again")
    second.session.new_conversation()
    api_env.stream_replies.append(text_reply("three"))
    second.turn("fresh")
    assert log.read_text().splitlines() == [
        "SessionStart startup",
        "SessionEnd other",
        "SessionStart resume",
        "SessionEnd clear",
        "SessionStart clear",
    ]
