"""``tickler worker --store`` as a user runs it, in a process of its own: the
bench notes the wall time just before it is spawned, reads what its target
noted (:mod:`bench.cold.target`) and its log on stderr, reads its peak
resident memory (``VmHWM``) before stopping it with SIGTERM, and checks that
it exits 0.

With a profile path it runs under ``python -m cProfile`` instead (the
worker exits normally on SIGTERM, so the profile is written)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench.runtime.common import until, wall_ms
from bench.runtime.workers import ROOT

from .target import NOTES_ENV

TARGET: Final = "bench.cold.target:note"
READY: Final = re.compile(r"worker \S+: store ")  # logged once the index is checked
CHANGED: Final = "changed behind it or unknown to it"  # the start check found stale rows
CHECKED: Final = re.compile(r"session file\(s\) checked|" + CHANGED)  # the JSONL check's end
STOP_S: Final = 60.0


def command(store: Path) -> list[str]:
    """The worker's command line (run in the repository root, so the target
    imports from it: ``--app-dir`` is the working directory by default)."""
    return ["tickler", "worker", "--store", str(store), "--deliver", TARGET, "--log-level", "info"]


def shown(store: Path) -> str:
    return shlex.join(command(store))


@dataclass(frozen=True)
class Delivery:
    at_ms: float  # wall time the target noted
    key: str  # "<reminder id>@<occurrence instant>"
    session: str


class WorkerProcess:
    """One worker process on ``store``; its target's notes in ``notes``."""

    def __init__(self, store: Path, notes: Path, profile_to: Path | None = None) -> None:
        self.store = store
        self.notes = notes
        self.profile_to = profile_to
        self.spawned_ms = 0.0
        self.lines: list[tuple[float, str]] = []  # (wall ms, its log line)
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        self.notes.write_bytes(b"")
        argv = command(self.store)
        if self.profile_to is None:
            argv[0] = str(Path(sys.executable).with_name("tickler"))
        else:
            profiler = [sys.executable, "-m", "cProfile", "-o", str(self.profile_to)]
            argv = [*profiler, "-m", "tickler", *argv[1:]]
        env = {**os.environ, NOTES_ENV: str(self.notes)}
        self.spawned_ms = wall_ms()
        self._proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self._reader = threading.Thread(target=self._read, args=(self._proc,), daemon=True)
        self._reader.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append((wall_ms(), line.rstrip("\n")))

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def deliveries(self) -> list[Delivery]:
        text = self.notes.read_text()
        found = []
        for line in text.splitlines():
            ns, key, session = line.split(" ")
            found.append(Delivery(int(ns) / 1e6, key, session))
        return found

    def wait_for(self, count: int, timeout_s: float) -> bool:
        """Until the target noted ``count`` deliveries (or the worker died)."""
        return (
            until(lambda: self.exited() or len(self.deliveries()) >= count, timeout_s, 0.02)
            and len(self.deliveries()) >= count
        )

    def exited(self) -> bool:
        return self._proc is not None and self._proc.poll() is not None

    def ready_ms(self) -> float | None:
        """When the worker said it had checked the index and began claiming."""
        return next((at for at, line in self.lines if READY.search(line)), None)

    def checked_ms(self) -> float | None:
        """When the JSONL store's start check of every file ended (it runs
        beside the claims; the SQLite store's ends before the first claim)."""
        return next((at for at, line in self.lines if CHECKED.search(line)), None)

    def said(self, text: str) -> bool:
        return any(text in line for _, line in self.lines)

    def cpu_s(self) -> float:
        """CPU time the process used so far (user + system), in seconds."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss(self) -> int:
        """The process's peak resident set size so far, in bytes (VmHWM)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM in /proc/<pid>/status")

    def stop(self) -> None:
        """SIGTERM, then wait for a clean exit (0); RuntimeError otherwise,
        with the worker's log."""
        assert self._proc is not None
        assert self._reader is not None
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
        try:
            code = self._proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        self._reader.join(STOP_S)
        if code != 0:
            raise RuntimeError(
                f"the worker exited with status {code}; its log:\n" + self.log_text()
            )

    def log_text(self) -> str:
        return "\n".join(line for _, line in self.lines[-40:])
