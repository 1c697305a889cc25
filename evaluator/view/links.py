"""Links into the viewer from other pages (the HTML report's rows).

The viewer's routes live in the URL fragment: `#/list?run=LABEL&f.subset=...` (the episode
list, any column filter `f.<column>`, `=x` for an exact match), `#/ep?run=LABEL&key=UNIT_KEY`
(one episode), `#/diff?a_run=&a_key=&b_run=&b_key=` (side by side). The report links to
`view/index.html#...` relative to itself: that is where the live server mounts the viewer next
to a run's report (`/runs/LABEL/report.html`), and where `agentsweep view --export
RUN_DIR/view RUN_DIR` puts the static copy.
"""

from __future__ import annotations

from urllib.parse import urlencode

VIEWER_PAGE = "view/index.html"


def viewer_href(route: str, params: dict[str, str], page: str = VIEWER_PAGE) -> str:
    return f"{page}#/{route}?{urlencode(params)}"


def report_row_href(headers: list[str], row: list[str]) -> str | None:
    """The viewer link for one report table row with a `run` column: the unit when the row
    names one, else the run's list filtered to the row's task and subset."""
    cells = dict(zip(headers, row, strict=False))
    run = cells.get("run")
    if not run:
        return None
    if cells.get("unit"):
        return viewer_href("ep", {"run": run, "key": cells["unit"]})
    params = {"run": run}
    task = cells.get("task", "")
    if task.count("/") >= 2:
        _, subset, task_id = task.split("/", 2)
        params.update({"f.subset": f"={subset}", "f.task": f"={task_id}"})
    elif task:
        params["f.task"] = f"={task}"
    subset = cells.get("subset", "")  # "benchmark/subset" or "all"
    if subset and subset != "all" and "f.subset" not in params:
        bench, _, sub = subset.rpartition("/")
        params["f.subset"] = f"={sub}"
        if bench:
            params["f.benchmark"] = f"={bench}"
    return viewer_href("list", params)
