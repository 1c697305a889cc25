"""A seeded corpus of bad inputs to the `agentsweep` CLI, one `Case` each: the files it needs
(written under a fresh directory), the command line, and what must come out: the exit code and
the words of the single stderr line (the file, line, field or flag it names).

Kinds: `config` (TOML run configs: wrong types of every field, values outside every bound,
NaN/inf, paths, URLs, names, nesting, size), `flag` (command-line flags), `task` (task files),
`schema` (tool-schema files), `cache` (release-layout cache directories for `cache import`),
`rundir` (run directories for `report`, `judge` and `run --resume`). Every case fails before a
model engine would start (the harness turns an engine start into a failure). Where an input is
deliberately accepted, the case says so in `accepted` (the reason; the docs say it too) and runs
`agentsweep run --check`, which validates everything a run would and starts nothing.

`{d}` in argv, expected words and file contents is the case's directory. `build(seed)` is
deterministic: the same seed gives the same corpus.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "bench_data" / "samples" / "travel_sample"

FIFO = object()  # a file content that means: make a named pipe here
# the seeded random mutations per kind are multiplied by this (a deeper soak, not for CI):
# AGENTSWEEP_CORPUS_SCALE=20 pytest tests/evaluator/reliability
SCALE = max(1, int(os.environ.get("AGENTSWEEP_CORPUS_SCALE", "1")))
USAGE, FAILED = 2, 1


@dataclass(frozen=True)
class Case:
    kind: str
    name: str
    argv: tuple[str, ...]
    code: int
    says: tuple[str, ...]  # substrings of the one stderr line (or of stdout, see `where`)
    files: dict[str, object] = field(default_factory=dict)  # rel path -> str | bytes | FIFO
    copies: tuple[tuple[str, str], ...] = ()  # (source under REPO, rel destination)
    where: str = "err"  # "err": the stderr line names it; "out": `data check`'s issue lines
    accepted: str = ""  # a deliberate acceptance: the documented reason
    # a bound on a hang, not on speed: a command here takes well under a second, but a CI host
    # has stalled one for 42 s (the machine shared with the engine session and other jobs)
    timeout_s: float = 180.0

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


# --------------------------------------------------------------------------- run configs

# the run-config fields and the bounds validation enforces (docs/config.md states each):
# dotted key -> (type, lowest valid, highest valid, exclusive low) ; None = no bound
INT, FLOAT, STR, BOOL, LIST, LIT, DICT, OPT_INT, OPT_FLOAT = (
    "int", "float", "str", "bool", "list", "literal", "dict", "int?", "float?")
ROLES = ("agent", "user", "tool_simulator")
FIELDS: dict[str, tuple[str, float | None, float | None, bool]] = {
    "profile": (LIT, None, None, False),
    "prompts": (STR, None, None, False),
    "plugins": (LIST, None, None, False),
    "name": (STR, None, None, False),
    "out": (STR, None, None, False),
    "trials": (INT, 1, 100_000, False),
    "seed": (INT, None, None, False),
    "concurrency": (INT, 1, None, False),
    "shutdown_grace_s": (FLOAT, 0.0, None, False),
    "fsync": (BOOL, None, None, False),
    "progress": (LIT, None, None, False),
    "data.dataset": (STR, None, None, False),
    "data.benchmark": (STR, None, None, False),
    "data.subsets": (LIST, None, None, False),
    "data.domains": (LIST, None, None, False),
    "data.limit": (INT, 0, None, False),
    "data.data_dir": (STR, None, None, False),
    "data.skip_bad": (BOOL, None, None, False),
    "engine.url": (STR, None, None, False),
    "engine.model": (STR, None, None, False),
    "engine.device": (LIT, None, None, False),
    "engine.max_model_len": (INT, 1, None, False),
    "engine.cpu_kv_cache_gb": (FLOAT, 0.0, None, True),
    "engine.tensor_parallel_size": (INT, 1, None, False),
    "engine.extra_args": (LIST, None, None, False),
    "engine.startup_timeout_s": (FLOAT, 0.0, None, True),
    "engine.replicas": (INT, 1, 1024, False),
    "engine.gpus_per_replica": (INT, 0, None, False),
    **{f"{r}.endpoint.{k}": v for r in ROLES for k, v in {
        "base_url": (STR, None, None, False),
        "model": (STR, None, None, False),
        "timeout_s": (FLOAT, 0.0, None, True),
        "max_retries": (INT, 0, None, False),
        "extra_headers": (DICT, None, None, False),
    }.items()},
    **{f"{r}.sampling.{k}": v for r in ("agent", "user", "judge") for k, v in {
        "temperature": (OPT_FLOAT, 0.0, None, False),
        "top_p": (OPT_FLOAT, 0.0, 1.0, True),
        "max_tokens": (OPT_INT, 1, None, False),
        "seed": (OPT_INT, None, None, False),
        "n": (OPT_INT, 1, None, False),
        "stop": (LIST, None, None, False),
    }.items()},
    **{f"{r}.replicas": (LIST, None, None, False) for r in ROLES},
    **{f"{r}.routing": (DICT, None, None, False) for r in (*ROLES, "judge")},
    "judge.endpoints": (LIST, None, None, False),
    "judge.model": (STR, None, None, False),
    "judge.concurrency": (INT, 1, None, False),
    "judge.max_attempts": (INT, 1, None, False),
    "judge.retry_temperature": (FLOAT, 0.0, None, False),
    "judge.retry_temperature_from": (INT, 1, None, False),
    "judge.meta_retry_temperature": (OPT_FLOAT, 0.0, None, False),
    "judge.infra_attempts": (INT, 1, None, False),
    "judge.structured_output": (BOOL, None, None, False),
    "judge.meta_judge": (BOOL, None, None, False),
    "judge.success_threshold": (FLOAT, 0.0, 1.0, False),
    "judge.abstain_tags": (LIST, None, None, False),
    "judge.window_turns": (INT, 1, None, False),
    "judge.window_final_state": (BOOL, None, None, False),
    "judge.rerun": (BOOL, None, None, False),
    "judge.retry_errors": (BOOL, None, None, False),
    "judge.max_transcript_chars": (INT, 0, None, False),
    "judge.context_tokens": (INT, 0, None, False),
    "protocol.max_steps": (INT, 1, None, False),
    "protocol.max_turns": (INT, 1, None, False),
    "protocol.finish_marker": (STR, None, None, False),
    "protocol.abstain_tags": (LIST, None, None, False),
    "protocol.language": (STR, None, None, False),
    "protocol.entry": (STR, None, None, False),
    "protocol.layout": (LIT, None, None, False),
    "protocol.stop_at_abstain_tag": (BOOL, None, None, False),
    "protocol.retry_empty_replies": (BOOL, None, None, False),
    "sandbox.store": (STR, None, None, False),
    "sandbox.simulator": (BOOL, None, None, False),
    "sandbox.top_k": (INT, 1, None, False),
    "sandbox.embedder": (STR, None, None, False),
    "sandbox.prompt_version": (STR, None, None, False),
    "sandbox.live_hook": (STR, None, None, False),
    "sandbox.miss_log": (STR, None, None, False),
    "sandbox.simulated_store": (STR, None, None, False),
    "sandbox.overlay_store": (STR, None, None, False),
    "sandbox.validation": (LIT, None, None, False),
    "sandbox.adcode_table": (STR, None, None, False),
    "sandbox.simulator_max_tokens": (INT, 1, None, False),
    "sandbox.index_backend": (LIT, None, None, False),
    "admission.adaptive": (BOOL, None, None, False),
    "admission.poll_interval_s": (FLOAT, 0.0, None, True),
    "admission.waiting_per_running": (FLOAT, 0.0, None, False),
    "admission.kv_high": (FLOAT, 0.0, 1.0, True),
    "admission.increase": (INT, 1, None, False),
    "admission.send_priority": (BOOL, None, None, False),
    "retry.max_attempts": (INT, 1, None, False),
    "retry.backoff_s": (FLOAT, 0.0, None, False),
    "retry.backoff_cap_s": (FLOAT, 0.0, None, False),
}

# TOML values of the wrong type for a field of each type
WRONG_TYPES: dict[str, list[str]] = {
    INT: ['"8"', "true", "1.5", "[1]", "{ a = 1 }", "1979-05-27"],
    OPT_INT: ['"8"', "false", "2.5", "[2]", "{ a = 1 }"],
    FLOAT: ['"0.5"', "true", "[0.5]", "{ a = 1 }", "1979-05-27T07:32:00Z"],
    OPT_FLOAT: ['"0.5"', "false", "[1.0]", "{ b = 2 }"],
    STR: ["1", "true", "[\"a\"]", "{ a = 1 }", "2.5"],
    BOOL: ['"yes"', "1", "0.0", "[true]", "{ a = true }"],
    LIST: ['"a"', "1", "true", "{ a = 1 }", "[1, 2]", "[[\"a\"]]"],
    LIT: ['"bogus"', '""', "1", "true", "[\"auto\"]"],
    DICT: ['"a"', "1", "[1]", "true"],
}
# lists whose items may be tables (a number is still the wrong type)
LIST_OF_TABLES = {"judge.endpoints", *(f"{r}.replicas" for r in ROLES)}


def _toml_line(key: str, value: str) -> str:
    """A TOML text setting the dotted `key` (its table as a header, the leaf as a key)."""
    table, _, leaf = key.rpartition(".")
    head = f"[{table}]\n" if table else ""
    return f"# corpus\n{head}{leaf} = {value}\n"


def _config_case(name: str, text: str | bytes, says: tuple[str, ...], *, code: int = USAGE,
                 extra: tuple[str, ...] = (), accepted: str = "",
                 files: dict[str, object] | None = None,
                 copies: tuple[tuple[str, str], ...] = ()) -> Case:
    argv = ("run", "{d}/run.toml", *extra)
    if accepted:
        argv = (*argv, "--check")
    return Case("config", name, argv, 0 if accepted else code,
                says if not accepted else (), files={"run.toml": text, **(files or {})},
                copies=copies, accepted=accepted)


def _type_cases(rng: random.Random) -> Iterator[Case]:
    for key, (kind, *_rest) in FIELDS.items():
        values = list(WRONG_TYPES[kind])
        if key in LIST_OF_TABLES:
            values = [v for v in values if v not in ("{ a = 1 }", "[[\"a\"]]")] + ["[1]"]
        for value in values:
            yield _config_case(f"type-{key}={value}", _toml_line(key, value),
                               ("{d}/run.toml", _leaf_named(key)))
    # a random table given as a scalar and a scalar given as a table
    for table in ("data", "engine", "agent", "agent.endpoint", "judge", "protocol", "sandbox",
                  "admission", "retry", "user.sampling"):
        value = rng.choice(['"x"', "1", "true", "[1]"])
        head, _, leaf = table.rpartition(".")
        text = (f"[{head}]\n" if head else "") + f"{leaf} = {value}\n"
        yield _config_case(f"table-as-scalar-{table}", text, ("{d}/run.toml", leaf))


def _leaf_named(key: str) -> str:
    return key


def _number(kind: str, value: float) -> str:
    if kind in (INT, OPT_INT):
        return str(int(value))
    return repr(float(value))


def _bound_cases(rng: random.Random) -> Iterator[Case]:
    for key, (kind, low, high, excl) in FIELDS.items():
        if kind not in (INT, FLOAT, OPT_INT, OPT_FLOAT):
            continue
        bad: list[str] = []
        if low is not None:
            below = [low - 1, low - rng.randint(2, 10**6), -(2 ** 63)]
            if kind in (FLOAT, OPT_FLOAT):
                below = [low - 0.5, low - rng.uniform(1, 1e9), -1e308]
                if excl:
                    below.append(low)
            elif excl:
                below.append(low)
            bad += [_number(kind, v) for v in below]
        if high is not None:
            above = [high + 1, high + rng.randint(2, 10**9), 2 ** 63 - 1]
            if kind in (FLOAT, OPT_FLOAT):
                above = [high + 0.001, high * 5 + rng.uniform(1, 100), 1e308]
            bad += [_number(kind, v) for v in above]
        if kind in (FLOAT, OPT_FLOAT):
            bad += ["nan", "inf", "-inf", "+nan"]
        for value in bad:
            yield _config_case(f"bound-{key}={value}", _toml_line(key, value),
                               ("{d}/run.toml", key))
        if kind in (INT, OPT_INT):  # past TOML's 64-bit integers: a TOML error, line named
            says = ("{d}/run.toml", key) + (("64-bit",) if high is None else ())
            yield _config_case(f"overflow-{key}", _toml_line(key, str(2 ** 64)), says)


def _special_config_cases() -> Iterator[Case]:
    c = _config_case
    # the issue's own examples
    yield c("top_p=5", "[agent.sampling]\ntop_p = 5\n", ("{d}/run.toml:2", "agent.sampling.top_p"))
    yield c("kv_high=5", "[admission]\nkv_high = 5.0\n", ("{d}/run.toml:2", "admission.kv_high"))
    yield c("n=-3", "[user.sampling]\nn = -3\n", ("{d}/run.toml:2", "user.sampling.n"))
    yield c("max_tokens=-1", "[agent.sampling]\nmax_tokens = -1\n",
            ("{d}/run.toml:2", "agent.sampling.max_tokens"))
    yield c("increase=-1", "[admission]\nincrease = -1\n", ("{d}/run.toml:2", "admission.increase"))
    yield c("timeout_s=-1", "[agent.endpoint]\ntimeout_s = -1\n",
            ("{d}/run.toml:2", "agent.endpoint.timeout_s"))
    yield c("trials=99999999999999", "trials = 99999999999999\n", ("{d}/run.toml:1", "trials"))
    yield c("trials=int64max", "trials = 9223372036854775807\n", ("{d}/run.toml:1", "trials"))
    yield c("finish_marker-empty", '[protocol]\nfinish_marker = ""\n',
            ("{d}/run.toml:2", "protocol.finish_marker"))
    yield c("finish_marker-blank", '[protocol]\nfinish_marker = "   "\n',
            ("{d}/run.toml:2", "protocol.finish_marker"))
    for key in ("protocol.unsolvable_tags", "protocol.abstain_tags", "judge.abstain_tags",
                "judge.unsolvable_tags"):
        current = key.replace("unsolvable", "abstain")
        for value in ('[""]', "[]", '["[Unsolved]", ""]', '["  "]'):
            yield c(f"{key}={value}", _toml_line(key, value), ("{d}/run.toml", current))
    for value in ("-0.01", "1.0001", "2", "-1", "nan", "inf"):
        yield c(f"success_threshold={value}", _toml_line("judge.success_threshold", value),
                ("{d}/run.toml:3", "judge.success_threshold"))
    for entry in ("os:getcwd", "os:sep", "json:loads", "nonexistent_mod_xyz:fn", "os",
                  ":fn", "os:", "builtins:print", "os.path:nothing_here", "a:b:c",
                  "tests.evaluator.run_fakes:EpisodeContext"):
        yield c(f"entry={entry}", f'[protocol]\nentry = "{entry}"\n', ("protocol.entry",))
    for version in ("../../etc/passwd", "v1/../../x", "/etc/passwd", "", "v 1", "v2", ".v1",
                    "v1\\u0000"):
        yield c(f"prompt_version={version!r}", f'[sandbox]\nprompt_version = "{version}"\n',
                ("sandbox.prompt_version",))
    for name in ("../x", "a/b", "a\\\\b", "a\\u0000b", "/abs", ".", "..", " lead", "tab\\tx",
                 "x" * 201, "\\u00e9t\\u00e9"):
        yield c(f"name={name[:20]!r}", f'name = "{name}"\n', ("{d}/run.toml:1", "name"))
    for key in [f"{r}.endpoint.base_url" for r in ROLES]:
        for url in ("not a url", "::::", "", "ftp://host/v1", "http://", "http:///v1",
                    "embedded ", "http://exa mple.com/v1", "javascript:alert(1)",
                    "http://host:99999/v1"):
            yield c(f"{key}={url!r}", _toml_line(key, json.dumps(url)), ("{d}/run.toml", key))
    for url in ("not a url", "::::", "ftp://x", "http://", "embedded"):
        yield c(f"engine.url={url!r}", _toml_line("engine.url", json.dumps(url)),
                ("{d}/run.toml", "engine.url"))
    for url in ("not a url", "", "::::"):
        yield c(f"judge.endpoints-url={url!r}",
                f'[[judge.endpoints]]\nbase_url = {json.dumps(url)}\n',
                ("{d}/run.toml", "judge.endpoints"))
        yield c(f"replicas-url={url!r}", f"[agent]\nreplicas = [{json.dumps(url)}]\n",
                ("{d}/run.toml", "agent.replicas"))
    for out in ("/dev/null/x", "/dev/null", "/proc/version/runs", "{d}/afile/runs"):
        yield c(f"out={out}", f'out = "{out}"\n', ("out", out.split("/runs")[0]),
                files={"afile": "I am a file, not a directory\n"})
    yield c("out-empty", 'out = ""\n', ("{d}/run.toml:1", "out"))
    for arg in ("--host", "--host=0.0.0.0", "--port", "--port=1", "--model", "--served-model-name"):
        yield c(f"extra_args={arg}", f'[engine]\nextra_args = ["{arg}", "x"]\n',
                ("{d}/run.toml:2", "engine.extra_args", arg.split("=")[0]))
    yield c("store-missing", '[sandbox]\nstore = "{d}/no/such.store"\n',
            ("sandbox.store", "{d}/no/such.store"))
    yield c("store-not-a-store", '[sandbox]\nstore = "{d}/run.toml"\n', ("sandbox.store",))
    yield c("store-a-directory", '[sandbox]\nstore = "{d}"\n', ("sandbox.store",))
    for hook in ("no_such_module_abc:fn", "os:no_such_fn", "os:sep", "nocolon", ":x"):
        yield c(f"live_hook={hook}", f'[sandbox]\nlive_hook = "{hook}"\n', ("sandbox.live_hook",))
    yield c("adcode-missing", '[sandbox]\nadcode_table = "{d}/no_adcode.txt"\n',
            ("{d}/no_adcode.txt",))
    yield c("miss_log-under-a-file", '[sandbox]\nmiss_log = "{d}/run.toml/x.log"\n',
            ("sandbox.miss_log",))
    yield c("cpu_kv_cache_gb=-1", "[engine]\ncpu_kv_cache_gb = -1.0\n",
            ("{d}/run.toml:2", "engine.cpu_kv_cache_gb"))
    yield c("admission-caps", "[admission]\nmin_cap = 10\ninitial_cap = 5\n", ("{d}/run.toml",
                                                                               "admission"))
    yield c("admission-decrease", "[admission]\ndecrease = 1.0\n",
            ("{d}/run.toml:2", "admission.decrease"))
    yield c("window_overlap", "[judge]\nwindow_turns = 3\nwindow_overlap = 3\n",
            ("{d}/run.toml", "judge.window_overlap"))
    yield c("replicas-with-url", '[engine]\nreplicas = 2\nurl = "http://h:1/v1"\n',
            ("{d}/run.toml", "engine.replicas"))
    yield c("judge-endpoints-empty", "[judge]\nendpoints = []\n", ("{d}/run.toml",
                                                                   "judge.endpoints"))
    yield c("tool_simulator.sampling", "[tool_simulator.sampling]\ntemperature = 0.5\n",
            ("{d}/run.toml", "tool_simulator.sampling"))
    yield c("unknown-key", "[judge]\nconcurency = 2\n", ("{d}/run.toml:2", "judge.concurency"))
    yield c("unknown-table", "[nope]\nx = 1\n", ("{d}/run.toml:1", "nope"))
    yield c("plugins-missing", 'plugins = ["no_such_plugin_xyz"]\n', ("{d}/run.toml",
                                                                      "no_such_plugin_xyz"))
    yield c("dataset-missing", '[data]\ndataset = "{d}/nothing_here"\n', ("data",
                                                                          "{d}/nothing_here"))
    yield c("benchmark-unknown", '[data]\nbenchmark = "nobench"\n', ("data", "nobench"))
    yield c("subset-unknown", '[data]\nsubsets = ["no_such_subset"]\n', ("no_such_subset",))
    yield c("domain-on-sample", '[data]\ndomains = ["delivery"]\n', ("domain",))
    yield c("prompts-missing", 'prompts = "{d}/no_prompts"\n', ("prompts",))
    yield c("both-old-and-new", "[protocol]\nunsolvable_tags = [\"a\"]\nabstain_tags = [\"b\"]\n",
            ("{d}/run.toml", "unsolvable_tags", "abstain_tags"))
    yield c("routing-policy", '[agent.routing]\npolicy = "random"\n', ("{d}/run.toml",
                                                                      "routing.policy"))
    yield c("replica-weight", '[[agent.replicas]]\nbase_url = "http://a:1/v1"\nweight = 0\n',
            ("{d}/run.toml", "weight"))
    yield c("extra_headers-newline",
            '[agent.endpoint.extra_headers]\n"X-A" = "v\\r\\nInjected: 1"\n',
            ("{d}/run.toml", "agent.endpoint.extra_headers"))
    yield c("extra_headers-bad-name", '[agent.endpoint.extra_headers]\n"X A:" = "v"\n',
            ("{d}/run.toml", "agent.endpoint.extra_headers"))
    # syntax, encoding, nesting and size
    yield c("not-toml", "this is = not [ toml\n", ("{d}/run.toml", "invalid TOML"))
    yield c("invalid-utf8", b"name = \"\xff\xfe\"\n", ("{d}/run.toml", "UTF-8"))
    yield c("bom", "\ufefftrials = 1\n", ("{d}/run.toml", "invalid TOML"))
    yield c("nul-byte", b"trials = 1\x00\n", ("{d}/run.toml", "invalid TOML"))
    yield c("duplicate-key", "trials = 1\ntrials = 2\n", ("{d}/run.toml", "invalid TOML"))
    yield c("deep-array", "seed = " + "[" * 5000 + "]" * 5000 + "\n",
            ("{d}/run.toml", "nested too deeply"))
    yield c("deep-inline-table", "seed = " + "{ a = " * 3000 + "1" + " }" * 3000 + "\n",
            ("{d}/run.toml", "nested too deeply"))
    yield c("deep-dotted-key", "a" + ".a" * 5000 + " = 1\n", ("{d}/run.toml", "a"))
    yield c("huge-file", "# " + "x" * (1 << 20) + "\ntrials = 1\n", ("{d}/run.toml", "MiB"))
    yield c("huge-string", 'name = "' + "a" * (500 << 10) + '"\n', ("{d}/run.toml", "name"))
    yield Case("config", "config-is-a-directory", ("run", "{d}/cfg"), USAGE, ("{d}/cfg",),
               files={"cfg/x.toml": ""})
    yield Case("config", "config-is-a-fifo", ("run", "{d}/cfg.toml"), USAGE, ("{d}/cfg.toml",),
               files={"cfg.toml": FIFO})
    # deliberate acceptances (docs/config.md says why)
    yield c("accept-seed-negative", "seed = -3\n", (), accepted="seed: any integer, negative "
            "included (it is hashed into the unit seeds)")
    yield c("accept-concurrency-huge", "concurrency = 9223372036854775807\n", (),
            accepted="concurrency: no upper bound (a semaphore; nothing is allocated per slot)")
    yield c("accept-max_retries-huge", "[agent.endpoint]\nmax_retries = 99999999999999\n", (),
            accepted="max_retries: no upper bound (each request is bounded by timeout_s)")
    yield c("accept-temperature-high", "[agent.sampling]\ntemperature = 50.0\n", (),
            accepted="temperature: no upper bound (the server's own limit applies)")
    yield c("accept-entry-any-async-function", '[protocol]\nentry = "asyncio:sleep"\n', (),
            accepted="protocol.entry: any async function of one argument is taken; what it "
            "does with the EpisodeContext is the plugin's own (a failing one fails its units)")
    yield c("accept-language", '[protocol]\nlanguage = "xx"\n', (),
            accepted="protocol.language: free text (the language name the prompts ask the "
            "replies to be written in)")
    yield c("accept-unicode-finish-marker", '[protocol]\nfinish_marker = "\\u7ed3\\u675f"\n',
            (), accepted="finish_marker: any non-blank text")
    yield c("accept-empty", "", (), accepted="an empty config is the defaults")


# router settings (`[<role>.routing]`, `[judge.routing]`): key -> values outside its bound
ROUTING_BAD: dict[str, tuple[str, ...]] = {
    **{k: ("-1.0",) for k in ("abs_threshold", "rel_threshold", "continuing_slack")},
    **{k: ("0.0", "-2.5") for k in ("tokens_per_unit", "session_idle_s", "chars_per_token",
                                    "poll_interval_s")},
    **{f"admission.{k}": ("0",) for k in ("kv_tokens", "tokens_per_episode", "increase")},
    "admission.kappa": ("0.0",), "admission.kv_high": ("0.0", "1.5"),
    **{f"admission.{k}": ("0.0", "1.0") for k in ("preemption_backoff", "latency_decrease",
                                                  "overload_decrease")},
    "admission.latency_tolerance": ("0.0",), "admission.overload_cooldown_s": ("-1.0",),
    **{f"health.{k}": ("0.0", "-1.0") for k in ("probe_interval_s", "probe_timeout_s")},
    **{f"health.{k}": ("0",) for k in ("probe_failures", "rejoin_probes", "error_threshold")},
    **{f"health.{k}": ("-1",) for k in ("replica_retries", "max_failovers")},
    **{f"health.{k}": ("-0.5",) for k in ("replica_backoff_s", "all_down_wait_s",
                                          "restart_after_s", "restart_backoff_s",
                                          "restart_backoff_cap_s")},
    "admission.min_cap": ("0",), "policy": ('"random"', "3"), "health.nope": ("1",),
}


def _routing_cases(rng: random.Random) -> Iterator[Case]:
    for key, values in ROUTING_BAD.items():
        for value in values:
            role = rng.choice((*ROLES, "judge"))
            full = f"{role}.routing.{key}"
            says = ("{d}/run.toml", f"{role}.routing.{key.split('.')[0]}")
            yield _config_case(f"routing-{full}={value}", _toml_line(full, value), says)


def config_cases(rng: random.Random) -> list[Case]:
    cases = [*_type_cases(rng), *_bound_cases(rng), *_special_config_cases(),
             *_routing_cases(rng)]
    # the config file itself missing is a usage error too
    cases.append(Case("config", "missing-file", ("run", "{d}/nope.toml"), USAGE,
                      ("{d}/nope.toml",)))
    return cases


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


KINDS = {"config": config_cases, "flag": flag_cases, "task": task_cases,
         "schema": schema_cases, "cache": cache_cases, "rundir": rundir_cases}


def build(seed: int = 15) -> list[Case]:
    """The whole corpus, deterministic for a seed."""
    cases = [case for kind, make in KINDS.items()  # one stream per kind: stable when one grows
             for case in make(random.Random(f"{seed}-{kind}"))]
    seen: set[str] = set()
    unique = []
    for case in cases:
        if case.id not in seen:
            seen.add(case.id)
            unique.append(case)
    return unique
