"""`agentsweep view --export DIR`: a static, self-contained copy of the viewer for sharing.

    DIR/index.html, app.js, episode.js, app.css      the same page as the server's
    DIR/data/runs.js                                 runs, progress and every list row
    DIR/data/<n>/<chunk>.js                          episode documents, CHUNK per file

Data files are scripts (`AGENTSWEEP_STATIC = ...`, `AGENTSWEEP_CHUNK(...)`) because a page
opened from disk may not fetch() other files; the page filters, sorts and pages in the
browser and loads an episode's chunk when it is opened. Nothing refers to the internet. A
report's rows link to `view/index.html#...`, so exporting into `RUN_DIR/view` makes the links
of `RUN_DIR/report.html` work from disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

from evaluator.view.server import STATIC_FILES, Viewer, static_text

CHUNK = 100
STATIC_MARK = "<!--static-data-->"
STATIC_CSP = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
              "script-src 'self' file:; style-src 'self' file:; img-src data:\">")


def _script_json(data: Any) -> bytes:
    """JSON as a JavaScript expression. JSON is valid JavaScript, and these are external
    script files, so markup-looking text stays inert; U+2028/2029 escaped for old engines."""
    return (msgspec.json.encode(data).replace("\u2028".encode(), b"\\u2028")
            .replace("\u2029".encode(), b"\\u2029"))


def export_problem(out_dir: Path, run_dirs: list[Path] | tuple[Path, ...] = ()) -> str:
    """Why `out_dir` cannot take an export ("" = it can): a file on its path, a run directory
    being exported, or a `data/` that an earlier export did not write (it would be deleted:
    `--export ../shared` must not remove the benchmark data)."""
    out_dir = Path(out_dir)
    for parent in (out_dir, *out_dir.parents):
        if parent.exists():
            if not parent.is_dir():
                return f"--export {out_dir}: {parent} is not a directory"
            break
    if out_dir.exists() and any(out_dir.resolve() == Path(d).resolve() for d in run_dirs):
        return f"--export {out_dir}: is a run directory being exported; name another directory"
    data = out_dir / "data"
    if data.exists() and not _is_export(out_dir):
        return (f"--export {out_dir}: holds a data/ that is not an agentsweep view export; "
                "refusing to replace it (name an empty or new directory)")
    return ""


def _is_export(out_dir: Path) -> bool:
    index = out_dir / "index.html"
    try:
        with open(index, "rb") as f:
            return index.is_file() and b"<title>agentsweep view</title>" in f.read(4096)
    except OSError:
        return False


def export_static(viewer: Viewer, out_dir: Path) -> Path:
    """Write the static viewer for all of `viewer`'s runs into `out_dir`; return index.html."""
    out_dir = Path(out_dir)
    data = out_dir / "data"
    problem = export_problem(out_dir)
    if problem:
        raise ValueError(problem)
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    runs = viewer.runs()
    columns: list[str] = []
    tables = {}
    for n, (run, view) in enumerate(zip(runs, viewer.views, strict=True)):
        run["dir"] = Path(run["dir"]).name  # the sharer's paths stay home
        run["data"] = n
        run["report"] = False
        positions = view.query()
        rows = view.rows(positions)
        columns = list(rows[0]) if rows else columns
        tables[run["run"]] = [[r[c] for c in columns] + [k // CHUNK]
                              for k, r in enumerate(rows)]
        run_data = data / str(n)
        run_data.mkdir()
        for start in range(0, len(positions), CHUNK):
            docs = {view.unit_key(int(i)): viewer.payload(view, int(i))
                    for i in positions[start:start + CHUNK]}
            (run_data / f"{start // CHUNK}.js").write_bytes(
                b"AGENTSWEEP_CHUNK(" + str(n).encode() + b"," + str(start // CHUNK).encode()
                + b"," + _script_json(docs) + b");\n")
    doc = {"runs": runs, "columns": [*columns, "chunk"], "rows": tables}
    (data / "runs.js").write_bytes(b"window.AGENTSWEEP_STATIC=" + _script_json(doc) + b";\n")
    for name in STATIC_FILES:
        text = static_text(name)
        if name == "index.html":
            text = text.replace(STATIC_MARK, STATIC_CSP + '\n<script src="data/runs.js"></script>')
        (out_dir / name).write_text(text, encoding="utf-8")
    return out_dir / "index.html"
