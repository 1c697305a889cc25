"""The corpus' command-line flag cases (`flag`; see corpus.py)."""

from __future__ import annotations

import random

from tests.evaluator.reliability.corpus_base import USAGE, Case

# --------------------------------------------------------------------------- flags


def flag_cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []

    def f(name: str, argv: tuple[str, ...], says: tuple[str, ...], code: int = USAGE,
          files: dict[str, object] | None = None) -> None:
        out.append(Case("flag", name, argv, code, says, files=files or {}))

    run = ("run",)
    for flag in ("--trials", "--limit", "--concurrency", "--seed", "--replicas",
                 "--gpus-per-replica"):
        for value in ("abc", "1.5", "", "0x10", "1e3"):
            f(f"{flag}={value!r}", (*run, flag, value), (flag,))
    for value in ("0", "-3", "100001", "99999999999999", "9223372036854775807",
                  str(2 ** 70), str(rng.randint(100_001, 10 ** 12))):
        f(f"--trials={value}", (*run, "--trials", value), ("--trials",))
    for flag, value in (("--limit", "-1"), ("--concurrency", "0"), ("--concurrency", "-5"),
                        ("--replicas", "0"), ("--replicas", "100000"),
                        ("--gpus-per-replica", "-1")):
        f(f"{flag}={value}", (*run, flag, value), (flag,))
    for flag in ("--agent-url", "--engine-url"):
        for url in ("not a url", "::::", "", "ftp://h", "http://"):
            f(f"{flag}={url!r}", (*run, flag, url), (flag,))
    for flag, value in (("--profile", "bogus"), ("--progress", "loud")):
        f(f"{flag}={value}", (*run, flag, value), (flag,))
    for item in ("noequals", "=1", "trials.x=1", "nope.key=1", "trials=abc", "trials=-1",
                 "agent.sampling.top_p=5", "admission.kv_high=nan", "name=../x",
                 "protocol.finish_marker=", "sandbox.prompt_version=../../etc/passwd",
                 "out=/dev/null/x"):
        f(f"--set {item}", (*run, "--set", item), ("--set",))
    f("--name-separator", (*run, "--name", "a/b"), ("--name",))
    f("--name-nul", (*run, "--name", "a\x00b"), ("--name",))
    f("--out-dev-null", (*run, "--out", "/dev/null/x"), ("--out", "/dev/null"))
    f("--data-missing", (*run, "--data", "/no/such/data"), ("/no/such/data",))
    f("--bench-unknown", (*run, "--bench", "nobench"), ("nobench",))
    f("--subset-unknown", (*run, "--subset", "zzz"), ("zzz",))
    f("--domain-on-sample", (*run, "--domain", "delivery"), ("domain",))
    f("--plugin-missing", (*run, "--plugin", "no_such_plugin_q"), ("no_such_plugin_q",))
    f("--estimate-missing", (*run, "--estimate", "{d}/nope.json"), ("--estimate",))
    f("--estimate-not-json", (*run, "--estimate", "{d}/e.json"), ("--estimate", "{d}/e.json"),
      files={"e.json": "not json"})
    f("--estimate-not-bench", (*run, "--estimate", "{d}/e.json"), ("--estimate",),
      files={"e.json": "[1, 2]"})
    f("--resume-missing", (*run, "--resume", "{d}/norun"), ("{d}/norun",))
    f("--resume-and-config", (*run, "{d}/c.toml", "--resume", "{d}"), ("--resume",),
      files={"c.toml": ""})
    f("unknown-flag", (*run, "--bogus"), ("--bogus",))
    f("unknown-command", ("frobnicate",), ("frobnicate",))
    for value in ("5", "-0.1", "nan", "inf", "x"):
        f(f"report --success-threshold={value}",
          ("report", "{d}", "--success-threshold", value), ("--success-threshold",))
    for value in ("-1", "0", "x"):
        f(f"report --bootstrap={value}", ("report", "{d}", "--bootstrap", value),
          ("--bootstrap",))
    f("report-backend", ("report", "{d}", "--backend", "gpu"), ("--backend",))
    for name, out_dir in (("under-a-file", "/dev/null/x"), ("a-file", "{d}/afile")):
        f(f"report-out-{name}", ("report", "{d}/run", "--out", out_dir), ("--out",),
          files={"__rundir__": "run", "afile": "x"})
    for name, argv in (("url", ("--judge-url", "")), ("model", ("--judge-model", " ")),
                       ("bad-url", ("--judge-url", "not a url")),
                       ("concurrency", ("--concurrency", "0"))):
        f(f"judge-{name}", ("judge", "{d}/run", *argv), (argv[0].split("-")[-1],),
          files={"__rundir__": "run"})
    log = b'{"tool": "\xff"}\nnot json\n' + b"[" * 50_000 + b"\n"
    f("cache-misses-garbage-log", ("cache", "misses", "{d}/m.jsonl", "--out", "{d}/o"),
      ("{d}/m.jsonl", "line 1"), files={"m.jsonl": log})
    f("data-check-missing", ("data", "check", "{d}/none.jsonl"), ("{d}/none.jsonl",))
    f("cache-import-no-out", ("cache", "import", "{d}"), ("--out",))
    run = {"__rundir__": "run"}
    for name, argv, says, extra in (
            ("under-a-file", ("--export", "/dev/null/x"), ("--export", "/dev/null"), {}),
            ("into-the-run", ("--export", "{d}/run"), ("--export", "run directory"), {}),
            ("over-foreign-data", ("--export", "{d}/shared"), ("--export", "data/"),
             {"shared/data/tasks.jsonl": "{}\n"}),
            ("threshold", ("--success-threshold", "5", "--export", "{d}/o"),
             ("--success-threshold",), {}),
            ("port", ("--port", "70000"), ("--port",), {})):
        f(f"view-{name}", ("view", "{d}/run", *argv), says, files={**run, **extra})
    f("view-not-a-run", ("view", "{d}/empty", "--export", "{d}/o"), ("{d}/empty",),
      files={"empty/notes.txt": "x"})
    for name, text in (("not-toml", "this = [ not toml"), ("unknown", "[grid]\nmodels = 3\n"),
                       ("deep", "seed = " + "[" * 3000 + "]" * 3000 + "\n"),
                       ("utf8", b"name = \"\xff\"\n")):
        f(f"sweep-{name}", ("sweep", "{d}/s.toml"), ("{d}/s.toml",), files={"s.toml": text})
    f("sweep-missing", ("sweep", "{d}/none.toml"), ("{d}/none.toml",))
    f("sweep-resume-not-a-sweep", ("sweep", "--resume", "{d}"), ("{d}",))
    f("prompts-show-unknown", ("prompts", "show", "no_such_set_q"), ("no_such_set_q",))
    real = {"real/web_search_cache.json": '{"[1]": "a real answer"}'}
    f("cache-synth-over-a-real-cache", ("cache", "synth", "{d}/real", "--entries", "5"),
      ("{d}/real", "SYNTHETIC"), files=real)
    f("cache-synth-into-a-file", ("cache", "synth", "{d}/afile", "--entries", "5"),
      ("{d}/afile",), files={"afile": "x"})
    for value in ("0", "-5"):
        f(f"cache-synth-entries={value}", ("cache", "synth", "{d}/new", "--entries", value),
          ("--entries",))
    for name, text in (("missing", None), ("not-json", "{"), ("object", '{"a": 1}'),
                       ("no-names", '[{"function": {}}]')):
        files = {} if text is None else {"s.json": text}
        f(f"cache-synth-schemas-{name}", ("cache", "synth", "{d}/new", "--entries", "5",
                                          "--schemas", "{d}/s.json"), ("{d}/s.json",),
          files=files)
    f("cache-misses-no-log", ("cache", "misses", "{d}/nolog.jsonl", "--out", "{d}/o"),
      ("{d}/nolog.jsonl",))
    f("cache-index-no-store", ("cache", "index", "{d}/no.store"), ("{d}/no.store",))
    f("cache-index-not-a-store", ("cache", "index", "{d}/x.txt"), ("{d}/x.txt",),
      files={"x.txt": "not a store"})
    for flag, value in (("--batch", "0"), ("--min-recall", "5"), ("--min-recall", "nan"),
                        ("--recall-sample", "0"), ("--ivf-threshold", "-1")):
        f(f"cache-index{flag}={value}", ("cache", "index", "{d}/no.store", flag, value), (flag,))
    f("cache-import-not-dir", ("cache", "import", "{d}/nodir", "--out", "{d}/s.store"),
      ("{d}/nodir",))
    return out
