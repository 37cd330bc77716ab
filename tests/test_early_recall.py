"""Recall on the draft while the user types: which drafts are sent to the side model, when a
draft's recall stands for the message that is then sent, and that its memories reach the first
request (against the fake server, through the real model client)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core.config import load_settings, log_file, project_memory_dir
from mini_claude.llm.client import ModelClient
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.recall.rules import adds_little, draft_covers, grown_enough, worth_a_draft_recall
from mini_claude.memory.store.memory_store import MemoryStore
from tests.agent_harness import Harness, wait_for_recalls
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, error_reply, text_reply, tool_reply
from tests.kit import choose, main_calls, reminders_in, side_queries, side_query_message, wait_for_log_line

DRAFT = "how do we deploy the payments service"
SENT = DRAFT + "?"
PREAMBLE = "could you please explain to me how we"
LONGER = DRAFT + " to production on friday evening"
BODY = "Deploys go through the release train on Thursdays."


@pytest.fixture
def store(project_dir: Path) -> MemoryStore:
    return MemoryStore(project_memory_dir(str(project_dir)))


@pytest.fixture
def deploys(store: MemoryStore) -> str:
    return store.save(
        name="deploys", description="how and when we deploy", memory_type="project", body=BODY + "\n"
    ).path.name


@pytest.fixture
def recall(api_env: FakeAnthropic, store: MemoryStore) -> Iterator[MemoryRecall]:
    yield MemoryRecall(store, ModelClient(load_settings()))
    api_env.close()  # ends side queries still waiting on a delayed reply
    assert wait_for_recalls()


# --- the rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("draft", "worth"),
    [
        ("how do we deploy", True),
        ("how do we", False),  # no search term: nothing to recall by
        ("部署", True),
        ("デプロイ手順", True),
        ("how do", False),  # fewer than three words
        ("部", False),
        ("/memory show deploys", False),  # a command
        ("!git status --short now", False),  # a shell shortcut
        ("#remember we deploy on Thursdays", False),  # a memory shortcut
        ("export GITHUB_TOKEN=ghp_" + "a1B2" * 9, False),  # looks like a secret: never sent
        ("the DB_PASSWORD=hunter2hunter2 works", False),
        ("use the password Tr0ub4dor&3x for the staging db", False),  # prose, not `name = value`
        ("mysql -u root -pS3cr3tPass!! -h db", False),
        ("あのパスワードは hunter2hunter2 です", False),
        ("where does the staging db password live", True),  # names a password, holds none
        ("   ", False),
    ],
)
def test_which_drafts_are_worth_a_side_query(draft: str, worth: bool) -> None:
    assert worth_a_draft_recall(draft) is worth


@pytest.mark.parametrize(
    ("draft", "sent", "covers", "little"),
    [
        (DRAFT, DRAFT, True, True),
        (DRAFT, SENT, True, True),  # one character more
        (DRAFT, "How  do we deploy the PAYMENTS service?", True, True),  # case and spaces fold
        (DRAFT, DRAFT + ", please? ...", True, True),  # only stopwords and punctuation added
        (DRAFT, DRAFT + " today", True, False),  # one new word: a recall of its own
        (DRAFT, DRAFT + " to production on Friday evening", True, False),
        # The word that matters comes last, after a long preamble: that word alone counts.
        (PREAMBLE, PREAMBLE + " deploy?", True, False),
        ("how do we deploy the payments serv", SENT, True, False),  # a word finished, not only added
        (DRAFT, DRAFT + " service", True, True),  # a word it had already
        ("how do we deploy", DRAFT + " to production on Friday evening", False, False),  # under half
        ("how do we roll back", SENT, False, False),  # not what was sent
        ("部署流程", "部署流程是什么", True, False),
        ("部署流程", "部署流程？", True, True),  # full-width punctuation adds no term
        ("数据库迁", "数据库迁移", True, False),  # one character finishes a word: 迁移 is new
    ],
)
def test_when_a_drafts_recall_stands_for_the_message(
    draft: str, sent: str, covers: bool, little: bool
) -> None:
    assert draft_covers(draft, sent) is covers
    assert (covers and adds_little(draft, sent)) is little


@pytest.mark.parametrize(
    ("recalled", "draft", "again"),
    [
        ("how do we deploy", "how do we deploy", False),
        ("how do we deploy", "how do we deploy the", False),  # a stopword more
        ("how do we deploy", "how do we deploy the service", False),  # one search term more
        ("how do we deploy", "how do we deploy the payments service", True),
        ("how do we deploy", "how do we roll back", True),  # edited
        ("how do we deploy the payments service", "how do we deploy the service", False),  # one less
        # The longer the draft, the more it must change: half as many terms as it had.
        (LONGER, LONGER + " after lunch tomorrow", False),  # 6 terms: 2 new are not enough
        (LONGER, LONGER + " after lunch tomorrow, check it", True),  # 3 are
        ("部署", "部署流程", True),
        ("部署流程", "部署流程是", False),  # one CJK pair more
    ],
)
def test_a_draft_is_recalled_again_only_once_it_has_grown(recalled: str, draft: str, again: bool) -> None:
    assert grown_enough(recalled, draft) is again


# --- the recall object ----------------------------------------------------------------------------


def test_a_settled_drafts_memories_are_ready_when_the_message_is_sent(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    api_env.plain_replies.append(choose(deploys))

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start(SENT)

    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [deploys]
    [query] = side_queries(api_env)  # the sent message adds too little for a query of its own
    assert DRAFT in side_query_message(query)


def test_a_draft_still_running_at_send_is_adopted_not_repeated(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    draft_answer = choose(deploys, held=True)
    api_env.plain_replies.append(draft_answer)

    recall.start_draft(DRAFT)
    api_env.wait_for_requests(1)
    recall.start(SENT)

    assert recall.take_ready() is None  # never waits
    draft_answer.release.set()
    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [deploys]
    assert len(side_queries(api_env)) == 1


def test_a_message_that_extends_the_draft_a_lot_gets_its_own_recall_too(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str, store: MemoryStore
) -> None:
    rollbacks = store.save(
        name="rollbacks", description="how to roll back", memory_type="project", body="Use the button.\n"
    ).path.name
    own = choose(rollbacks, held=True)  # the message's own recall answers after the first request
    api_env.plain_replies.extend([choose(deploys), own])
    sent = DRAFT + " and its rollbacks too?"

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start(sent)

    first = recall.take_ready()
    assert first is not None and first.file_names == [deploys]  # for the first request
    own.release.set()
    assert wait_for_recalls()
    later = recall.take_ready()
    assert later is not None and later.file_names == [rollbacks]  # by the usual poll
    assert [sent in side_query_message(q) for q in side_queries(api_env)] == [False, True]


def test_a_last_word_the_draft_lacked_gets_the_message_its_own_recall(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    # The draft says nothing yet (its side query chooses nothing); " deploy?" is what matters.
    api_env.plain_replies.extend([choose(), choose(deploys)])
    recall.start_draft(PREAMBLE)
    assert wait_for_recalls()
    recall.start(PREAMBLE + " deploy?")

    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [deploys]
    assert ["deploy?" in side_query_message(q) for q in side_queries(api_env)] == [False, True]


@pytest.mark.parametrize(
    "failure",
    [error_reply(529), error_reply(500), error_reply(400, message="transient")],
    ids=["overloaded", "server error", "bad request"],
)
def test_a_failed_draft_recall_stands_for_nothing(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str, failure: object
) -> None:
    api_env.plain_replies.extend([failure, choose(deploys)])

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start(SENT)  # the sent text adds nothing to the draft, yet the draft recalled nothing

    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [deploys]
    assert len(side_queries(api_env)) == 2


def test_a_draft_recall_that_fails_after_enter_is_replaced_by_the_messages_own(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    draft_failure = error_reply(400, held=True)  # not retried
    api_env.plain_replies.extend([draft_failure, choose(deploys)])

    recall.start_draft(DRAFT)
    api_env.wait_for_requests(1)
    recall.start(SENT)  # adopted while still running: no recall of its own yet
    assert len(side_queries(api_env)) == 1
    draft_failure.release.set()

    assert wait_for_recalls()
    assert wait_for_recalls()  # the message's own, started when the adopted one failed
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [deploys]
    assert SENT in side_query_message(side_queries(api_env)[1])


def test_a_settled_draft_recall_survives_a_newer_draft_still_running_at_enter(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str, store: MemoryStore
) -> None:
    prod = store.save(
        name="prod access", description="who may deploy to prod", memory_type="project", body="Ops only.\n"
    ).path.name
    longer = DRAFT + " to prod safely"
    newer_answer = choose(prod, held=True)
    api_env.plain_replies.extend([choose(deploys), newer_answer])

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start_draft(longer)
    api_env.wait_for_requests(2)
    recall.start(longer)

    first = recall.take_ready()  # what the message's first request gets: the settled draft's
    assert first is not None and first.file_names == [deploys]
    newer_answer.release.set()
    assert wait_for_recalls()
    later = recall.take_ready()  # the newer draft, adopted: by the usual poll
    assert later is not None and later.file_names == [prod]
    assert len(side_queries(api_env)) == 2  # the message adds nothing to the newer draft


def test_a_settled_draft_the_message_edited_away_is_not_injected(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str, store: MemoryStore
) -> None:
    rollbacks = store.save(
        name="rollbacks", description="how to roll back", memory_type="project", body="Use the button.\n"
    ).path.name
    newer_answer = choose(rollbacks, held=True)
    api_env.plain_replies.extend([choose(deploys), newer_answer])

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start_draft("how do we roll back the payments service")
    api_env.wait_for_requests(2)
    recall.start("how do we roll back the payments service?")

    assert recall.take_ready() is None  # the settled draft is not what was sent
    newer_answer.release.set()
    assert wait_for_recalls()
    later = recall.take_ready()
    assert later is not None and later.file_names == [rollbacks]


def test_a_draft_the_user_did_not_send_is_never_injected(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    api_env.plain_replies.extend([choose(deploys), text_reply('{"selected_memories": []}')])

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.start("actually, what is the weather like today?")
    assert wait_for_recalls()

    assert recall.take_ready() is None
    assert len(side_queries(api_env)) == 2


def test_one_draft_recall_at_a_time_and_the_newest_draft_waits(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    first_answer = choose(deploys, held=True)
    api_env.plain_replies.extend([first_answer, choose(deploys), choose(deploys)])

    recall.start_draft("how do we deploy")
    api_env.wait_for_requests(1)
    recall.start_draft("how do we deploy the")  # grew by one word: not worth another
    recall.start_draft("how do we deploy the payments")
    recall.start_draft(DRAFT)  # replaces the waiting one
    assert len(side_queries(api_env)) == 1  # the first is still running
    first_answer.release.set()
    assert wait_for_recalls()
    assert wait_for_recalls()  # the waiting draft runs after it

    assert [side_query_message(q).count(DRAFT) for q in side_queries(api_env)] == [0, 1]


def test_drafts_cost_nothing_without_memories(api_env: FakeAnthropic, tmp_path: Path) -> None:
    recall = MemoryRecall(MemoryStore(tmp_path / "none"), ModelClient(load_settings()))

    recall.start_draft(DRAFT)

    assert wait_for_recalls() and side_queries(api_env) == []


def test_a_new_conversation_drops_the_draft(
    recall: MemoryRecall, api_env: FakeAnthropic, deploys: str
) -> None:
    api_env.plain_replies.extend([choose(deploys), text_reply('{"selected_memories": []}')])

    recall.start_draft(DRAFT)
    assert wait_for_recalls()
    recall.reset()
    recall.start(SENT)
    assert wait_for_recalls()

    assert recall.take_ready() is None


# --- the agent and the REPL -----------------------------------------------------------------------


def test_a_drafts_memories_are_in_the_messages_first_request(
    api_env: FakeAnthropic, project_dir: Path, deploys: str
) -> None:
    harness = Harness().start()
    api_env.plain_replies.append(choose(deploys))
    api_env.stream_replies.append(text_reply("On Thursdays."))

    harness.session.recall.start_draft(DRAFT)
    assert wait_for_recalls()
    harness.turn(SENT)

    [first] = main_calls(api_env)
    [reminder] = reminders_in(first)
    assert BODY in reminder


def typed_slowly(term, text: str) -> None:  # type: ignore[no-untyped-def]
    for char in text:
        term.type(char)
        time.sleep(0.02)


@pytest.mark.parametrize("early", ["on", "off"])
def test_in_the_repl_a_paused_draft_is_recalled_before_enter(
    api_env: FakeAnthropic, project_dir: Path, deploys: str, early: str
) -> None:
    cli = Cli(project_dir)
    cli.env["MINI_CLAUDE_EARLY_RECALL"] = early
    api_env.stream_replies.append(text_reply("On Thursdays."))
    if early == "on":
        api_env.plain_replies.extend([choose(deploys), choose(deploys)])
    else:
        # The recall started by Enter answers only once the reply's call is out: a loaded machine
        # could otherwise finish it first, and the test would be about timing, not the draft.
        main_call_sent = threading.Event()

        def side_model(request):  # type: ignore[no-untyped-def]
            if request.stream:
                main_call_sent.set()
                return None
            main_call_sent.wait(10)
            return choose(deploys)

        api_env.responder = side_model

    with cli.terminal() as term:
        term.wait_until_ready()
        typed_slowly(term, SENT)
        if early == "on":
            # The pause sent the draft, and its recall settled (in the REPL's own process).
            wait_for_log_line(log_file(), f"memory recall chose [{deploys!r}]")
        else:
            time.sleep(1.0)  # as long a pause: nothing is sent
            assert api_env.requests == []
        term.submit("")
        term.expect("On Thursdays.")

    first = main_calls(api_env)[0]
    assert bool(reminders_in(first)) is (early == "on")


def test_in_the_repl_the_word_typed_after_the_pause_still_reaches_the_model(
    api_env: FakeAnthropic, project_dir: Path, deploys: str
) -> None:
    # A side model that reads the query: only a query naming the deploy recalls that memory. The
    # reply's first call (a tool call) is answered once that recall is done: its memory joins the
    # turn's second call (one arriving after the turn would be dropped, not pinned onto the next).
    streamed = []

    def side_model(request):  # type: ignore[no-untyped-def]
        if not request.stream:
            query = side_query_message(request).split("</user-message>")[0]
            return choose(deploys) if "deploy" in query else choose()
        streamed.append(request)
        if len(streamed) == 1:
            wait_for_log_line(log_file(), f"memory recall chose [{deploys!r}]")
        return None

    api_env.responder = side_model
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("Let me see.")])
    preamble = PREAMBLE

    with Cli(project_dir).terminal() as term:
        term.wait_until_ready()
        typed_slowly(term, preamble)
        wait_for_log_line(log_file(), f"memory recall chose [] for {preamble!r}")  # the pause's draft
        term.submit(" deploy?")  # the word that matters, then Enter at once
        term.expect("Let me see.")

    queries = [side_query_message(q) for q in side_queries(api_env)]
    assert any(preamble + " deploy?" in q for q in queries)
    assert BODY in "".join(reminders_in(main_calls(api_env)[1]))
