"""``tickler check``/``inspect`` on logs as the reference harness lays them out:
ROOT/<project key>/<escaped id>/session.jsonl[.zstd], zstd frames, torn tails,
and one bad file never hiding the others (issue 9, "Real harness logs")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
T0 = 1785931200000


def tickler(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=120, check=False
    )


def header(session_id: str, cwd: str | None = None) -> bytes:
    value: dict[str, object] = {"type": "session", "version": 0, "id": session_id}
    value["createdAt"] = T0
    if cwd is not None:
        value["cwd"] = cwd
    value["delegationDepth"] = 0
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


def create(seq: int, number: int, prompt: str = "stretch") -> bytes:
    schedule = {
        "id": f"schedule-{number}",
        "kind": "after",
        "prompt": prompt,
        "afterSeconds": 30,
        "scheduledAt": "2099-08-05T12:00:30.000Z",
    }
    data = {"version": 1, "operation": "create", "schedule": schedule}
    event = {"type": "schedule/change", "seq": seq, "time": T0 + seq, "data": data}
    return json.dumps(event).encode() + b"\n"


def delete(seq: int, number: int) -> bytes:
    data = {"version": 1, "operation": "delete", "id": f"schedule-{number}"}
    event = {"type": "schedule/change", "seq": seq, "time": T0 + seq, "data": data}
    return json.dumps(event).encode() + b"\n"


def frames(*batches: bytes) -> bytes:
    """One checksummed zstd frame per batch, as the harness appends them."""
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(compressor.compress(batch) for batch in batches)


def put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def harness_root(root: Path) -> dict[str, Path]:
    """Three sessions: plain JSONL, multi-frame zstd with an escaped id, and a
    corrupt one under _no-cwd."""
    plain = put(
        root / "--home-u-proj--" / "s1" / "session.jsonl",
        header("s1", "/home/u/proj") + create(0, 1) + create(1, 2),
    )
    packed = put(
        root / "--home-u-proj--" / "a~0020b~002Fc" / "session.jsonl.zstd",
        frames(header("a b/c", "/home/u/proj"), create(0, 1), create(1, 2) + delete(2, 1)),
    )
    corrupt = put(
        root / "_no-cwd" / "bad" / "session.jsonl",
        header("bad") + create(0, 1) + delete(1, 9),
    )
    return {"plain": plain, "packed": packed, "corrupt": corrupt}


def test_check_walks_a_harness_root_and_reports_every_file(tmp_path: Path) -> None:
    files = harness_root(tmp_path / "root")
    result = tickler("check", str(tmp_path / "root"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines() == [  # in path order
        f'{files["packed"]} [session "a b/c"]: valid (3 events, 1 active)',
        f'{files["plain"]} [session "s1"]: valid (2 events, 2 active)',
    ]
    assert result.stderr.splitlines() == [
        f'tickler: {files["corrupt"]}:3 [session "bad"]: '
        'schedule delete targets inactive id "schedule-9"'
    ]


def test_check_json_names_each_session(tmp_path: Path) -> None:
    files = harness_root(tmp_path / "root")
    result = tickler("check", "--json", str(tmp_path / "root"))
    assert result.returncode == 1
    verdicts = {v["path"]: v for v in json.loads(result.stdout)["files"]}
    assert verdicts[str(files["packed"])]["session"] == "a b/c"
    assert verdicts[str(files["packed"])]["status"] == "valid"
    assert verdicts[str(files["corrupt"])]["status"] == "corrupt"
    assert verdicts[str(files["corrupt"])]["line"] == 3


def test_multi_frame_zstd_decodes_every_frame(tmp_path: Path) -> None:
    batches = [header("z1")] + [create(seq, seq + 1) for seq in range(40)]
    path = put(tmp_path / "z1.jsonl.zstd", frames(*batches))
    result = tickler("check", "--json", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    (verdict,) = json.loads(result.stdout)["files"]
    assert (verdict["events"], verdict["active"]) == (40, 40)


def test_inspect_walks_a_harness_root_per_session(tmp_path: Path) -> None:
    files = harness_root(tmp_path / "root")
    result = tickler("inspect", "--json", str(tmp_path / "root"))
    assert result.returncode == 1, result.stderr
    sessions = json.loads(result.stdout)["sessions"]
    assert [s["path"] for s in sessions] == [
        str(files["packed"]),
        str(files["plain"]),
        str(files["corrupt"]),
    ]
    assert [s["status"] for s in sessions] == ["valid", "valid", "corrupt"]
    assert sessions[0]["report"]["session"] == "a b/c"
    assert [row["id"] for row in sessions[0]["report"]["active"]] == ["schedule-2"]
    assert "schedule-9" in result.stderr
    text = tickler("inspect", str(tmp_path / "root"))
    assert text.returncode == 1
    assert text.stdout.count("Active reminders") == 2
    assert f'{files["packed"]} [session "a b/c"]' in text.stdout


def test_a_torn_final_line_outside_a_store_is_corruption(tmp_path: Path) -> None:
    path = put(tmp_path / "cut.jsonl", header("cut") + create(0, 1) + b'{"type":"sched')
    result = tickler("check", str(path))
    assert result.returncode == 1
    assert result.stderr.startswith(f"tickler: {path}:3: torn final line")


def test_a_torn_final_zstd_frame_is_corruption(tmp_path: Path) -> None:
    data = frames(header("cut"), create(0, 1), create(1, 2))
    path = put(tmp_path / "root" / "_no-cwd" / "cut" / "session.jsonl.zstd", data[:-2])
    result = tickler("check", str(tmp_path / "root"))
    assert result.returncode == 1
    # Only the checksum is cut: the frame's line is recovered, as the harness recovers it.
    assert result.stderr.startswith(f'tickler: {path}:4 [session "cut"]: torn final zstd frame')


def test_a_harness_log_whose_final_line_lacks_its_newline_is_reported(tmp_path: Path) -> None:
    data = header("s1") + create(0, 1) + create(1, 2)[:-1]  # JSON, but the harness drops it
    path = put(tmp_path / "root" / "_no-cwd" / "s1" / "session.jsonl", data)
    result = tickler("check", str(tmp_path / "root"))
    assert result.returncode == 1
    assert result.stderr.startswith(
        f'tickler: {path}:3 [session "s1"]: the final line has no newline: the harness'
    )


def test_zstd_frames_that_the_harness_refuses_are_corruption(tmp_path: Path) -> None:
    two_in_first = put(tmp_path / "a.jsonl.zstd", frames(header("a") + create(0, 1)))
    open_line = put(tmp_path / "b.jsonl.zstd", frames(header("b"), create(0, 1)[:-1]))
    garbage = put(tmp_path / "c.jsonl.zstd", frames(header("c")) + b"\x00" * 12)
    result = tickler("check", str(two_in_first), str(open_line), str(garbage))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 3, result.stderr
    assert lines[0].startswith(f"tickler: {two_in_first}:1: the first zstd frame")
    assert lines[1].startswith(f"tickler: {open_line}:2: a complete zstd frame ends inside")
    assert lines[2].startswith(f"tickler: {garbage}: not a zstd frame at byte")


def test_a_log_in_the_wrong_directory_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "root"
    wrong_id = put(root / "_no-cwd" / "s1" / "session.jsonl", header("s2") + create(0, 1))
    wrong_project = put(root / "--elsewhere--" / "s3" / "session.jsonl", header("s3", "/p/q"))
    result = tickler("check", str(root))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert f"tickler: {wrong_project}:1" in lines[0]
    assert "belongs in --p-q--/s3" in lines[0]
    assert f"tickler: {wrong_id}:1" in lines[1]
    assert "belongs in _no-cwd/s2" in lines[1]


def test_a_directory_without_session_files_cannot_be_checked(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = tickler("check", str(tmp_path / "empty"))
    assert result.returncode == 2
    assert "no session files" in result.stderr


def test_one_bad_file_never_stops_the_others(tmp_path: Path) -> None:
    good = put(tmp_path / "good.jsonl", header("good") + create(0, 1))
    deep = b'{"type":"note","seq":0,"time":1,"data":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    nested = put(tmp_path / "nested.jsonl", header("nested") + deep)
    unreadable = tmp_path / "dir.jsonl"
    unreadable.mkdir()
    bad = put(tmp_path / "bad.jsonl", header("bad") + create(0, 1) + delete(1, 9))
    missing = tmp_path / "missing.jsonl"
    args = [str(p) for p in (good, nested, unreadable, bad, missing)]
    result = tickler("check", *args)
    assert "Traceback" not in result.stderr
    # corruption found wins over an input that could not be read
    assert result.returncode == 1, result.stderr
    out = result.stdout + result.stderr
    for path in args:
        assert sum(line.count(f"{path}") for line in out.splitlines()) >= 1, (path, out)
    assert f"{good}: valid (1 events, 1 active)" in result.stdout
    assert f'tickler: {bad}:3: schedule delete targets inactive id "schedule-9"' in result.stderr
    assert f"tickler: {missing}: cannot read" in result.stderr
    assert len(out.splitlines()) == 5, out


def test_only_unreadable_inputs_exit_2(tmp_path: Path) -> None:
    good = put(tmp_path / "good.jsonl", header("good") + create(0, 1))
    result = tickler("check", str(good), str(tmp_path / "missing.jsonl"))
    assert result.returncode == 2
    assert f"{good}: valid" in result.stdout


def test_a_symlinked_directory_is_not_followed_by_the_walk(tmp_path: Path) -> None:
    outside = put(tmp_path / "outside" / "x" / "session.jsonl", header("x") + delete(0, 1))
    root = tmp_path / "root"
    put(root / "_no-cwd" / "s1" / "session.jsonl", header("s1") + create(0, 1))
    (root / "_no-cwd" / "link").symlink_to(outside.parent.parent)
    result = tickler("check", str(root))
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1


LONG = b"1" * 5_000  # longer than Python's int() takes; JavaScript reads a double


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b'{"type":"x\xff","seq":1,"time":1,"data":{}}', "invalid event: event type is not valid"),
        (b'{"type":"x","seq":%s,"time":1,"data":{}}' % LONG,
         "invalid event: event seq must be a non-negative safe integer"),
    ],
    ids=["type-utf8", "seq-digits"],
)  # fmt: skip
def test_a_hostile_event_line_is_corrupt_with_its_line(
    tmp_path: Path, bad: bytes, reason: str
) -> None:
    """Exit 1 with file:line, like any corrupt log; before, exit 2 with
    "cannot be checked: UnicodeDecodeError" (or ValueError) and no line."""
    path = put(tmp_path / "h.jsonl", header("h") + create(0, 1) + bad + b"\n" + create(2, 2))
    result = tickler("check", str(path))
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"tickler: {path}:3: {reason}")
    assert len(result.stderr.splitlines()) == 1


def test_a_null_seed_length_checks_as_in_the_reference(tmp_path: Path) -> None:
    value = json.loads(header("n"))
    value["seedLength"] = None
    path = put(tmp_path / "n.jsonl", json.dumps(value).encode() + b"\n" + create(0, 1))
    result = tickler("check", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{path}: valid (1 events, 1 active)\n"


def verdicts(*args: str, cwd: Path | None = None) -> list[dict[str, object]]:
    result = subprocess.run(
        [*TICKLER, "check", "--json", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=cwd,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    files: list[dict[str, object]] = json.loads(result.stdout)["files"]
    return files


@pytest.mark.parametrize("json_tail", [True, False], ids=["json", "cut"])
def test_a_final_line_without_newline_has_one_verdict_however_the_file_is_named(
    tmp_path: Path, json_tail: bool
) -> None:
    """The harness drops a final line without its newline: ``check FILE``
    called a JSON one valid with one event more, ``check DIR`` corrupt."""
    tail = create(1, 2)[:-1] if json_tail else create(1, 2)[:-9]
    data = header("s1") + create(0, 1) + tail
    harness = put(tmp_path / "root" / "_no-cwd" / "s1" / "session.jsonl", data)
    flat = put(tmp_path / "flat" / "s1.jsonl", data)
    seen = [
        *verdicts(str(harness)),
        *verdicts(str(tmp_path / "root")),
        *verdicts("session.jsonl", cwd=harness.parent),
        *verdicts(str(flat)),
        *verdicts(str(flat.parent)),
    ]
    for verdict in seen:
        assert (verdict["status"], verdict["line"]) == ("corrupt", 3), verdict
    reasons = {str(verdict["reason"]) for verdict in seen}
    assert len(reasons) == 1
    assert ("the harness takes it for a torn record" in reasons.pop()) == json_tail
    inspected = tickler("inspect", "--json", str(flat))
    assert inspected.returncode == 1
    assert json.loads(inspected.stdout)["events"] == 1  # what the harness reads


@pytest.mark.parametrize("blank", [b"\n", b" \t\n"], ids=["empty", "spaces"])
def test_a_blank_line_has_one_verdict_however_the_file_is_named(
    tmp_path: Path, blank: bytes
) -> None:
    """Issue 25, item 9: the harness cannot read a blank line (it refuses
    the log, or drops every line from it on); check called it valid."""
    data = header("s1") + create(0, 1) + blank + create(1, 2)
    harness = put(tmp_path / "root" / "_no-cwd" / "s1" / "session.jsonl", data)
    flat = put(tmp_path / "flat" / "s1.jsonl", data)
    seen = [
        *verdicts(str(harness)),
        *verdicts(str(tmp_path / "root")),
        *verdicts(str(flat)),
        *verdicts(str(flat.parent)),
    ]
    for verdict in seen:
        assert (verdict["status"], verdict["line"]) == ("corrupt", 3), verdict
        assert str(verdict["reason"]).startswith("a blank line, which the harness cannot read")


def test_a_moved_session_directory_has_one_verdict_however_the_file_is_named(
    tmp_path: Path,
) -> None:
    path = put(
        tmp_path / "root" / "_no-cwd" / "moved" / "session.jsonl", header("s1") + create(0, 1)
    )
    seen = [
        *verdicts(str(path)),
        *verdicts(str(tmp_path / "root")),
        *verdicts("session.jsonl", cwd=path.parent),
    ]
    for verdict in seen:
        assert (verdict["status"], verdict["line"], verdict["session"]) == ("corrupt", 1, "moved")
        assert "belongs in _no-cwd/s1, not in _no-cwd/moved" in str(verdict["reason"])


def test_a_cut_final_frame_keeps_every_line_the_harness_recovers(tmp_path: Path) -> None:
    """The reference decodes what it can of a cut last frame and keeps its
    complete lines; tickler used to drop the whole frame."""
    data = frames(header("cut"), create(0, 1) + create(1, 2))
    path = put(tmp_path / "cut.jsonl.zstd", data[:-1])  # one byte of the checksum
    result = tickler("inspect", "--json", str(path))
    assert result.returncode == 1
    assert json.loads(result.stdout)["events"] == 2
    assert result.stderr.startswith(f"tickler: {path}:4: torn final zstd frame at byte ")


def test_a_frame_cut_inside_keeps_the_complete_lines_of_its_decodable_blocks(
    tmp_path: Path,
) -> None:
    batch = b"".join(create(seq, seq + 1, prompt=f"p{seq * 7919 % 10007}") for seq in range(3000))
    head = frames(header("cut"))
    last = frames(batch)
    cut = last[: len(last) * 2 // 3]
    # The oracle: zstd's own streaming decoder (the harness uses the same).
    decoded = zstandard.ZstdDecompressor().decompressobj().decompress(cut)
    complete = decoded.count(b"\n")
    assert 0 < complete < 3000
    path = put(tmp_path / "cut.jsonl.zstd", head + cut)
    result = tickler("inspect", "--json", str(path))
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["events"] == complete
    assert result.stderr.startswith(f"tickler: {path}:{complete + 2}: torn final zstd frame")


BOMB_LIMIT = 1 << 30  # the child's address space


def test_a_zstd_bomb_is_reported_within_a_memory_limit(tmp_path: Path) -> None:
    """33 KB that inflate to 1 GiB: reading is streamed and stops at the
    bound (docs/limits.md), in a process that may not use 1 GiB."""
    compressor = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    blank = b"\n" * (1 << 20)  # blank lines: nothing but the size stops the reader
    bomb = b"".join(compressor.compress(blank) for _ in range(1024)) + compressor.flush()
    assert len(bomb) < 64 << 10
    path = put(tmp_path / "bomb.jsonl.zstd", frames(header("bomb")) + bomb)
    limited = (
        "import resource, runpy, sys;"
        f"resource.setrlimit(resource.RLIMIT_AS, ({BOMB_LIMIT}, {BOMB_LIMIT}));"
        "sys.argv = ['tickler', 'check', sys.argv[1]];"
        "runpy.run_module('tickler.adapters.cli', run_name='__main__')"
    )
    result = subprocess.run(
        [sys.executable, "-c", limited, str(path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        f"tickler: {path}: too large to check: it inflates to more than 268,435,456 bytes "
        "of text, the bound for a zstd log\n"
    )
