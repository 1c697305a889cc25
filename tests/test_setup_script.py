"""scripts/setup.sh: the package sources handed from pip's configuration to uv
(scripts/uv_args.py), the extras it accepts, and its stop when the model cannot be prepared."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _uv_args_module():
    spec = importlib.util.spec_from_file_location("uv_args", ROOT / "scripts" / "uv_args.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


uv_args = _uv_args_module()


def test_pip_sources_become_uv_arguments(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    index = tmp_path / "simple"
    index.mkdir()
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch<=2.14.1\n")
    lines = [
        f":env:.find-links='{wheels}'",
        f"global.constraint='{constraints}'",
        f"global.extra-index-url='file://{index} file://{tmp_path}/missing/simple'",
        f"global.find-links='{wheels}'",
    ]
    assert uv_args.uv_args(lines) == [
        "--constraints", str(constraints),
        "--extra-index-url", f"file://{index}",  # the missing one is left out, as pip ignores it
        "--find-links", str(wheels),
        # pip takes the best version over all its indexes; uv must be told to do the same
        "--index-strategy", "unsafe-best-match",
    ]


def test_the_environment_overrides_the_files_and_addresses_are_kept(tmp_path):
    lines = [
        "global.index-url='https://mirror.example/simple'",
        "install.index-url='https://install.example/simple'",
        "global.find-links='/no/such/folder'",
        "global.timeout='60'",  # not a source: ignored
        "not a config line",
    ]
    assert uv_args.uv_args(lines) == ["--index-url", "https://install.example/simple"]
    lines.append(":env:.index-url='https://env.example/simple'")
    assert uv_args.uv_args(lines) == ["--index-url", "https://env.example/simple"]


def test_no_configuration_gives_no_arguments():
    assert uv_args.uv_args([]) == []
    # no extra index: uv's own index strategy is pip's already
    assert "--index-strategy" not in uv_args.uv_args(
        ["global.index-url='https://pypi.org/simple'"])


def test_the_script_prints_one_argument_a_line(tmp_path):
    out = subprocess.run(
        ["python3", str(ROOT / "scripts" / "uv_args.py")],
        input=f"global.find-links='{tmp_path}'\n", capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["--find-links", str(tmp_path)]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_an_unknown_extra_is_refused_before_anything_is_installed(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    env = {"PATH": "/usr/bin:/bin", "AGENTSWEEP_EXTRA": "cpu"}
    out = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh"), "tests"],
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 2
    assert out.stderr.strip() == ("scripts/setup.sh: unknown extra 'tests' "
                                  "(known: test, cluster)")
    assert not (tmp_path / ".venv").exists()


FAKE_PYTHON = """#!/usr/bin/env bash
# stands in for .venv/bin/python: byte-compiling sleeps (its pid written down), the model fails
case "$1" in
  -m) echo $$ > "$FAKE_DIR/compiling.pid"; exec sleep 60 ;;
  -c) case "$2" in
        *sysconfig*) echo "$FAKE_DIR/site" ;;
        *ensure_default_model*)  # fails once byte-compiling has started (as a conversion would)
          for _ in $(seq 100); do [ -s "$FAKE_DIR/compiling.pid" ] && break; sleep 0.05; done
          echo "no model here" >&2; exit 1 ;;
      esac ;;
  *) cat > /dev/null ;;
esac
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_model_that_cannot_be_prepared_stops_setup_and_its_byte_compiling(tmp_path):
    (tmp_path / "scripts").mkdir()
    for name in ("setup.sh", "uv_args.py"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("pip", "#!/bin/sh\nexit 0\n"),
                       ("uv", "#!/bin/sh\nexit 0\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "AGENTSWEEP_EXTRA": "cpu", "FAKE_DIR": str(tmp_path)}
    out = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh")], capture_output=True,
                         text=True, env=env, check=False, timeout=30)
    assert out.returncode == 1
    assert "no model here" in out.stderr
    assert out.stderr.strip().endswith("[setup] the default model could not be prepared "
                                       "(see above); setup stopped")
    pid = int((tmp_path / "compiling.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)                  # the byte-compiling stand-in was stopped, not left
