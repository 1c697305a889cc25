"""The HTML report in a real headless Chromium: renders, plots present, no script errors,
and trajectory text that looks like markup is shown, never run."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evaluator.report import build_report, load_run, write_report
from tests.evaluator.report_fixtures import write_run_dir

pytestmark = pytest.mark.browser

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


def test_error_hook_catches_script_errors(tmp_path: Path) -> None:
    """The check above can fail: a page whose script throws is reported through the hook."""
    b = write_run_dir(tmp_path / "b", "run-b", 3, 2)
    page = write_report(build_report([load_run(b, use_scoring=False)], n_boot=20,
                                     backend="numpy"), tmp_path / "out")["html"]
    broken = page.read_text().replace("</body>", "<script>undefinedFunction();</script></body>")
    page.write_text(broken)
    attrs = _body_attrs(dump_dom(page, tmp_path / "profile"))
    assert "undefinedFunction" in attrs.get("errors", "")
