"""Runs one delivery command so that it never outlives the server (POSIX).

:class:`tickler.adapters.delivery._hosts.DeliverCommand` starts this script with
the server's interpreter (``-I -S``: the standard library only), in a
session of its own, as::

    python -I -S delivery_supervisor.py LIFELINE_FD COMMAND [ARG ...]

It starts COMMAND in a new process group, with the supervisor's stdin (the
follow-up JSON) and stdout on ``/dev/null``; whatever COMMAND starts stays in
that group unless it leaves on purpose (``setsid``). LIFELINE_FD is the read
end of a pipe whose write end only the server holds and never writes to, so
it reaches end-of-file exactly when the server closes it (a deadline, a
shutdown) or dies, even by SIGKILL. The supervisor then kills COMMAND's
group with SIGKILL and reaps it.

On Linux the supervisor is also a child subreaper: the orphans of COMMAND
become its children, so it reaps them too and leaves no zombies behind, even
where the init process does not reap. Elsewhere orphans go to init as usual.

When COMMAND ends, one line goes to stdout, then the supervisor exits 0:
``exit N``, ``signal N``, ``error MESSAGE`` (it could not be started) or
``cut`` (killed because the lifeline closed).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

_PR_SET_CHILD_SUBREAPER = 36
_REAP_BOUND_S = 5.0  # a process that left the group is not waited for longer


def _become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _watch(lifeline: int, group: int, cut: threading.Event) -> None:
    while os.read(lifeline, 4096):  # nobody writes: only end-of-file returns
        pass
    cut.set()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _reap(group: int, *, until_gone: bool) -> None:
    """Reap the children that ended; with ``until_gone``, also wait (a
    bounded time) until nothing is left of the killed ``group``."""
    deadline = time.monotonic() + _REAP_BOUND_S
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        if not until_gone or time.monotonic() > deadline:
            return
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)


def _report(line: str) -> None:
    with contextlib.suppress(OSError):  # the server is gone: nobody reads
        os.write(1, (line.replace("\n", " ") + "\n").encode(errors="replace"))


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        _report("error usage: delivery_supervisor.py LIFELINE_FD COMMAND [ARG ...]")
        return 2
    lifeline, command = int(argv[0]), argv[1:]
    _become_subreaper()
    try:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, process_group=0)  # noqa: S603 - the user's argv
    except OSError as exc:
        _report(f"error {exc}")
        return 0
    # Let go of the payload pipe: a COMMAND that exits without reading it
    # ends the server's write at once (EPIPE) instead of at our exit.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # Started after COMMAND (its group must exist); a lifeline closed
    # meanwhile still reads as end-of-file now.
    cut = threading.Event()
    threading.Thread(target=_watch, args=(lifeline, child.pid, cut), daemon=True).start()
    code = child.wait()
    _reap(child.pid, until_gone=cut.is_set())
    _report("cut" if cut.is_set() else f"exit {code}" if code >= 0 else f"signal {-code}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
