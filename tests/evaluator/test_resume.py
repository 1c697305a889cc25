"""Resume: finished units are skipped, torn lines repaired, nothing duplicated or lost."""

from __future__ import annotations

from collections import Counter

import pytest

from evaluator.run.manifest import read_manifest
from evaluator.run.results import EPISODES_FILE, iter_records
from evaluator.run.sweep import RunRequest, SweepError, run_sweep

FAKE = "tests.evaluator.run_fakes:one_call_episode"


@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as s:
        yield s


def _request(stub, out, **kw) -> RunRequest:
    overrides = [("engine.url", stub.url, "--engine-url"), ("out", str(out), "--out"),
                 ("name", "r1", "--name"), ("trials", 2, "--trials"),
                 ("protocol.entry", FAKE, "--set"), ("progress", "off", "--set")]
    return RunRequest(overrides=overrides + kw.pop("extra", []), **kw)


async def test_resume_skips_finished_units_without_duplicates(stub, tmp_path):
    result = await run_sweep(_request(stub, tmp_path))
    assert result.exit_code == 0
    run_dir = tmp_path / "r1"
    keys = [r.unit.key for r in iter_records(run_dir)]
    assert len(keys) == 24 and len(set(keys)) == 24  # 12 sample tasks x 2 trials

    # simulate a crash: drop the last 5 records and leave a torn line
    path = run_dir / EPISODES_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-5]) + lines[-5][:40])
    result = await run_sweep(RunRequest(resume=str(run_dir), overrides=[("progress", "off", "x")]))
    assert result.exit_code == 0
    counts = Counter(r.unit.key for r in iter_records(run_dir))
    assert set(counts) == set(keys) and set(counts.values()) == {1}
    assert "5 this session, 19 resumed" in result.summary

    result = await run_sweep(RunRequest(resume=str(run_dir)))  # nothing left to do
    assert Counter(r.unit.key for r in iter_records(run_dir)) == counts
    manifest = read_manifest(run_dir)
    assert [e.finished_before for e in manifest.resumes] == [19, 24]
    assert manifest.run == "r1" and manifest.n_tasks == 12


async def test_new_run_refuses_an_existing_run_dir(stub, tmp_path):
    await run_sweep(_request(stub, tmp_path, extra=[("data.limit", 1, "--limit")]))
    with pytest.raises(SweepError, match="--resume"):
        await run_sweep(_request(stub, tmp_path))


async def test_resume_of_a_non_run_dir_is_a_clear_error(tmp_path):
    with pytest.raises(SweepError, match="manifest"):
        await run_sweep(RunRequest(resume=str(tmp_path)))
