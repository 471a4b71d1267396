"""Every schedule change says its version as its logged form does.

``version`` is a field of the version-1 changes and a property of the
version-2 ones (``CreateChangeV2``, ``UpdateChange``, ``DeleteChangeV2``);
the encoder writes the number itself, so only this test holds the property
to the wire: a reader that branches on ``change.version`` sees what the
log says.
"""

from __future__ import annotations

import json

import pytest

from tickler.core import decode_change, encode_change

LINES = [
    b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"after",'
    b'"prompt":"p","afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z"}}',
    b'{"version":2,"operation":"create","schedule":{"id":"schedule-1","kind":"calendar",'
    b'"prompt":"p","cron":"0 9 13 * fri","timeZone":"UTC","dstGap":"shift",'
    b'"dstOverlap":"first","scheduledAt":"2026-02-06T09:00:00.000Z"}}',
    b'{"version":1,"operation":"delete","id":"schedule-1"}',
    b'{"version":2,"operation":"delete","id":"schedule-1","by":"ana"}',
    b'{"version":1,"operation":"dispatch","id":"schedule-1"}',
    b'{"version":2,"operation":"update","id":"schedule-1","paused":true,"by":"ana"}',
]


@pytest.mark.parametrize("line", LINES, ids=lambda line: line.decode()[:40])
def test_a_changes_version_is_its_logged_version(line: bytes) -> None:
    change = decode_change(line)
    assert change.version == json.loads(line)["version"]
    assert json.loads(encode_change(change))["version"] == change.version
