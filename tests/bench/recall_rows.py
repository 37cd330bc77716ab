"""Recall against a model server with realistic latency (a first token takes about 0.8 s, a side
query about 0.6 s, each with jitter): does recall make the reply wait, and do memories recalled
while the user types reach the message's first request?"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pexpect

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.recall.terms import terms
from tests.bench.ranking_rows import write_labelled_dir
from tests.bench.stats import Row, Samples, extra_at_most, ratio_at_most, share_at_least
from tests.bench.terminal_rows import (
    MAIN_REPLY,
    MINI_CLAUDE,
    PROMPT_PATTERN,
    expect_answering,
    log_size,
    program_env,
    spawned,
    time_to_first_token,
    wait_for_log,
)
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply
from tests.kit import side_query_message

SEED = 20261201
FIRST_TOKEN_SECONDS = (0.65, 0.95)  # uniform; real first tokens take 0.5-2 s
SIDE_QUERY_SECONDS = (0.5, 0.7)
# Typing: gaps between keys are log-normal, median 125 ms and spread 0.77 (about 6 characters a
# second, ~4 % of the gaps longer than half a second), then a pause before Enter.
KEY_GAP_MEDIAN = 0.125
KEY_GAP_SPREAD = 0.77
ENTER_PAUSE_SECONDS = (1.0, 2.0)  # people reread what they typed before they send it
# Half the messages are typed with a thinking pause every 6-10 words, as people stop mid-sentence.
THINKING_PAUSE_SHARE = 0.5
THINKING_PAUSE_WORDS = (6, 10)
THINKING_PAUSE_SECONDS = (0.6, 1.2)
TYPED_MESSAGES = 12
LONG_MESSAGES = 2  # of them, 40-50 words long (the rest 8-15)
LONG_MESSAGE_WORDS = 30
FOR_TYPING = 100  # memories in the typing row's project, the labelled ones among them
NONE_CHOSEN = '{"selected_memories": []}'


class RealisticServer:
    """The fake with real latency. Main replies stream after `first_token` seconds; a side query
    answers after ~0.6 s, choosing `target` (a file name) when the query shares a search term with
    that memory and offers it: a stand-in for a side model that recognises what a message is about."""

    def __init__(self, fake: FakeAnthropic, rng: random.Random) -> None:
        self.fake = fake
        self.rng = rng
        self.first_token = sum(FIRST_TOKEN_SECONDS) / 2
        self.reply = MAIN_REPLY
        self.target: tuple[str, frozenset[str]] | None = None
        fake.responder = self.respond

    def respond(self, request: RecordedRequest) -> Reply:
        if request.stream:
            return text_reply(self.reply, chunk_size=64, delay=self.first_token)
        delay = self.rng.uniform(*SIDE_QUERY_SECONDS)
        text = side_query_message(request)
        query = text.split("<user-message>", 1)[-1].split("</user-message>", 1)[0]
        if self.target is not None:
            file_name, target_terms = self.target
            if file_name in text and target_terms & set(terms(query)):
                return text_reply(f'{{"selected_memories": ["{file_name}"]}}', delay=delay)
        return text_reply(NONE_CHOSEN, delay=delay)


def first_token_row(
    home: Path, with_memories: Path, without: Path, fake: FakeAnthropic, runs: int
) -> tuple[Row, Samples, RecordedRequest]:
    """Enter → first token with 100 memories (a side query in flight), against no memories. Each
    run's first-token latency is drawn once and used for both sides, so the ratio shows what recall
    costs, not the jitter. Also returns the idle REPL's peak RSS and one side query as sent."""
    rng = random.Random(SEED)
    server = RealisticServer(fake, rng)
    env = program_env(home, fake)
    log = Path(env["XDG_STATE_HOME"]) / "mini-claude" / "log" / "debug.log"
    measured, baseline, idle_rss = Samples(), Samples(), Samples()
    for _ in range(runs):
        server.first_token = rng.uniform(*FIRST_TOKEN_SECONDS)
        asked = len(side_queries(fake))
        seconds, _ = time_to_first_token(
            env, with_memories, log, lambda asked=asked: wait_for_side_query(fake, asked)
        )
        measured.add(seconds)
        seconds, peak_kib = time_to_first_token(env, without, log)
        baseline.add(seconds)
        idle_rss.add(peak_kib)
    fake.responder = None
    row = Row("recall costs no wait", measured, baseline, *ratio_at_most(1.02))
    return row, idle_rss, side_queries(fake)[0]


