"""Fixtures that test modules of this folder share (defined beside their helpers): `judge`,
`sample_run` (judge_cli_support.py), `home`, `imported` (prompt_set_support.py)."""

from .judge_cli_support import judge_fixture, sample_run_fixture  # noqa: F401
from .prompt_set_support import home_fixture, imported_fixture  # noqa: F401
