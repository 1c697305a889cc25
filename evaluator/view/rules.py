"""What the episode list needs of the registered benchmarks (`query.RunView`)."""

from __future__ import annotations


class ViewRules:
    """What the list needs of the registered benchmarks: normal terminations, audit kinds,
    kinds shown weighted, pass lines per kind."""

    def __init__(self, ok_terminations: tuple[str, ...], audits: tuple[str, ...],
                 weighted: tuple[str, ...], thresholds: dict[str, float]) -> None:
        self.ok_terminations, self.audits = ok_terminations, audits
        self.weighted, self.thresholds = weighted, thresholds

    @classmethod
    def from_registry(cls) -> ViewRules:
        from evaluator import benchmarks

        ok: dict[str, None] = {"answer": None}
        audits: dict[str, None] = {}
        weighted: dict[str, None] = {}
        thresholds: dict[str, float] = {}
        for bench in benchmarks.all_benchmarks():
            ok.update(dict.fromkeys(bench.ok_terminations))
            for spec in bench.judges.values():
                if spec.audits:
                    audits[spec.kind] = None
                if spec.view_weighted:
                    weighted[spec.kind] = None
                if spec.pass_threshold is not None:
                    thresholds[spec.kind] = spec.pass_threshold
        return cls(tuple(ok), tuple(audits), tuple(weighted), thresholds)
