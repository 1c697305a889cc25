"""The response journal (evaluator/run/journal.py): entries written as responses arrive, read
back (a torn last line ignored), replayed in order by request hash, a differing request going
on live, compaction when a session starts and removal when every unit is recorded."""

from __future__ import annotations

import msgspec
import pytest

from backends.chat_wire import TokenCount
from backends.types import ChatMessage, ChatResponse, Choice, SamplingParams, Usage
from evaluator.config import AdmissionConfig
from evaluator.run.admission import AdmissionController
from evaluator.run.journal import (
    CURRENT,
    JOURNAL_FILE,
    SIMULATOR,
    open_journal,
    read_journal,
    request_hash,
)
from evaluator.run.progress import Counters
from evaluator.run.roles import AdmittedChat, EpisodeTicket, RoleEndpoint

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]


def _resp(text: str, prompt: int = 10) -> ChatResponse:
    return ChatResponse(id=f"id-{text}", model="m",
                        choices=[Choice(index=0, message=ChatMessage(role="assistant",
                                                                     content=text))],
                        usage=Usage(prompt_tokens=prompt, completion_tokens=2,
                                    total_tokens=prompt + 2))


def _msgs(*texts: str) -> list[ChatMessage]:
    return [ChatMessage(role="user" if i % 2 == 0 else "assistant", content=t)
            for i, t in enumerate(texts)]


def _h(role: str, *texts: str) -> str:
    return request_hash(role, "m", _msgs(*texts), tools=TOOLS, sampling=SamplingParams())


async def _write(run_dir, key: str, calls: list[tuple[str, str, str]]) -> None:
    """Journal `calls` (role, request hash, answer text) of one attempt of unit `key`."""
    journal = open_journal(run_dir, set(read_journal(run_dir / JOURNAL_FILE)))  # keep them all
    unit = journal.for_unit(key)
    for role, request, text in calls:
        unit.record(role, request, _resp(text))
    await journal.close(all_done=False)


def test_request_hash_covers_what_decides_the_answer():
    base = _h("agent", "hi")
    assert base == _h("agent", "hi")  # stable
    assert base != _h("user", "hi")
    assert base != _h("agent", "hi", "there")
    assert base != request_hash("agent", "m", _msgs("hi"), tools=TOOLS,
                                sampling=SamplingParams(temperature=0.5, seed=3))
    assert base != request_hash("agent", "m", _msgs("hi"), sampling=SamplingParams())
    assert base != request_hash("agent", "other", _msgs("hi"), tools=TOOLS,
                                sampling=SamplingParams())
    # an equal tool list that is another object hashes the same
    same_tools = msgspec.json.decode(msgspec.json.encode(TOOLS))
    assert base == request_hash("agent", "m", _msgs("hi"), tools=same_tools,
                                sampling=SamplingParams())


async def test_entries_are_read_back_per_unit_in_order(tmp_path):
    await _write(tmp_path, "b/s/t1#0", [("agent", "h1", "a1"), ("user", "h2", "u1"),
                                        ("agent", "h3", "a2")])
    await _write(tmp_path, "b/s/t2#0", [("agent", "g1", "x")])
    units = read_journal(tmp_path / JOURNAL_FILE)
    assert sorted(units) == ["b/s/t1#0", "b/s/t2#0"]
    entries = units["b/s/t1#0"]
    assert [(e.i, e.r, e.h) for e in entries] == [(0, "agent", "h1"), (1, "user", "h2"),
                                                  (2, "agent", "h3")]
    decoded = msgspec.json.decode(entries[2].resp, type=ChatResponse)
    assert decoded.message.content == "a2" and decoded.usage.prompt_tokens == 10


async def test_a_torn_last_line_is_ignored_and_cut_off(tmp_path):
    await _write(tmp_path, "u#0", [("agent", "h1", "a1"), ("agent", "h2", "a2")])
    path = tmp_path / JOURNAL_FILE
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[0][:25])  # kill -9 mid-write
    assert [e.h for e in read_journal(path)["u#0"]] == ["h1", "h2"]
    journal = open_journal(tmp_path, {"u#0"})  # the next session: repaired, compacted
    assert journal.entries == 2 and path.read_bytes() == whole
    await journal.close(all_done=False)


async def test_a_new_attempt_replaces_the_units_entries(tmp_path):
    await _write(tmp_path, "u#0", [("agent", "h1", "a1"), ("agent", "h2", "a2")])
    journal = open_journal(tmp_path, {"u#0"})
    journal.for_unit("u#0")  # the first attempt of this session: it would replay them ...
    journal.for_unit("u#0").record("agent", "k1", _resp("b1"))  # ... its retry starts at 0
    await journal.close(all_done=False)
    assert [e.h for e in read_journal(tmp_path / JOURNAL_FILE)["u#0"]] == ["k1"]


