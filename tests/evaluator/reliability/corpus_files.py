"""The corpus' file cases (see corpus.py): `task` (task files), `schema` (tool-schema files),
`cache` (release-layout cache directories for `cache import`) and `rundir` (run directories for
`report`, `judge` and `run --resume`).
"""

from __future__ import annotations

import json
import random

from tests.evaluator.reliability.corpus_base import FAILED, FIFO, SAMPLE, SCALE, USAGE, Case

# --------------------------------------------------------------------------- task files


def _sample_lines(name: str) -> list[bytes]:
    return (SAMPLE / name).read_bytes().splitlines()


def task_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    lines = _sample_lines("single_turn.jsonl")
    schemas = (SAMPLE / "tool_schemas.json").read_bytes()

    def mutate(name: str, line_no: int, new: bytes | None, says: tuple[str, ...],
               whole: bytes | None = None) -> None:
        body = list(lines)
        if new is not None:
            body[line_no - 1] = new
        data = whole if whole is not None else b"\n".join(body) + b"\n"
        files = {"tb/single_turn.jsonl": data, "tb/tool_schemas.json": schemas}
        out.append(Case("task", f"check-{name}", ("data", "check", "{d}/tb/single_turn.jsonl"),
                        FAILED, says, files=files, where="out"))
        out.append(Case("task", f"run-{name}", ("run", "--data", "{d}/tb"), USAGE,
                        ("data", *says), files=files))

    where = "{d}/tb/single_turn.jsonl"
    first = json.loads(lines[0])
    mutate("invalid-utf8", 2, lines[1][:30] + b"\xff\xfe" + lines[1][30:], (f"{where}:2",))
    mutate("truncated", 3, lines[2][: len(lines[2]) // 2], (f"{where}:3",))
    mutate("not-object", 1, b"[1, 2, 3]", (f"{where}:1",))
    mutate("deep-nesting", 2, b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", (f"{where}:2",))
    mutate("nul", 2, b"\x00" * 10, (f"{where}:2",))
    for key in sorted(first)[:12]:
        value = first[key]
        wrong: object = 12345 if isinstance(value, str) else {"x": [1]}
        if isinstance(value, bool):
            wrong = "yes"
        rec = dict(first, **{key: wrong})
        mutate(f"type-{key}", 1, json.dumps(rec).encode(), (f"{where}:1",))
    for key in ("trace_id", "query", "time"):
        rec = {k: v for k, v in first.items() if k != key}
        mutate(f"missing-{key}", 1, json.dumps(rec).encode(), (f"{where}:1",))
    for i in range(24 * SCALE):  # seeded: random byte flips in a random line
        n = rng.randrange(len(lines))
        raw = bytearray(lines[n])
        pos = rng.randrange(1, len(raw) - 1)
        raw[pos: pos + 3] = bytes(rng.choice(b'{}[]":,\xff\x00') for _ in range(3))
        try:  # the oracle: only a line that is no longer JSON at all is surely bad
            json.loads(bytes(raw))
            continue
        except (ValueError, RecursionError):
            pass
        mutate(f"flip-{i}", n + 1, bytes(raw), (f"{where}",))
    # a whole-file case for `data check`: empty, and blank lines only
    for name, data in (("empty", b""), ("blank", b"\n\n  \n")):
        files = {"tb/single_turn.jsonl": data}
        out.append(Case("task", f"check-{name}", ("data", "check", "{d}/tb/single_turn.jsonl"),
                        USAGE, ("{d}/tb/single_turn.jsonl",), files=files))
        out.append(Case("task", f"run-{name}", ("run", "--data", "{d}/tb/single_turn.jsonl"),
                        USAGE, ("{d}/tb/single_turn.jsonl",), files=files))
    return out


# --------------------------------------------------------------------------- tool schemas


def schema_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    good = json.loads((SAMPLE / "tool_schemas.json").read_text())
    task = (SAMPLE / "single_turn.jsonl").read_bytes()
    path = "{d}/tb/tool_schemas.json"

    def s(name: str, data: bytes, says: tuple[str, ...] = (path,)) -> None:
        files = {"tb/tool_schemas.json": data, "tb/single_turn.jsonl": task}
        out.append(Case("schema", f"check-{name}", ("data", "check", path), FAILED, says,
                        files=files, where="out"))
        out.append(Case("schema", f"run-{name}", ("run", "--data", "{d}/tb"), USAGE,
                        ("data", *says), files=files))

    s("not-json", b"[{]")
    s("empty", b"")
    s("object", b'{"type": "function"}')
    s("invalid-utf8", b'[{"type": "function", "function": {"name": "\xff"}}]')
    s("deep", b"[" * 100_000 + b"]" * 100_000)
    for i in range(len(good)):
        for mutation in ("no-function", "name-int", "params-list", "no-name", "dup"):
            bad = json.loads(json.dumps(good))
            fn = bad[i]["function"]
            if mutation == "no-function":
                del bad[i]["function"]
            elif mutation == "name-int":
                fn["name"] = rng.randint(0, 99)
            elif mutation == "params-list":
                fn["parameters"] = [1, 2]
            elif mutation == "no-name":
                del fn["name"]
            else:
                bad.append(json.loads(json.dumps(bad[i])))
            s(f"{mutation}-{i}", json.dumps(bad, indent=1).encode())
    text = (SAMPLE / "tool_schemas.json").read_bytes()
    for i in range(30 * SCALE):  # seeded: a random cut or byte somewhere in the file
        pos = rng.randrange(1, len(text) - 1)
        bad = text[:pos] if rng.random() < 0.3 else (
            text[:pos] + bytes([rng.choice(b'{}[]":,\xff')]) + text[pos + 1:])
        try:  # the oracle: only a file that is no longer JSON is surely bad
            json.loads(bad)
            continue
        except (ValueError, RecursionError):
            pass
        s(f"random-{i}", bad)
    return out


# --------------------------------------------------------------------------- cache dirs


def _valid_cache(text: str) -> bool:
    """The oracle of a mutated tool-cache file: a JSON object of string values whose keys are
    JSON arrays or objects (the release layout), independent of the importer's code."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict):
        return False
    for key, value in obj.items():
        try:
            parsed = json.loads(key)
        except (ValueError, RecursionError):
            return False
        if not isinstance(value, str) or not isinstance(parsed, (list, dict)):
            return False
    return True


def cache_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    copies = tuple((f"bench_data/samples/travel_sample/cache/{p.name}", f"src/{p.name}")
                   for p in sorted((SAMPLE / "cache").glob("*_cache.json")))
    one = min((SAMPLE / "cache").glob("*_cache.json"))
    good = json.loads(one.read_text())

    def c(name: str, files: dict[str, object], says: tuple[str, ...],
          out_path: str = "{d}/out.store", with_sample: bool = True) -> None:
        out.append(Case("cache", name, ("cache", "import", "{d}/src", "--out", out_path), USAGE,
                        says, files=files, copies=copies if with_sample else ()))

    for key in ("not json at all", "", "   ", "[unclosed", "123", '"a string"', "null",
                "\x00\x01", "{\"params\": ", "[1,"):
        bad = dict(good)
        bad[key] = "value"
        c(f"garbage-key-{key[:10]!r}", {"src/zz_cache.json": json.dumps(bad)},
          ("{d}/src/zz_cache.json", "key"))
    c("value-not-string", {"src/zz_cache.json": json.dumps({next(iter(good)): 5})},
      ("{d}/src/zz_cache.json",))
    c("top-level-list", {"src/zz_cache.json": "[1, 2]"}, ("{d}/src/zz_cache.json",))
    c("invalid-json", {"src/zz_cache.json": '{"a": '}, ("{d}/src/zz_cache.json", "line 1"))
    c("invalid-utf8", {"src/zz_cache.json": b'{"\xff": "x"}'}, ("{d}/src/zz_cache.json",
                                                                 "UTF-8"))
    c("deep", {"src/zz_cache.json": "[" * 100_000 + "]" * 100_000}, ("{d}/src/zz_cache.json",))
    c("file-named-_cache.json", {"src/_cache.json": json.dumps(good)}, ("{d}/src/_cache.json",))
    c("fifo", {"src/x_cache.json": FIFO}, ("{d}/src/x_cache.json",))
    c("directory-named-cache", {"src/y_cache.json/inner": "x"}, ("{d}/src/y_cache.json",))
    c("out-is-source-file", {}, ("--out", "{d}/src/" + one.name),
      out_path="{d}/src/" + one.name)
    c("out-is-source-dir", {}, ("--out", "{d}/src"), out_path="{d}/src")
    c("out-inside-source-as-cache", {}, ("--out",), out_path="{d}/src/new_cache.json")
    c("out-is-a-directory", {"outdir/keep": "x"}, ("--out", "{d}/outdir"),
      out_path="{d}/outdir")
    c("out-under-a-file", {"afile": "x"}, ("--out", "{d}/afile"), out_path="{d}/afile/s.store")
    c("out-is-not-a-store", {"notes.txt": "precious\n"}, ("--out", "{d}/notes.txt"),
      out_path="{d}/notes.txt")
    c("empty-dir", {"src/README": "x"}, ("{d}/src",), with_sample=False)
    for i in range(60 * SCALE):  # seeded: random single-character corruptions of a file
        src = rng.choice(sorted((SAMPLE / "cache").glob("*_cache.json")))
        text = src.read_text()
        pos = rng.randrange(0, len(text))
        bad = text[:pos] + rng.choice(["{", "}", "\"", ",", "\\", "[", ":"]) + text[pos + 1:]
        if rng.random() < 0.3:
            bad = text[:pos]  # cut short
        if not _valid_cache(bad):
            c(f"flip-{i}", {f"src/{src.name}": bad}, ("{d}/src/" + src.name,))
    return out


# --------------------------------------------------------------------------- run directories


def rundir_cases(rng: random.Random) -> list[Case]:
    """Run directories are written by `write_rundir` (tests/evaluator/report_fixtures.py's
    synthetic run) at materialisation; `files` holds the damage to apply on top."""
    out: list[Case] = []
    for fname in ("episodes.jsonl", "judgements.jsonl"):
        for damage in ("garbage", "nul", "truncated-middle", "invalid-utf8"):
            spec = {"__damage__": f"{fname}:{damage}"}
            out.append(Case("rundir", f"report-{fname}-{damage}", ("report", "{d}/run"),
                            FAILED, (f"{{d}}/run/{fname}:2",), files=spec))
            if fname == "episodes.jsonl":
                out.append(Case("rundir", f"resume-{fname}-{damage}",
                                ("run", "--resume", "{d}/run"), USAGE,
                                (f"{{d}}/run/{fname}:2",), files=spec))
            out.append(Case("rundir", f"judge-{fname}-{damage}", ("judge", "{d}/run"),
                            USAGE, (f"{{d}}/run/{fname}:2",), files=spec))
    # seeded: a random middle line of a synthetic run (3 tasks x 2 trials: 6 episode lines),
    # broken at a random point; every command that reads it names that line
    for i in range(36 * SCALE):
        fname = rng.choice(("episodes.jsonl", "judgements.jsonl"))
        line = rng.randint(1, 4)  # never the last line (a torn tail is ignored by design)
        how = rng.choice(("truncated-middle", "bad-byte", "split"))
        spec = {"__damage__": f"{fname}:{how}@{line}@{rng.uniform(0.05, 0.95):.3f}"}
        command, code = rng.choice(((("report", "{d}/run"), FAILED),
                                    (("judge", "{d}/run"), USAGE),
                                    (("run", "--resume", "{d}/run"), USAGE)))
        if command[0] == "run" and fname == "judgements.jsonl":
            command, code = ("report", "{d}/run"), FAILED  # --resume reads no judgements
        out.append(Case("rundir", f"random-{i}-{command[0]}-{fname}-{how}", command, code,
                        (f"{{d}}/run/{fname}:{line}",), files=spec))
    out.append(Case("rundir", "report-no-episodes", ("report", "{d}/empty"), FAILED,
                    ("{d}/empty",), files={"empty/notes.txt": "x"}))
    out.append(Case("rundir", "report-not-a-dir", ("report", "{d}/f"), FAILED, ("{d}/f",),
                    files={"f": "x"}))
    out.append(Case("rundir", "resume-no-episodes", ("run", "--resume", "{d}/empty"), USAGE,
                    ("{d}/empty",), files={"empty/notes.txt": "x"}))
    out.append(Case("rundir", "judge-no-episodes", ("judge", "{d}/empty"), USAGE,
                    ("{d}/empty",), files={"empty/notes.txt": "x"}))
    out.append(Case("rundir", "resume-bad-manifest", ("run", "--resume", "{d}/run"), USAGE,
                    ("{d}/run/manifest.json",), files={"__damage__": "manifest.json:garbage"}))
    out.append(Case("rundir", "resume-bad-config", ("run", "--resume", "{d}/run"), USAGE,
                    ("{d}/run/config.toml",), files={"__damage__": "config.toml:garbage"}))
    out.append(Case("rundir", "repair-not-a-run", ("repair", "{d}/empty"), USAGE,
                    ("{d}/empty",), files={"empty/notes.txt": "x"}))
    return out
