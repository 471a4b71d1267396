"""A failure's text goes to stderr warnings and into the log: whatever the
exception says, it is one bounded line with no control character left to
act on a terminal (ESC, OSC, CSI, BEL, C1)."""

from __future__ import annotations

from tickler.shell._records import ERROR_TEXT_MAX, error_text


def test_control_characters_are_shown_as_escapes() -> None:
    text = error_text(OSError("down \x1b]8;;http://evil\x07link\x1b]8;;\x07 \x9b2J \x7f"))
    assert text == "OSError: down \\x1b]8;;http://evil\\x07link\\x1b]8;;\\x07 \\x9b2J \\x7f"
    assert all(0x20 <= ord(c) < 0x7F or ord(c) > 0x9F for c in text)


def test_whitespace_is_one_line_and_the_text_is_bounded() -> None:
    assert error_text(ValueError("a\n\tb")) == "ValueError: a b"
    assert error_text(RuntimeError()) == "RuntimeError"
    assert len(error_text(ValueError("x" * 10_000))) == ERROR_TEXT_MAX