async def test_replay_answers_matching_requests_then_goes_live(tmp_path):
    calls = [("agent", _h("agent", "q"), "a1"), ("user", _h("user", "a1"), "u1"),
             ("agent", _h("agent", "q", "a1", "u1"), "a2")]
    await _write(tmp_path, "u#0", calls)
    journal = open_journal(tmp_path, {"u#0"})
    unit = journal.for_unit("u#0")
    for role, request, text in calls:
        got = unit.replay(role, request)
        assert got is not None and got.message.content == text and got.attempts == 0
    assert unit.live and unit.mismatch_at is None
    assert unit.replay("agent", _h("agent", "q", "a1", "u1", "a2", "u2")) is None  # live now
    unit.record("agent", _h("agent", "q", "a1", "u1", "a2", "u2"), _resp("a3"))
    info = unit.info()
    assert info is not None and info.calls == 3 and info.journaled == 3
    assert info.by_role == {"agent": 2, "user": 1} and info.mismatch_at is None
    assert journal.replayed == 3
    # the unit ended well: a later for_unit has nothing to replay
    assert journal.for_unit("u#0").info() is None
    await journal.close(all_done=False)
    # the live answer went after the replayed ones: a second kill would replay all four
    assert [e.i for e in read_journal(tmp_path / JOURNAL_FILE)["u#0"]] == [0, 1, 2, 3]


async def test_a_differing_request_goes_live_from_there_and_says_so(tmp_path):
    calls = [("agent", _h("agent", "q"), "a1"), ("user", _h("user", "a1"), "u1"),
             ("agent", _h("agent", "q", "a1", "u1"), "a2"), ("user", _h("user", "a2"), "u2")]
    await _write(tmp_path, "u#0", calls)
    journal = open_journal(tmp_path, {"u#0"})
    unit = journal.for_unit("u#0")
    assert unit.replay("agent", calls[0][1]) is not None
    assert unit.replay("user", calls[1][1]) is not None
    changed = _h("agent", "q", "a1", "u1 but different")
    assert unit.replay("agent", changed) is None  # mismatch: ask the model
    assert unit.live and unit.mismatch_at == 2 and journal.mismatches == 1
    assert unit.replay("user", calls[3][1]) is None  # live from the mismatch on, even if equal
    unit.record("agent", changed, _resp("live a2"))
    info = unit.info()
    assert info is not None and (info.calls, info.mismatch_at) == (2, 2)
    await journal.close(all_done=False)
    entries = read_journal(tmp_path / JOURNAL_FILE)["u#0"]  # the stale tail is dropped
    assert [(e.i, e.h) for e in entries] == [(0, calls[0][1]), (1, calls[1][1]), (2, changed)]


async def test_a_tool_simulator_miss_does_not_end_the_replay(tmp_path):
    calls = [("agent", "a-1", "call lookup"), (SIMULATOR, "sim-1", "{}"),
             ("agent", "a-2", "done")]
    await _write(tmp_path, "u#0", calls)
    journal = open_journal(tmp_path, {"u#0"})
    unit = journal.for_unit("u#0")
    assert unit.replay("agent", "a-1") is not None
    assert unit.replay(SIMULATOR, "sim-other") is None  # e.g. the sandbox's store changed
    assert not unit.live
    assert unit.replay("agent", "a-2") is not None
    # the journaled simulator answer was never asked for: the replay ends without a mismatch
    assert unit.replay("agent", "a-3") is None and unit.mismatch_at is None
    await journal.close(all_done=False)


async def test_compaction_keeps_only_units_that_will_run_and_a_finished_run_drops_it(tmp_path):
    await _write(tmp_path, "done#0", [("agent", "h", "x")] * 3)
    await _write(tmp_path, "open#0", [("agent", "h1", "y")])
    path = tmp_path / JOURNAL_FILE
    before = path.stat().st_size
    journal = open_journal(tmp_path, {"open#0", "never-journaled#0"})
    assert (journal.units, journal.entries) == (1, 1)
    assert journal.size_before == before > journal.size_after == path.stat().st_size
    assert "1 model responses of 1 unfinished units" in journal.describe()
    assert list(read_journal(path)) == ["open#0"]
    await journal.close(all_done=True)
    assert not path.exists()


class _FakeClient:
    def __init__(self) -> None:
        self.sent: list[list[ChatMessage]] = []

    async def chat(self, messages, **kwargs):
        self.sent.append(list(messages))
        return _resp(f"live {len(self.sent)}")


def _endpoint(role: str, client: _FakeClient, counters: Counters) -> RoleEndpoint:
    admission = AdmissionController(role, AdmissionConfig(), cap=4)
    return RoleEndpoint(role, client, "m", SamplingParams(), admission, counters)


