"""The import contracts of `.importlinter` (run by `lint-imports` in scripts/test.sh): the
module-cycle contract type finds a cycle and says where, and the forbidden-import lists name
every package of evaluator/ (a new generic module or benchmark package is covered); and
bench_data, which every benchmark shares, names none."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import grimp

from tests.import_contracts import ModuleCyclesContract, module_cycles

REPO = Path(__file__).resolve().parents[1]


def _graph(imports: list[tuple[str, str, int]]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported, line in imports:
        graph.add_module(importer)
        graph.add_module(imported)
        graph.add_import(importer=importer, imported=imported, line_number=line,
                         line_contents=f"import {imported}")
    return graph


def test_a_cycle_between_modules_breaks_the_contract_and_is_shown_with_its_lines():
    # pkg.a -> pkg.sub.b -> pkg.c -> pkg.a is a cycle; pkg.d -> pkg.a and pkg.c -> other are not
    graph = _graph([("pkg.a", "pkg.sub.b", 3), ("pkg.sub.b", "pkg.c", 7), ("pkg.c", "pkg.a", 11),
                    ("pkg.d", "pkg.a", 1), ("pkg.c", "other.x", 2), ("other.y", "other.x", 5)])
    assert module_cycles(graph, set(graph.modules)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    contract = ModuleCyclesContract("cycles", {}, {})
    check = contract.check(graph, verbose=False)
    assert not check.kept
    [(comp, path)] = check.metadata["cycles"]
    assert comp == ["pkg.a", "pkg.c", "pkg.sub.b"]
    assert path == [("pkg.a", "pkg.sub.b", 3), ("pkg.sub.b", "pkg.c", 7), ("pkg.c", "pkg.a", 11)]
    # only the named root packages are looked at
    other_only = ModuleCyclesContract("cycles", {}, {"containers": ["other"]})
    assert other_only.check(graph, verbose=False).kept


def test_two_separate_cycles_and_a_self_contained_dag():
    graph = _graph([("a.x", "a.y", 1), ("a.y", "a.x", 2), ("b.x", "b.y", 1), ("b.y", "b.z", 1),
                    ("b.z", "b.x", 1), ("c.x", "c.y", 1), ("c.x", "c.z", 1), ("c.y", "c.z", 1)])
    assert module_cycles(graph, set(graph.modules)) == [["a.x", "a.y"], ["b.x", "b.y", "b.z"]]
    dag = _graph([("c.x", "c.y", 1), ("c.x", "c.z", 1), ("c.y", "c.z", 1)])
    assert ModuleCyclesContract("cycles", {}, {}).check(dag, verbose=False).kept


def _contract(name: str) -> dict[str, list[str]]:
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter", encoding="utf-8")
    section = parser[f"importlinter:contract:{name}"]
    return {key: section[key].split() for key in section}


def _children(package: Path) -> set[str]:
    return {p.stem for p in package.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}


def test_the_forbidden_lists_name_every_package_of_evaluator():
    """`generic-names-no-benchmark`: its sources are every module and package of evaluator/
    but the benchmark packages, and its forbidden modules every benchmark package."""
    contract = _contract("generic-names-no-benchmark")
    benchmark_pkgs = {p.name for p in (REPO / "evaluator" / "benchmarks").iterdir()
                      if (p / "__init__.py").is_file()}
    assert {"travelbench", "vitabench"} <= benchmark_pkgs
    hint = "; list it in .importlinter's generic-names-no-benchmark contract"
    forbidden = {f"evaluator.benchmarks.{n}" for n in benchmark_pkgs}
    assert set(contract["forbidden_modules"]) == forbidden, (
        f"benchmark packages: {sorted(forbidden ^ set(contract['forbidden_modules']))}{hint}")
    generic = {f"evaluator.{n}" for n in _children(REPO / "evaluator") - {"benchmarks"}}
    generic |= {f"evaluator.benchmarks.{n}"
                for n in _children(REPO / "evaluator" / "benchmarks") - benchmark_pkgs}
    assert set(contract["source_modules"]) == generic, (
        f"generic modules: {sorted(generic ^ set(contract['source_modules']))}{hint}")
    by_name = set(_contract("registry-loads-by-name")["forbidden_modules"])
    want = {f"evaluator.benchmarks.{n}{tail}" for n in benchmark_pkgs for tail in ("", ".**")}
    assert by_name == want, f"{sorted(by_name ^ want)}; list it in registry-loads-by-name"


def test_bench_data_names_no_benchmark():
    """Each benchmark's loader, payload types and data format live in its package
    (evaluator/benchmarks/<name>/data.py); bench_data keeps what they all share (its built-in
    sample's data files aside)."""
    words = re.compile(r"travelbench|single_turn|multi_turn|unsolvable|vitabench|grouptravel"
                       r"|tripbench")
    offenders = [p.relative_to(REPO).as_posix() for p in sorted((REPO / "bench_data").rglob("*.py"))
                 if words.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
