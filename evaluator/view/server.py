"""The viewer's HTTP side: one aiohttp app over the opened runs, JSON endpoints and the page.

    GET /                      the single-page viewer (static/index.html, app.js, ...)
    GET /api/runs              runs: label, directory, row count, generation, progress figures
    GET /api/list              ?run=&sort=&desc=&page=&per=&failed=&q=&f.<column>=
                               (+ the score summary of the matching rows)
    GET /api/episode           ?run=&key=   the record, its judgements and failures, how its
                               score comes about, navigation; a running unit's journaled
                               responses
    GET /api/diff              ?a_run=&a_key=&b_run=&b_key=   two episodes side by side
    GET /runs/<run>/report.html   the run's own report (its rows link to view/index.html#...)

Everything is read-only. Responses carry a Content-Security-Policy that allows nothing from
other origins and no inline script, and requests naming another Host are refused (DNS
rebinding) unless the server was bound to a non-loopback address on purpose.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from evaluator.view.query import QueryError, RunView
from evaluator.view.rules import ViewRules
from evaluator.view.stats import score_detail, summary

STATIC_FILES = ("index.html", "app.js", "episode.js", "app.css")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
REPORT_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data:; base-uri 'none'; form-action 'none'")
MAX_PER_PAGE = 500
ALLOWED_HOSTS = web.AppKey("allowed_hosts", set)
_ENC = msgspec.json.Encoder()


def static_text(name: str) -> str:
    return resources.files("evaluator.view").joinpath("static", name).read_text("utf-8")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _threshold(run_dir: Path) -> float | None:
    try:
        judge = tomllib.loads((run_dir / "config.toml").read_text()).get("judge")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    value = judge.get("success_threshold") if isinstance(judge, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def _load_plugins(manifest: dict[str, Any]) -> None:
    """The benchmarks the run's config names, so that its judges are known to the list."""
    resolved = manifest.get("resolved_config")
    plugins = resolved.get("plugins") if isinstance(resolved, dict) else None
    if isinstance(plugins, list) and plugins:
        from evaluator import benchmarks

        benchmarks.load_plugins(str(p) for p in plugins)


def open_runs(run_dirs: list[Path], *, success_threshold: float | None = None,
              persist: bool = True) -> list[RunView]:
    """A RunView per directory; labels as the report makes them (manifest label / run_name /
    directory name, duplicates numbered) so the report's links find their run."""
    views: list[RunView] = []
    seen: dict[str, int] = {}
    rules: ViewRules | None = None   # the first run's (saved or from the registry), shared
    for d in run_dirs:
        d = Path(d)
        manifest = _read_json(d / "manifest.json")
        _load_plugins(manifest)
        label = str(manifest.get("label") or manifest.get("run_name") or d.resolve().name)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label} ({seen[label]})"
        total = None
        if isinstance(manifest.get("n_tasks"), int) and isinstance(manifest.get("trials"), int):
            total = manifest["n_tasks"] * manifest["trials"]
        threshold = success_threshold if success_threshold is not None else _threshold(d)
        view = RunView(label, d, label, threshold=0.75 if threshold is None else threshold,
                       total=total, persist=persist, rules=rules)
        rules = view.rules
        views.append(view)
    return views


