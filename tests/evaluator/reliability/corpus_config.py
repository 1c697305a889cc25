"""The corpus' run-config cases (`config`): TOML run configs with wrong types of every field,
values outside every bound, NaN/inf, paths, URLs, names, nesting and size (see corpus.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from tests.evaluator.reliability.corpus_base import FIFO, USAGE, Case

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
