"""What the episode list needs of the registered benchmarks (`query.RunView`)."""

from __future__ import annotations

from typing import Any


class ViewRules:
    """What the list needs of the registered benchmarks: normal terminations, audit kinds,
    kinds shown weighted, pass lines per kind. Kept with the run's saved table
    (`as_dict` / `from_dict`), so that opening a run again need not import every benchmark
    before its first page; the viewer checks them against the registry afterwards."""

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

    def as_dict(self) -> dict[str, Any]:
        return {"ok_terminations": list(self.ok_terminations), "audits": list(self.audits),
                "weighted": list(self.weighted), "thresholds": dict(self.thresholds)}

    @classmethod
    def from_dict(cls, data: Any) -> ViewRules | None:
        """The rules `as_dict` wrote; None for anything else."""
        try:
            return cls(tuple(map(str, data["ok_terminations"])), tuple(map(str, data["audits"])),
                       tuple(map(str, data["weighted"])),
                       {str(k): float(v) for k, v in data["thresholds"].items()})
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ViewRules) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]
