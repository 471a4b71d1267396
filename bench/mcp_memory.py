"""Memory and time of one large ``schedule_create`` through the MCP server.

Run ``python bench/mcp_memory.py`` (``make bench-mcp``). ``--sizes`` gives
the prompt sizes in MB; the default, ``0.1,3,20,100``, is one prompt under
both limits, one over the prompt limit only and two over the line limit
(``--sizes 1,5`` is a quick look). For each size, a fresh
``python -m tickler mcp`` process (JSONL store in a
temporary directory, a delivery command that is never called) is driven
over its real stdio transport: ``initialize``, one small call (the
baseline), then one ``tools/call`` whose ``prompt`` is that many MB of
ASCII. The peer, in the same run, is the same server on the SDK's own
stdio transport without tickler's limits (what it was before): each size
is measured on both. The figures come from the server's own
``/proc/<pid>/status``:

* ``base``: its peak resident set (VmHWM) after the small call;
* ``peak``: its peak after the large call was answered;
* ``x prompt``: (peak - base) / prompt size, the extra memory the call
  cost as a multiple of the prompt;
* ``write``: the time to write the request; ``answer``: from its last
  byte written to the answer read;
* the answer's kind (a tool result and its code, or a JSON-RPC error), and
  whether the server still answers a ``schedule_list`` afterwards.

The client writes the request line itself (the official client would keep
its own copies in this process, which is not what is measured). Linux only
(``/proc``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any, Final

MB: Final = 1_000_000
SESSION: Final = "bench"
# The peer: the server on the SDK's stdio transport, without the prompt limit.
SDK_TRANSPORT: Final = """
import sys
from mcp.server.stdio import stdio_server
import tickler.adapters.mcp._server as server
import tickler.adapters.mcp._stdio as transport
transport.stdio_transport = stdio_server
import tickler.adapters.cli._mcp as entry
server.prompt_too_long = lambda name, args: None
sys.exit(entry.main(sys.argv[1:]))
"""


def _vm_hwm(pid: int) -> int:
    """The process's peak resident set in bytes (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc status")


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the server closed its stdout")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _describe(answer: dict[str, Any]) -> str:
    if "error" in answer:
        error = answer["error"]
        return f"JSON-RPC error {error['code']}: {error['message'][:60]}"
    result = answer["result"]
    text = result["content"][0]["text"]
    if result.get("isError"):
        return f"tool error {json.loads(text)['code']}"
    return f"tool result ({len(text) / MB:.1f} MB of text)"


def measure(prompt_mb: float, *, peer: bool) -> dict[str, Any]:
    """One fresh server, one large call; the figures in a dict."""
    size = int(prompt_mb * MB)
    with tempfile.TemporaryDirectory(prefix="tickler-mcp-bench-") as tmp:
        server_module = ["-c", SDK_TRANSPORT] if peer else ["-m", "tickler", "mcp"]
        command = [
            sys.executable,
            *server_module,
            "--store",
            str(Path(tmp) / "store"),
            "--session",
            SESSION,
            "--deliver-cmd",
            "true",
            "--log-level",
            "WARNING",
        ]
        with subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as server:
            assert server.stdin is not None
            assert server.stdout is not None
            _send(
                server.stdin,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "0"},
                    },
                },
            )
            _answer(server.stdout, 1)
            _send(server.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            small = {
                "name": "schedule_create",
                "arguments": {"prompt": "x", "after_seconds": 9_000_000},
            }
            _send(
                server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": small}
            )
            _answer(server.stdout, 2)
            base = _vm_hwm(server.pid)

            head = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":'
            head += b'{"name":"schedule_create","arguments":{"after_seconds":9000000,"prompt":"'
            body = b"a" * size
            # A thread writes (the server may answer before it has read all).
            writer = threading.Thread(
                target=_write_all, args=(server.stdin, (head, body, b'"}}}\n')), daemon=True
            )
            started = time.perf_counter()
            writer.start()
            writer.join()
            written = time.perf_counter()
            del body
            answer = _answer(server.stdout, 3)
            answered = time.perf_counter()
            peak = _vm_hwm(server.pid)
            listing = {"name": "schedule_list", "arguments": {}}
            _send(
                server.stdin, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": listing}
            )
            still = "result" in _answer(server.stdout, 4)
            server.stdin.close()
            server.wait(timeout=60)
    return {
        "prompt_mb": prompt_mb,
        "base_mb": base / MB,
        "peak_mb": peak / MB,
        "x_prompt": (peak - base) / size,
        "write_s": written - started,
        "answer_s": answered - written,
        "answer": _describe(answer),
        "answers_after": still,
    }


def _write_all(pipe: IO[bytes], parts: tuple[bytes, ...]) -> None:
    for part in parts:
        pipe.write(part)
    pipe.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="0.1,3,20,100", help="prompt sizes in MB, comma-separated"
    )
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        sys.exit("bench/mcp_memory.py needs Linux (/proc)")
    print(
        f"{'server':<14} {'prompt':>8} {'base':>8} {'peak':>8} {'x prompt':>9} {'write':>7} "
        f"{'answer':>7}  answer / server still answers"
    )
    for size in (float(s) for s in args.sizes.split(",")):
        for peer in (False, True):
            r = measure(size, peer=peer)
            print(
                f"{'SDK transport' if peer else 'tickler':<14} {r['prompt_mb']:6.1f}MB "
                f"{r['base_mb']:6.0f}MB {r['peak_mb']:6.0f}MB {r['x_prompt']:8.1f}x "
                f"{r['write_s']:6.1f}s {r['answer_s']:6.1f}s  "
                f"{r['answer']} / {'yes' if r['answers_after'] else 'NO'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