class Viewer:
    """The opened runs and the JSON documents the page asks for (also used by the export)."""

    def __init__(self, views: list[RunView]) -> None:
        self.views = views
        self.by_rid = {v.rid: v for v in views}
        self.listed = False  # a list page was served (the rules check waits for it)

    def view(self, rid: str | None) -> RunView:
        if not rid and self.views:
            return self.views[0]
        if rid not in self.by_rid:
            raise web.HTTPNotFound(text=f"no run {rid!r}")
        return self.by_rid[rid]

    def runs(self) -> list[dict[str, Any]]:
        out = []
        for v in self.views:
            v.refresh()
            out.append({"run": v.rid, "label": v.label, "dir": str(v.run_dir),
                        "rows": len(v.v["key"]), "generation": v.generation,
                        "threshold": v.threshold, "progress": v.progress(),
                        "report": (v.run_dir / "report.html").exists(),
                        "index": {"bad_lines": v.index.bad,
                                  "persist_error": v.index.persist_error}})
        return out

    def listing(self, params: dict[str, str]) -> dict[str, Any]:
        v = self.view(params.get("run"))
        v.refresh()
        try:
            page = max(0, int(params.get("page", "0") or 0))
            per = min(MAX_PER_PAGE, max(1, int(params.get("per", "50") or 50)))
        except ValueError:
            raise QueryError("page and per must be integers") from None
        filters = {k[2:]: val for k, val in params.items() if k.startswith("f.")}
        positions = v.query(filters=filters, failed=params.get("failed") in ("1", "true"),
                            q=params.get("q", ""), sort=params.get("sort", "#"),
                            desc=params.get("desc") in ("1", "true"))
        total = len(positions)
        self.listed = True
        return {"run": v.rid, "generation": v.generation, "total": total,
                "all": len(v.v["key"]), "page": page, "per": per,
                "pages": max(1, -(-total // per)), "summary": summary(v, positions),
                "rows": v.rows(positions[page * per:(page + 1) * per])}

    def episode(self, rid: str | None, key: str) -> dict[str, Any]:
        v = self.view(rid)
        v.refresh()
        i = v.find(key)
        if i is None:
            raise web.HTTPNotFound(text=f"no unit {key!r} in run {v.rid!r}")
        return self.payload(v, i)

    def payload(self, v: RunView, i: int) -> dict[str, Any]:
        h, src, idx = v.v["key"][i], int(v.v["src"][i]), int(v.v["idx"][i])

        def raws(source: str, by: str = "key", value: int = h) -> list[msgspec.Raw]:
            return [msgspec.Raw(v.read(source, int(r))) for r in v.where(source, by, value)]

        def brief(view: RunView, j: int) -> dict[str, Any]:
            r = view.row(j)
            return {k: r[k] for k in ("run", "key", "trial", "termination", "score", "verdict",
                                      "failed")}

        task = v.index.strings[v.v["utask"][i]]
        others = []
        for o in self.views:
            if o is not v:
                o.refresh()
                trials = [brief(o, j) for j in o.positions_of_task(task)]
                if trials:
                    others.append({"run": o.rid, "trials": trials})
        return {
            "run": v.rid, "row": v.row(i), "threshold": v.threshold,
            "record": msgspec.Raw(v.read("episodes", idx)) if src == 0 else None,
            "judgements": raws("judgements", "thash", v.v["thash"][i]) or raws("judgements"),
            "failures": raws("failures"), "score_detail": score_detail(v, i),
            "journal": raws("journal") if src == 2 else [],
            "trials": [brief(v, j) for j in v.trials_of(i)], "other_runs": others,
        }

    async def check_rules(self, wait_s: float = 5.0) -> None:
        """The tables opened from their saved copies were built with the rules saved with
        them: compare with the registry's (imported off the event loop, once the first list
        page was served or after `wait_s`, so the imports do not slow that page) and rebuild
        those that differ."""
        import asyncio

        for _ in range(int(wait_s / 0.05)):
            if self.listed:
                break
            await asyncio.sleep(0.05)
        fresh = await asyncio.to_thread(ViewRules.from_registry)
        for v in self.views:
            v.check_rules(fresh)

    def diff(self, params: dict[str, str]) -> dict[str, Any]:
        try:
            a = self.episode(params.get("a_run"), params["a_key"])
            b = self.episode(params.get("b_run"), params["b_key"])
        except KeyError:
            raise QueryError("diff needs a_key and b_key (and a_run / b_run)") from None
        return {"a": a, "b": b}


def _json(data: Any) -> web.Response:
    return web.Response(body=_ENC.encode(data), content_type="application/json")


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    allowed = request.app[ALLOWED_HOSTS]
    if allowed and request.host not in allowed:
        return web.Response(status=403, text="unexpected Host header")
    try:
        resp = await handler(request)
    except QueryError as exc:
        resp = web.Response(status=400, text=str(exc))
    except web.HTTPException as exc:  # 404s get the same headers
        resp = web.Response(status=exc.status, text=exc.text or exc.reason)
    resp.headers.setdefault("Content-Security-Policy", CSP)
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["Cache-Control"] = "no-store"
    return resp


def make_app(viewer: Viewer, *, allowed_hosts: set[str] | None = None) -> web.Application:
    """The aiohttp app; `allowed_hosts` (host:port strings) limits the Host header."""
    app = web.Application(middlewares=[_guard])
    app[ALLOWED_HOSTS] = allowed_hosts if allowed_hosts is not None else set()
    types = {"html": "text/html", "js": "text/javascript", "css": "text/css"}

    async def page(request: web.Request) -> web.Response:
        name = request.match_info.get("name") or "index.html"
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.Response(text=static_text(name), content_type=types[name.rsplit(".", 1)[1]],
                            charset="utf-8")

    async def runs(request: web.Request) -> web.Response:
        return _json(viewer.runs())

    async def listing(request: web.Request) -> web.Response:
        return _json(viewer.listing(dict(request.query)))

    async def episode(request: web.Request) -> web.Response:
        if "key" not in request.query:
            raise QueryError("episode needs ?key=")
        return _json(viewer.episode(request.query.get("run"), request.query["key"]))

    async def diff(request: web.Request) -> web.Response:
        return _json(viewer.diff(dict(request.query)))

    async def report(request: web.Request) -> web.Response:
        path = viewer.view(request.match_info["run"]).run_dir / "report.html"
        if not path.exists():
            raise web.HTTPNotFound(text="no report.html in this run (agentsweep report RUN_DIR)")
        resp = web.Response(text=path.read_text("utf-8"), content_type="text/html")
        resp.headers["Content-Security-Policy"] = REPORT_CSP
        return resp

    app.router.add_get("/", page)
    app.router.add_get("/api/runs", runs)
    app.router.add_get("/api/list", listing)
    app.router.add_get("/api/episode", episode)
    app.router.add_get("/api/diff", diff)
    app.router.add_get("/runs/{run}/report.html", report)
    app.router.add_get("/runs/{run}/view/", page)
    app.router.add_get("/runs/{run}/view/{name}", page)
    app.router.add_get("/{name}", page)
    return app