def typing_rows(home: Path, root: Path, fake: FakeAnthropic) -> tuple[Row, Row]:
    """A person types TYPED_MESSAGES messages at human speed: the share whose relevant memory is in
    the message's first request, and the side queries each message costs; baseline: the same
    messages with MINI_CLAUDE_EARLY_RECALL=off (typed at once: nothing is sent while typing)."""
    project = (root / "typing").resolve()
    project.mkdir()
    labelled = write_labelled_dir(project_memory_dir(str(project)), FOR_TYPING)
    # One message per memory: a second message about the same memory would find it recalled already.
    longs = [(m, f) for m, f in labelled if len(m.split()) >= LONG_MESSAGE_WORDS][:LONG_MESSAGES]
    firsts = {
        f: m
        for m, f in reversed(labelled)
        if m.isascii() and 5 <= len(m.split()) < LONG_MESSAGE_WORDS and f not in dict(longs).values()
    }
    shorts = [(m, f) for f, m in reversed(list(firsts.items()))][: TYPED_MESSAGES - len(longs)]
    messages = shorts[: len(shorts) // 2] + longs[:1] + shorts[len(shorts) // 2 :] + longs[1:]
    memory_dir = project_memory_dir(str(project))
    shares, queries = [], []
    for early in ("on", "off"):
        server = RealisticServer(fake, random.Random(SEED))
        env = program_env(home, fake) | {"MINI_CLAUDE_EARLY_RECALL": early}
        found, asked = type_messages(server, env, project, memory_dir, messages, humanly=early == "on")
        shares.append(Samples([found / len(messages)], unit="share"))
        queries.append(Samples([asked / len(messages)], unit="count"))
    fake.responder = None
    share = Row("recall in the first request (typing)", shares[0], shares[1], *share_at_least(0.8))
    cost = Row("side queries per message (typing)", queries[0], queries[1], *extra_at_most(1.5))
    return share, cost


def type_messages(
    server: RealisticServer,
    env: dict[str, str],
    project: Path,
    memory_dir: Path,
    messages: list[tuple[str, str]],
    *,
    humanly: bool,
) -> tuple[int, int]:
    """(messages whose memory was in their first request, side queries sent) in one REPL session."""
    rng = random.Random(SEED)
    log = Path(env["XDG_STATE_HOME"]) / "mini-claude" / "log" / "debug.log"
    start = log_size(log)
    found = 0
    asked_before = len(side_queries(server.fake))
    with spawned(MINI_CLAUDE, [], env, project) as child:
        expect_answering(child, PROMPT_PATTERN)
        wait_for_log(log, start, ("model client ready", "memory start-up done"))
        for number, (message, file_name) in enumerate(messages):
            memory = (memory_dir / file_name).read_text(encoding="utf-8")
            server.target = (file_name, frozenset(terms(memory)))
            server.reply = f"Done {number}."
            server.first_token = rng.uniform(*FIRST_TOKEN_SECONDS)
            sent_before = len(server.fake.requests)
            if humanly:
                type_like_a_person(child, message, rng)
            else:
                child.send(message)
                expect_answering(child, re.escape(message[-12:]))
            child.send("\r")
            expect_answering(child, re.escape(f"Done {number}."))
            first = next(r for r in server.fake.requests[sent_before:] if r.stream)
            found += any(file_name in reminder for reminder in this_turns_reminders(first))
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    return found, len(side_queries(server.fake)) - asked_before


def type_like_a_person(child: pexpect.spawn, text: str, rng: random.Random) -> None:
    thinking = rng.random() < THINKING_PAUSE_SHARE
    words_to_pause = rng.randint(*THINKING_PAUSE_WORDS)
    for char in text:
        child.send(char)
        time.sleep(rng.lognormvariate(0, KEY_GAP_SPREAD) * KEY_GAP_MEDIAN)
        if thinking and char == " ":
            words_to_pause -= 1
            if words_to_pause == 0:
                time.sleep(rng.uniform(*THINKING_PAUSE_SECONDS))
                words_to_pause = rng.randint(*THINKING_PAUSE_WORDS)
    time.sleep(rng.uniform(*ENTER_PAUSE_SECONDS))


def this_turns_reminders(request: RecordedRequest) -> list[str]:
    """Reminders added with the request's newest user message (not those of earlier turns)."""
    last = request.messages[-1]
    return [b.get("text", "") for b in last["content"] if b.get("text", "").startswith("<system-reminder>")]


def side_queries(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if not r.stream]


def wait_for_side_query(fake: FakeAnthropic, already: int, timeout: float = 30.0) -> None:
    """The recall runs beside the reply: wait for its side query, or the run is void."""
    deadline = time.monotonic() + timeout
    while len(side_queries(fake)) <= already:
        if time.monotonic() > deadline:
            raise RuntimeError("with memories on disk, the message did not start a recall")
        time.sleep(0.01)
