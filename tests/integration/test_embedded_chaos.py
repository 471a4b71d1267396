"""The chaos test of ``tickler worker --store``: on a JSONL directory and on
an SQLite file, 500 sessions are created by agent processes while two worker
processes deliver what falls due; every second or so a random process
(worker or agent) is killed with SIGKILL or stopped with SIGSTOP for a
moment, and every process may also kill itself between a session's log
append and its wake index update. Killed processes are started again (an
agent with the sessions it had not created yet). At the end: every
occurrence was delivered (by its key) and marked delivered once in its log,
no log holds two follow-ups for one occurrence, a repeat to the target is
explained by a killed process, and the wake index equals the logs."""

from __future__ import annotations

import asyncio
import collections
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

from .embedded_support import KINDS, Kind, delivered, events_of, followups, index_rows, store_at
from .pgsupport import FIGURES

HERE = Path(__file__).parent
SESSIONS = int(os.environ.get("TICKLER_EMBEDDED_CHAOS_SESSIONS", "500"))
AGENTS = 10
WORKERS = 2
CUT_P = "0.03"  # a process kills itself before this share of its index updates
FAULT_EVERY_S = 1.0
MIN_KILLS = 6  # the run goes on at least until this many SIGKILLs ...
MIN_STOPS = 4  # ... and SIGSTOPs were sent


@dataclass
class Proc:
    role: str
    args: list[str]
    popen: subprocess.Popen[bytes]
    out: IO[bytes]
    log: Path


@dataclass
class Chaos:
    root: Path
    store: Path
    out: Path
    rng: random.Random
    procs: list[Proc] = field(default_factory=list)
    killed: set[int] = field(default_factory=set)
    started: int = 0
    kills: int = 0
    stops: int = 0
    cuts: int = 0
    _signalled: set[int] = field(default_factory=set)  # pids this test killed

    def start(self, role: str, args: list[str]) -> Proc:
        self.started += 1
        log = self.root / f"{role}-{self.started}.log"
        out = log.open("wb")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p
            ),
            "CHAOS_OUT": str(self.out),
            "CHAOS_CUT_P": CUT_P,
            "CHAOS_CALM": str(self.root / "calm"),
        }
        env.pop("TICKLER_DSN", None)
        seed = str(self.rng.randrange(1 << 30))
        popen = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "embedded_chaos_child.py"),
                role,
                str(self.store),
                seed,
                *args,
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        proc = Proc(role, args, popen, out, log)
        self.procs.append(proc)
        return proc

    def worker_args(self) -> list[str]:
        return [
            *("--deliver", "embedded_chaos_child:deliver", "--app-dir", str(HERE)),
            *("--concurrency", "8", "--poll", "0.2", "--deliver-timeout", "5"),
        ]

    def created(self) -> set[str]:
        """Sessions whose agent said it created their reminder (every agent
        that ever ran, the dead ones included)."""
        done: set[str] = set()
        for log in self.root.glob("live-*.log"):
            lines = log.read_text(errors="replace").splitlines()
            done |= {line.split()[1] for line in lines if line.startswith("created ")}
        return done

    def restart_dead(self) -> None:
        """Start again every process that died (killed, or cut itself)."""
        for proc in list(self.procs):
            code = proc.popen.poll()
            if code is None or (proc.role == "live" and code == 0):
                continue
            self.procs.remove(proc)
            proc.out.close()
            if code == -signal.SIGKILL:
                self.killed.add(proc.popen.pid)
                if proc.popen.pid not in self._signalled:
                    self.cuts += 1
            if proc.role == "worker":
                self.start("worker", self.worker_args())
            else:
                made = self.created()
                left = [s for s in proc.args if s not in made]
                if left:
                    self.start("live", left)

    def fault(self) -> None:
        running = [p for p in self.procs if p.popen.poll() is None]
        if not running:
            return
        victim = self.rng.choice(running)
        if self.rng.random() < 0.5:
            self._signalled.add(victim.popen.pid)
            victim.popen.send_signal(signal.SIGKILL)
            victim.popen.wait()
            self.kills += 1
        else:
            victim.popen.send_signal(signal.SIGSTOP)
            time.sleep(self.rng.random())  # stopped mid-whatever, for up to a second
            victim.popen.send_signal(signal.SIGCONT)
            self.stops += 1

    def stop_all(self) -> list[int]:
        (self.root / "calm").touch()  # no more cuts
        running = [proc for proc in self.procs if proc.popen.poll() is None]
        for proc in running:
            proc.popen.send_signal(signal.SIGCONT)  # should the run end while one is stopped
        # A worker started a moment ago takes SIGTERM as its own only once it
        # runs (it says so in its first line): before, SIGTERM just ends it.
        ready_by = time.monotonic() + 60
        for proc in running:
            while proc.role == "worker" and b"concurrency" not in proc.log.read_bytes():
                assert proc.popen.poll() is None, proc.log.read_text()
                assert time.monotonic() < ready_by, "a worker did not start in 60 s"
                time.sleep(0.1)
        for proc in running:
            proc.popen.send_signal(signal.SIGTERM)
        codes = [proc.popen.wait(timeout=60) for proc in self.procs if proc.role == "worker"]
        for proc in self.procs:
            proc.out.close()
        return codes


