"""perf.engine_blocks: its seeded requests, the sizes it accepts and the table it prints
(the engine runs are the benchmark itself, not a test)."""

from __future__ import annotations

import argparse

import pytest

from perf.engine_blocks import body, sizes_arg, table


def test_requests_are_seeded_and_exactly_as_long_as_asked():
    b = body("m", 3, 50, 7)
    assert (b["max_tokens"], b["min_tokens"], b["seed"]) == (50, 50, 7)
    assert b["messages"][0]["content"] == body("m", 4, 1, 1)["messages"][0]["content"]
    assert b["messages"][1]["content"] != body("m", 4, 50, 7)["messages"][1]["content"]


def test_sizes_must_be_multiples_of_32():
    assert sizes_arg("128,32") == [128, 32]
    for bad in ("16", "128,48", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="multiples of 32"):
            sizes_arg(bad)


def test_the_table_gives_ratios_to_the_first_size_and_flags_other_outputs():
    rows = {128: {"prefill": 30.0, "1 x 100": 12.0, "8 x 50": 24.0},
            32: {"prefill": 30.0, "1 x 100": 12.0, "8 x 50": 15.0}}
    lines = table(rows, {128: True, 32: False})
    assert lines[1].split() == ["128", "30.0s", "12.0s", "24.0s", "same"]
    assert lines[2].split()[-1] == "DIFFER"
    assert lines[3] == "128 / 32: prefill 1.00x, 1 x 100 1.00x, 8 x 50 1.60x"