async def test_roles_journal_live_calls_and_replay_them_without_the_server(tmp_path):
    counters = Counters()
    client = _FakeClient()
    agent = _endpoint("agent", client, counters)
    sim = AdmittedChat(_endpoint(SIMULATOR, client, counters), journal=True)
    judge = AdmittedChat(_endpoint("judge", client, counters))  # never journaled

    async def episode(journal) -> list[str]:
        ticket = EpisodeTicket(0, "sid")
        unit = ticket.journal = journal.for_unit("u#0")
        token = CURRENT.set(unit)
        try:
            role = agent.for_episode(ticket)
            first = await role.complete(_msgs("q"), tools=TOOLS)
            tool = await sim.chat(_msgs("simulate lookup"), sampling=SamplingParams())
            second = await role.complete(_msgs("q", first.message.content, "tool"), tools=TOOLS)
            await judge.chat(_msgs("judge this"))
        finally:
            CURRENT.reset(token)
        return [first.message.content, tool.message.content, second.message.content]

    journal = open_journal(tmp_path, set())
    first_run = await episode(journal)
    await journal.close(all_done=False)
    assert len(client.sent) == 4 and counters.calls == 4
    assert [e.r for e in read_journal(tmp_path / JOURNAL_FILE)["u#0"]] == [
        "agent", SIMULATOR, "agent"]

    journal = open_journal(tmp_path, {"u#0"})
    replayed = await episode(journal)
    await journal.close(all_done=True)
    assert replayed == first_run
    assert len(client.sent) == 5 and counters.replayed_calls == 3  # only the judge was sent
    assert counters.calls == 5  # replayed answers are not counted as this session's calls


@pytest.mark.parametrize("fsync", [True, False])
async def test_the_writer_fsyncs_at_most_every_interval_and_at_close(tmp_path, fsync):
    from evaluator.run.results import ResultWriter

    writer = ResultWriter(tmp_path / "j.jsonl", fsync=fsync, fsync_every_s=60.0).start()
    for n in range(3):
        writer.put_line(b'{"n":%d}\n' % n)
        await writer.flush()
    assert writer._unsynced is fsync  # the first batch was fsynced, the next ones wait
    await writer.close()
    assert (tmp_path / "j.jsonl").read_bytes().count(b"\n") == 3


async def test_a_failed_attempt_hands_its_entries_to_the_retry(tmp_path):
    calls = [("agent", _h("agent", "q"), "a1"), ("agent", _h("agent", "q", "a1", "u1"), "a2"),
             ("agent", _h("agent", "q", "a1", "u1", "a2", "u2"), "a3")]
    await _write(tmp_path, "u#0", calls[:2])
    journal = open_journal(tmp_path, {"u#0"})
    first = journal.for_unit("u#0")
    for role, request, text in calls[:2]:
        assert first.replay(role, request).message.content == text
    assert first.replay(*calls[2][:2]) is None
    first.record("agent", calls[2][1], _resp("a3"))
    journal.keep_for_retry(first)                     # the attempt failed after its 3rd call
    second = journal.for_unit("u#0")
    for role, request, text in calls:
        got = second.replay(role, request)
        assert got is not None and got.message.content == text and got.attempts == 0
    assert second.info().calls == 3 and second.info().journaled == 3
    assert journal.for_unit("u#0").info() is None     # handed out once
    await journal.close(all_done=False)


async def test_a_retry_after_a_diverged_replay_keeps_the_prefix_and_the_live_calls(tmp_path):
    old = [("agent", "h0", "a0"), ("agent", "h1", "a1"), ("agent", "h2", "a2")]
    await _write(tmp_path, "u#0", old)
    journal = open_journal(tmp_path, {"u#0"})
    first = journal.for_unit("u#0")
    assert first.replay("agent", "h0").message.content == "a0"
    assert first.replay("agent", "x1") is None and first.mismatch_at == 1
    first.record("agent", "x1", _resp("b1"))
    journal.keep_for_retry(first)
    kept = journal.retries["u#0"]
    assert [(e.i, e.h) for e in kept] == [(0, "h0"), (1, "x1")]
    await journal.close(all_done=False)
    # the same as a resume would read back
    assert [(e.i, e.h) for e in read_journal(tmp_path / JOURNAL_FILE)["u#0"]] == [(0, "h0"),
                                                                               (1, "x1")]


async def test_the_judge_role_counts_tokens_with_its_client_when_it_can():
    """The run's judge client (admitted) passes the context guard's count to its endpoint's
    client, with the role's model; a client that cannot count gives None."""
    class Counting(_FakeClient):
        async def count_tokens(self, messages, *, model=None, timeout_s=60.0):
            self.counted = (len(messages), model)
            return TokenCount(count=7, max_model_len=8192)

    counters, client = Counters(), Counting()
    judge = AdmittedChat(_endpoint("judge", client, counters))
    assert (await judge.count_tokens(_msgs("judge this"), model=None)).count == 7
    assert client.counted == (1, "m") and client.sent == [] and counters.calls == 0
    assert await AdmittedChat(_endpoint("judge", _FakeClient(), counters)).count_tokens(
        _msgs("x")) is None
