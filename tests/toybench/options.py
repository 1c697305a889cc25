"""Toybench's own settings, the run config's `[options]` table.

A benchmark's options are one msgspec Struct (every field defaulted; the docstring lists each
as `name: what it does`, which `agentsweep`'s config reference prints). The defaults are the
benchmark's behaviour without a profile; its `paper` profile sets the reference's values
under `options`, and a run that changes one lists it as a deviation. The run hands the Struct
to the protocols (`ctx.settings.options`), the judges (`inp.options`) and scoring
(`ctx.options`).
"""

from __future__ import annotations

import msgspec


class ToyOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Toybench's options.

    hint: a sentence appended to the agent's system prompt ("" = none).
    final_only: the rule check reads only the last number of the final answer (the paper's
        way) instead of any number in it.
    grader_weight: the unit score is (1 - w) x the rule check + w x the LLM grader's verdict
        (0 = the rule check alone).
    """

    hint: str = ""
    final_only: bool = False
    grader_weight: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.grader_weight <= 1.0:
            raise ValueError(f"grader_weight must be in [0, 1], got {self.grader_weight}")
