"""Each figure's parts run in a fresh interpreter (``python -m bench.runtime
--worker NAME PARAMS``, or another bench's module: see ``Runner``). A
``Worker`` names one: the type of its parameters, the type of its result and
the function between them. Both cross as JSON
(the standard library's, which keeps NaN and infinity), decoded into their
types on arrival, so the parent reads named, checked fields."""

from __future__ import annotations

import asyncio
import cProfile
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import msgspec

from .common import PROFILER, Record, log

ROOT: Final = Path(__file__).resolve().parents[2]  # the cwd of workers: bench.runtime imports
RESULT_MARK: Final = "BENCH-RESULT "

P = TypeVar("P", bound=Record)
R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class Worker(Generic[P, R]):
    name: str  # "tickler.creates", "aps.burst", ...
    params: type[P]
    result: type[R]
    body: Callable[[P], R]
    profiled: bool  # run under cProfile with --profile
    abandon: bool  # exit at once after its answer, not waiting for its threads


def tickler_worker(
    name: str,
    params: type[P],
    result: type[R],
    body: Callable[[P], Coroutine[Any, Any, R]],
    profiled: bool = True,
) -> Worker[P, R]:
    """A worker running tickler on its own event loop."""
    return Worker(
        f"tickler.{name}", params, result, lambda p: asyncio.run(body(p)), profiled, False
    )


def aps_worker(name: str, params: type[P], result: type[R], body: Callable[[P], R]) -> Worker[P, R]:
    """A worker running APScheduler (in its threads; never profiled)."""
    return Worker(f"aps.{name}", params, result, body, False, True)


class Reply(Record, frozen=True):
    """A worker's answer: one marked JSON line on its stdout."""

    result: dict[str, Any]
    warnings: int  # warnings the libraries logged
    first_warning: str


class WorkerFailed(Exception):
    pass


def _encode(value: Record) -> str:
    return json.dumps(msgspec.to_builtins(value))


class Runner:
    """Runs one worker in a fresh interpreter and reads its result."""

    def __init__(self, profile_dir: Path | None, module: str = "bench.runtime") -> None:
        self.profile_dir = profile_dir
        self.module = module  # whose ``--worker NAME PARAMS`` starts the worker
        self.profiles: list[tuple[str, Path]] = []
        self.warnings: list[str] = []

    def _command(self, worker: Worker[P, R], params: P) -> list[str]:
        return [sys.executable, "-m", self.module, "--worker", worker.name, _encode(params)]

    def run(self, worker: Worker[P, R], params: P) -> R:
        command = self._command(worker, params)
        if self.profile_dir is not None and worker.profiled:
            path = self.profile_dir / f"{worker.name}-{len(self.profiles)}.prof"
            command += ["--profile-to", str(path)]
            self.profiles.append((worker.name, path))
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, cwd=ROOT)
        return self._result(worker, done.stdout, done.returncode)

    def run_together(self, worker: Worker[P, R], params: Sequence[P]) -> list[R]:
        """One worker per entry of ``params``, all at once (never profiled)."""
        children = [
            subprocess.Popen(
                self._command(worker, one), stdout=subprocess.PIPE, text=True, cwd=ROOT
            )
            for one in params
        ]
        outputs = [child.communicate()[0] for child in children]
        return [
            self._result(worker, out, child.returncode)
            for out, child in zip(outputs, children, strict=True)
        ]

    def _result(self, worker: Worker[P, R], stdout: str, returncode: int) -> R:
        for line in stdout.splitlines():
            if line.startswith(RESULT_MARK):
                reply = msgspec.convert(json.loads(line[len(RESULT_MARK) :]), type=Reply)
                if reply.warnings:
                    self.warnings.append(
                        f"{worker.name}: {reply.warnings:,} warnings logged; the first: "
                        f"{reply.first_warning}"
                    )
                return msgspec.convert(reply.result, type=worker.result)
        raise WorkerFailed(f"worker {worker.name} failed (exit status {returncode}); see above")


class LogCounter(logging.Handler):
    """Counts the warnings the libraries log instead of printing each one;
    keeps the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if not self.first:
            cause = f" ({record.exc_info[1]!r})" if record.exc_info else ""
            self.first = f"{record.name}: {record.getMessage()}{cause}"[:300]


def worker_main(
    workers: Mapping[str, Worker[Any, Any]], name: str, params_json: str, profile_to: str | None
) -> None:
    """Run the worker ``name`` in this process and print its reply."""
    worker = workers[name]
    params = msgspec.convert(json.loads(params_json), type=worker.params)
    counter = LogCounter()
    logging.getLogger().addHandler(counter)
    if profile_to is not None:
        PROFILER.append(cProfile.Profile())
    try:
        result = worker.body(params)
    finally:
        if counter.count:
            log(f"{name}: {counter.count:,} warnings logged; the first: {counter.first}")
    if profile_to is not None:
        PROFILER[0].dump_stats(profile_to)
    reply = Reply(
        result=msgspec.to_builtins(result), warnings=counter.count, first_warning=counter.first
    )
    sys.stdout.write(RESULT_MARK + _encode(reply) + "\n")
    sys.stdout.flush()
    if worker.abandon:
        # Its scheduler thread may be mid-round (committing one job at a time):
        # leave without waiting for it; everything it wrote is scratch data.
        os._exit(0)
