"""The HTML report in a real headless Chromium: renders, plots present, no script errors,
and trajectory text that looks like markup is shown, never run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evaluator.report import build_report, load_run, write_report
from tests.evaluator.report_fixtures import write_run_dir

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("AGENTSWEEP_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))

PWN = "<img src=x onerror=\"document.body.dataset.pwned='img'\">" \
      "<script>document.body.dataset.pwned='script'</script>"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (apt-get install -y chromium)")


def dump_dom(page: Path, profile: Path) -> str:
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
        "--dump-dom", page.resolve().as_uri(),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def screenshot(page: Path, profile: Path, name: str, height: int = 2400) -> Path:
    """A PNG of the page as headless Chromium draws it, kept in build/test-artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / name
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", "--hide-scrollbars",
        f"--window-size=1280,{height}", f"--screenshot={out}", page.resolve().as_uri(),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and out.stat().st_size > 10_000, proc.stderr[-2000:]
    return out


def _body_attrs(dom: str) -> dict[str, str]:
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:500]
    return dict(re.findall(r'data-([\w-]+)="([^"]*)"', m.group(1)))


def test_report_renders_without_script_errors(tmp_path: Path) -> None:
    a = write_run_dir(tmp_path / "a", f"run{PWN}", 8, 3, p=0.3, seed=1, evil=True)
    b = write_run_dir(tmp_path / "b", "run-b", 8, 3, p=0.7, seed=2)
    # a task id carrying markup that would act if it were not escaped
    for name in ("episodes.jsonl", "judgements.jsonl"):
        path = a / name
        path.write_text(path.read_text().replace("t1", "t1" + PWN.replace('"', '\\"')))
    report = build_report([load_run(a, use_scoring=False), load_run(b, use_scoring=False)],
                          n_boot=100, backend="numpy")
    page = write_report(report, tmp_path / "out")["html"]
    dom = dump_dom(page, tmp_path / "profile")
    attrs = _body_attrs(dom)
    assert attrs.get("ok") == "1"
    assert "errors" not in attrs, attrs.get("errors")
    assert "pwned" not in attrs
    n_svg = len(re.findall(r'<svg class="plot"', dom))
    assert n_svg >= 10 and attrs.get("plots") == str(n_svg)
    for kind in ("curve-pass@k", "curve-pass^k", "curve-avg@k", "distribution", "tool-errors",
                 "subset-mean"):
        assert f'data-plot="{kind}"' in dom
    assert "<polyline" in dom and "<polygon" in dom  # curves and their CI bands drawn
    assert "t1&lt;img src=x" in dom  # shown as text
    # the paired comparison of run-b with the first run: its table, caveats and plot
    assert 'data-plot="paired-diff"' in dom and '<h2 id="paired">run-b vs run' in dom
    assert "Δ (run − baseline)" in dom and 'class="hline"' in dom
    print("screenshot:", screenshot(page, tmp_path / "profile2", "report-compare.png"))


def test_loud_warnings_and_axes(tmp_path: Path) -> None:
    """A run with most units' judgements failed warns at the top of the page; axes of rates
    stop at 1 and tick labels carry no e-notation."""
    a = write_run_dir(tmp_path / "a", "flaky", 12, 3, p=0.4, seed=3, judge_errors=27,
                      unjudged=0)
    b = write_run_dir(tmp_path / "b", "steady", 10, 3, p=0.7, seed=3)
    report = build_report([load_run(a, use_scoring=False), load_run(b, use_scoring=False)],
                          n_boot=100, n_perm=200, backend="numpy")
    page = write_report(report, tmp_path / "out")["html"]
    dom = dump_dom(page, tmp_path / "profile")
    assert _body_attrs(dom).get("ok") == "1"
    warn = re.findall(r'<p class="warn">([^<]*)</p>', dom)
    assert warn[0].startswith("WARNING: flaky all: the score is from 9 of 36 units")
    assert any("the runs do not share every task" in w for w in warn)
    ticks = re.findall(r'class="tick">([^<]*)</text>', dom)
    assert ticks and not any("e+" in t or "e-" in t for t in ticks)
    rates = re.search(r'data-plot="tool-errors".*?</svg>', dom, re.DOTALL).group(0)
    y = re.findall(r'text-anchor="end" class="tick">([^<]*)<', rates)
    assert float(y[-1]) <= 1.0
    print("screenshot:", screenshot(page, tmp_path / "profile2", "report-warnings.png", 1400))


def test_error_hook_catches_script_errors(tmp_path: Path) -> None:
    """The check above can fail: a page whose script throws is reported through the hook."""
    b = write_run_dir(tmp_path / "b", "run-b", 3, 2)
    page = write_report(build_report([load_run(b, use_scoring=False)], n_boot=20,
                                     backend="numpy"), tmp_path / "out")["html"]
    broken = page.read_text().replace("</body>", "<script>undefinedFunction();</script></body>")
    page.write_text(broken)
    attrs = _body_attrs(dump_dom(page, tmp_path / "profile"))
    assert "undefinedFunction" in attrs.get("errors", "")
