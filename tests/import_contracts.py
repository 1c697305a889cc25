"""An import-linter contract type the built-in ones lack: no import cycle between modules.

`acyclic_siblings` judges packages as wholes (a package and everything under it), which is
the right check below the top of `evaluator/` but not at it: there `evaluator/benchmarks/`
holds both the registry that the run layers ask and the benchmark packages built on those run
layers, so the package reads as a cycle although no module imports its way back. This contract
looks at modules: every import grimp finds (those inside functions and under TYPE_CHECKING
included) is an edge, and a strongly connected set of two or more modules is a broken contract.

Used by `.importlinter` (`contract_types = module_cycles: tests.import_contracts...`).
"""

from __future__ import annotations

from typing import Any

from importlinter import Contract, ContractCheck, fields, output


def module_cycles(graph: Any, modules: set[str]) -> list[list[str]]:
    """The strongly connected sets (two or more modules) of the imports among MODULES, each
    sorted, in name order (Tarjan's algorithm, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & modules)
             for m in sorted(modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found)


def _one_cycle(graph: Any, comp: list[str]) -> list[tuple[str, str, int]]:
    """A shortest path from the set's first module back to itself: (importer, imported, line)."""
    members = set(comp)
    start = comp[0]
    back: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for m in frontier:
            for i in sorted(graph.find_modules_directly_imported_by(m) & members):
                if i == start:
                    path = [(m, i)]
                    while path[0][0] != start:
                        path.insert(0, (back[path[0][0]], path[0][0]))
                    return [(a, b, _line(graph, a, b)) for a, b in path]
                if i not in back:
                    back[i] = m
                    nxt.append(i)
        frontier = nxt
    return []


def _line(graph: Any, importer: str, imported: str) -> int:
    details = graph.get_import_details(importer=importer, imported=imported)
    return details[0]["line_number"] if details else 0


class ModuleCyclesContract(Contract):
    """No import cycle between modules of `containers` (default: every root package)."""

    type_name = "module_cycles"

    containers = fields.SetField(subfield=fields.StringField(), required=False)

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        roots = self.containers or None
        modules = {m for m in graph.modules
                   if roots is None or m.split(".")[0] in roots}  # type: ignore[operator]
        cycles = module_cycles(graph, modules)
        return ContractCheck(kept=not cycles, metadata={
            "cycles": [(comp, _one_cycle(graph, comp)) for comp in cycles]})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for comp, path in check.metadata["cycles"]:
            output.print_error(f"{len(comp)} modules import each other in a circle: "
                               f"{', '.join(comp)}", bold=True)
            for importer, imported, line in path:
                output.print_error(f"  {importer}:{line} -> {imported}", bold=False)
            output.new_line()
