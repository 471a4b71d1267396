"""``make install`` (the first step of ``make demo`` and ``make test``) says
what it does: a line per step, pip's own progress the first time (about a
minute), quiet re-installs; setuptools' strict-editable banner is hidden,
while the build's other warnings and its errors still show.

Run against a stand-in ``python`` (it records pip's arguments and warns as
the setuptools build does, through Python's warnings), so no real install
happens; the filter is the same PYTHONWARNINGS a real pip honours."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import tickler

ROOT = Path(tickler.__file__).resolve().parent
BANNER = (
    "Editable installation.\n!!\n\n        " + "*" * 80 + "\n"
    "        Strict editable installation performed using the auxiliary directory:\n"
    "            build/__editable__.tickler_agents-0.1.0-py3-none-any\n"
    "        Please be careful to not remove this directory\n        " + "*" * 80 + "\n\n!!"
)
FAKE_PIP = f"""
import os, sys, warnings
with open(os.environ["FAKE_PIP_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if "-e" in sys.argv:
    warnings.warn({BANNER!r}, UserWarning)
    warnings.warn("the build has something else to say", UserWarning)
    if os.environ.get("FAKE_PIP_FAIL"):
        print("ERROR: the build failed", file=sys.stderr)
        sys.exit(1)
    print("Successfully installed tickler-agents-0.1.0")
"""


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _make(tmp: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    skip = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "PYTHONWARNINGS"}
    env = {k: v for k, v in os.environ.items() if k not in skip}
    env |= {"FAKE_PIP_LOG": str(tmp / "pip.log"), **extra}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stand_ins(tmp: Path) -> tuple[Path, Path]:
    """A ``PY`` whose ``-m venv DIR`` makes DIR/bin/python the fake pip."""
    fake_pip = tmp / "fake_pip.py"
    fake_pip.write_text(FAKE_PIP)
    python = shlex.quote(sys.executable)
    venv_python = _script(tmp / "venv_python", f'#!/bin/sh\nexec {python} {fake_pip} "$@"\n')
    py = _script(
        tmp / "py",
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
        f'  mkdir -p "$3/bin" && cp {venv_python} "$3/bin/python" && exit 0\n'
        "fi\n"
        f'exec {python} "$@"\n',
    )
    return py, tmp / "venv"


def test_install_shows_progress_hides_the_banner_and_keeps_errors(tmp_path: Path) -> None:
    py, venv = _stand_ins(tmp_path)
    first = _make(tmp_path, "install", f"PY={py}", f"VENV={venv}")
    assert first.returncode == 0, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"make: creating {venv} with {py}"
    assert lines[1] == (
        f"make: installing tickler with every extra and the dev tools into {venv} "
        "(about a minute the first time)"
    )
    assert "Successfully installed tickler-agents-0.1.0" in first.stdout  # pip's own output
    done = f"make: done; the CLI is {venv}/bin/tickler (or run: source {venv}/bin/activate)"
    assert lines[-1] == done
    assert "Editable installation" not in first.stderr
    assert "Strict editable" not in first.stderr
    assert "the build has something else to say" in first.stderr  # only the banner is hidden
    install = [line for line in (tmp_path / "pip.log").read_text().splitlines() if " -e " in line]
    assert len(install) == 1
    assert "-q" not in install[0].split()  # the first install shows pip's progress

    again = _make(tmp_path, "-B", "install", f"PY={py}", f"VENV={venv}")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "creating" not in again.stdout
    assert "(again, quietly: the sources changed)" in again.stdout
    install = [line for line in (tmp_path / "pip.log").read_text().splitlines() if " -e " in line]
    assert "-q" in install[-1].split()

    failed = _make(tmp_path, "-B", "install", f"PY={py}", f"VENV={venv}", FAKE_PIP_FAIL="1")
    assert failed.returncode != 0
    assert "ERROR: the build failed" in failed.stderr
    assert "make: done" not in failed.stdout


def test_a_venv_cut_short_without_pip_is_made_again(tmp_path: Path) -> None:
    py, venv = _stand_ins(tmp_path)
    # What an interrupted `python -m venv` leaves: a python, no pip in it.
    (venv / "bin").mkdir(parents=True)
    _script(
        venv / "bin" / "python",
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = pip ]; then echo "No module named pip" >&2; exit 1; fi\n'
        "exit 0\n",
    )
    done = _make(tmp_path, "install", f"PY={py}", f"VENV={venv}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == f"make: creating {venv} with {py}"
    install = [line for line in (tmp_path / "pip.log").read_text().splitlines() if " -e " in line]
    assert len(install) == 1
