"""perf.setup_install splits a timed setup.sh into its phases by the lines setup.sh prints."""

from __future__ import annotations

import pytest

from perf.setup_install import phases


def test_phases_split_at_the_byte_compiling_line():
    marks = [(7.0, "[setup] installing agentsweep[cpu] into .venv"),
             (33.0, "[setup] byte-compiling the installed packages; preparing the default model"),
             (120.0, "[setup] model: /home/models/SmolLM2-135M-Instruct-v2")]
    assert phases(marks, 131.0) == {"installing": 33.0, "compiling and model": 98.0,
                                    "in all": 131.0}


def test_a_setup_without_the_line_is_refused():
    with pytest.raises(ValueError, match="no '\\[setup\\] byte-compiling' line"):
        phases([(7.0, "[setup] installing agentsweep[cpu] into .venv")], 9.0)
