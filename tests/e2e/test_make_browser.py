"""``make browser`` (a step of ``make test``): where the system's Chromium
is missing it says so in one line and installs Debian's ``chromium``
package with apt-get; where it is there it does nothing. Run with a
stand-in apt-get that records its arguments, so nothing is installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import tickler

ROOT = Path(tickler.__file__).resolve().parent


def _make(tmp: Path, chromium: Path) -> subprocess.CompletedProcess[str]:
    apt_get = tmp / "apt-get"
    apt_get.write_text(f'#!/bin/sh\necho "$@" >> {tmp / "apt.log"}\n')
    apt_get.chmod(0o755)
    skip = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}
    env = {k: v for k, v in os.environ.items() if k not in skip}
    return subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(ROOT),
            "browser",
            f"CHROMIUM={chromium}",
            f"APT_GET={apt_get}",
            "SUDO=",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_missing_chromium_is_installed_from_the_system_packages(tmp_path: Path) -> None:
    done = _make(tmp_path, tmp_path / "no-chromium")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "make: installing the system's Chromium for the dashboard's browser test "
        f"({tmp_path / 'apt-get'} install -y chromium)"
    ]
    assert (tmp_path / "apt.log").read_text().splitlines() == [
        "update -qq",
        "install -y -qq chromium",
    ]


def test_a_present_chromium_is_left_alone(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    done = _make(tmp_path, chromium)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "apt.log").exists()


def test_make_test_runs_the_step(tmp_path: Path) -> None:
    dry = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-n",
            "-C",
            str(ROOT),
            "test",
            f"CHROMIUM={tmp_path / 'none'}",
            "APT_GET=stand-in-apt-get",
            "SUDO=",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    browser = dry.stdout.index("stand-in-apt-get install -y -qq chromium")
    assert browser < dry.stdout.index("-m pytest")
