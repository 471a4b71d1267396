"""A delivery command for the MCP server tests.

Reads the follow-up JSON from stdin and appends it as one line to OUT, exit
status 0. Every attempt is also appended to ``--attempts FILE``; while the
file ``--refuse-while FILE`` exists, an attempt exits 1 (not delivered).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--attempts", type=Path)
    parser.add_argument("--refuse-while", type=Path)
    args = parser.parse_args()
    payload = sys.stdin.buffer.read()
    # Decide before recording the attempt: a test that sees the attempt and
    # then removes the file does not change this attempt's outcome.
    refuse = args.refuse_while is not None and args.refuse_while.exists()
    if args.attempts is not None:
        with args.attempts.open("ab") as attempts:
            attempts.write(payload + b"\n")
    if refuse:
        return 1
    with args.out.open("ab") as out:
        out.write(payload + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