def calls(out: Path) -> list[tuple[str, str, int]]:
    if not out.exists():
        return []
    rows = []
    for line in out.read_text().splitlines():
        session, key, pid = line.split(" ")
        rows.append((session, key, int(pid)))
    return rows


def why_not(chaos: Chaos, kind: Kind, names: list[str]) -> str:
    """What kept the run from settling: sessions not created, rows not
    exact, and the tail of each process's output."""
    rows = index_rows(kind, chaos.root)
    stuck = {
        s: (rows[s].next_due_at, rows[s].holder) if s in rows else "no row"
        for s in names
        if s not in rows or rows[s].holder is not None or rows[s].next_due_at is not None
    }
    tails = {p.log.name: p.log.read_text(errors="replace").splitlines()[-5:] for p in chaos.procs}
    missing = sorted(set(names) - chaos.created())
    rows_shown = dict(list(stuck.items())[:10])
    return (
        f"did not settle: not created {missing[:10]}, rows {rows_shown} "
        f"({len(stuck)} in all), output {tails}"
    )


def settled(kind: Kind, root: Path, sessions: set[str]) -> bool:
    rows = index_rows(kind, root)
    return all(
        s in rows and rows[s].holder is None and rows[s].next_due_at is None for s in sessions
    )


async def drive(chaos: Chaos, kind: Kind, names: list[str]) -> None:
    """Faults, restarts and waiting, until enough faults were made and every
    session was created and settled (a generous bound: observed completion
    ends it, never a timing claim)."""
    deadline = time.monotonic() + float(os.environ.get("CHAOS_DEADLINE", "300"))
    next_fault = time.monotonic() + FAULT_EVERY_S
    while True:
        chaos.restart_dead()
        enough = chaos.kills >= MIN_KILLS and chaos.stops >= MIN_STOPS  # faults, then calm
        if enough and chaos.created() == set(names) and settled(kind, chaos.root, set(names)):
            return
        assert time.monotonic() < deadline, why_not(chaos, kind, names)
        if time.monotonic() >= next_fault:
            chaos.fault()
            next_fault = time.monotonic() + FAULT_EVERY_S
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("kind", KINDS)
async def test_embedded_chaos(kind: Kind, tmp_path: Path) -> None:
    began = time.monotonic()
    rng = random.Random(int(os.environ.get("TICKLER_CHAOS_SEED", "26")))
    store = store_at(kind, tmp_path)  # made before any process starts
    await store.close()
    path = tmp_path / ("sessions" if kind == "jsonl" else "store.db")
    chaos = Chaos(tmp_path, path, tmp_path / "calls.txt", rng)
    names = [f"c{i:04d}" for i in range(SESSIONS)]
    for _ in range(WORKERS):
        chaos.start("worker", chaos.worker_args())
    for agent in range(AGENTS):
        chaos.start("live", names[agent::AGENTS])
    try:
        await drive(chaos, kind, names)
    finally:
        codes = chaos.stop_all()

    seen = calls(chaos.out)
    by_key: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for session, key, pid in seen:
        by_key[session, key].append(pid)
    logged: list[tuple[str, str]] = []
    for session in names:
        events = await events_of(kind, tmp_path, session)
        keys = followups(events)
        assert len(keys) == 1, (session, keys)  # one occurrence, one follow-up
        assert delivered(events) == keys, session  # marked delivered once
        logged.append((session, keys[0]))
    unexplained = {
        key: pids for key, pids in by_key.items() if any(p not in chaos.killed for p in pids[:-1])
    }
    figures = {
        f"{kind}_sessions": SESSIONS,
        f"{kind}_kills": chaos.kills,
        f"{kind}_stops": chaos.stops,
        f"{kind}_self_cuts": chaos.cuts,
        f"{kind}_repeats": len(seen) - len(by_key),
        f"{kind}_unexplained_repeats": len(unexplained),
        f"{kind}_seconds": round(time.monotonic() - began, 1),
    }
    FIGURES.update(figures)
    print(f"embedded chaos: {figures}")
    assert set(by_key) == set(logged)  # every occurrence reached the target; none invented
    assert not unexplained, f"handed over again by a process that was not killed: {unexplained}"
    rows = index_rows(kind, tmp_path)
    # The index equals the logs: nothing pending, nobody holding.
    assert {s: (r.next_due_at, r.holder) for s, r in rows.items()} == dict.fromkeys(
        names, (None, None)
    )
    assert chaos.kills >= MIN_KILLS
    assert chaos.stops >= MIN_STOPS
    assert codes  # the workers alive at the end stop cleanly on SIGTERM
    assert all(code == 0 for code in codes), codes
