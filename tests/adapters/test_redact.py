"""A DSN's password is masked in any text: a URI's and a ``password``
word's, as written or percent-decoded, and the pieces of one that libpq
read as a host, port or database name."""

from __future__ import annotations

import pytest

from tickler.adapters._redact import mask_dsn, redact

SECRET = "S3CRETpw"


@pytest.mark.parametrize(
    ("dsn", "masked"),
    [
        ("postgresql://ops:S3CRETpw@db:5432/prod", "postgresql://ops:***@db:5432/prod"),
        ("postgres://ops:S3CRETpw@[::1", "postgres://ops:***@[::1"),
        ("postgresql://ops:S3C/RET@pw@db/prod", "postgresql://ops:***@db/prod"),
        ("postgresql://ops@db/prod", "postgresql://ops@db/prod"),
        ("postgresql://db/prod", "postgresql://db/prod"),
        ("host=db password=S3CRETpw dbname=prod", "host=db password=*** dbname=prod"),
        ("host=db password = 'S3 CR\\'ET' dbname=prod", "host=db password = *** dbname=prod"),
        ("host=db PASSWORD='S3CRETpw", "host=db PASSWORD=***"),
    ],
)
def test_a_dsn_is_shown_without_its_password(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked


@pytest.mark.parametrize(
    ("message", "dsn"),
    [
        # libpq's words for DSNs it cannot parse, and for one it parsed
        # otherwise than meant (a / in the password: the user is the host).
        (
            'end of string reached when looking for matching "]" in IPv6 host address '
            'in URI: "postgresql://u:S3CRETpw@[::1"',
            "postgresql://u:S3CRETpw@[::1",
        ),
        ('invalid percent-encoded token: "S3CRETpw%zz"', "postgresql://u:S3CRETpw%zz@h/db"),
        (
            'unexpected spaces found in "S3CRET pw", use percent-encoded spaces (%20) instead',
            "postgresql://u:S3CRET pw@h/db",
        ),
        (
            'invalid integer value "S3CRETpw" for connection option "port"',
            "postgresql://localhost:S3CRETpw/x@h/db",
        ),
        ("cannot connect to PostgreSQL at u:S3CR", "postgresql://u:S3CR/ETpw@[::1/db"),
        ("the password is S3CRETpw, decoded", "postgresql://u:S3CRET%70w@h/db"),
    ],
)
def test_libpq_messages_lose_the_password(message: str, dsn: str) -> None:
    shown = redact(message, [dsn])
    assert "S3CR" not in shown
    assert "***" in shown


def test_free_text_loses_any_uri_or_word_password() -> None:
    text = "tried https://bot:tok3n@hooks.example/x and host=db password='p w' port=1"
    assert redact(text) == "tried https://bot:***@hooks.example/x and host=db password=*** port=1"


def test_a_short_password_is_masked_only_where_it_stands_alone() -> None:
    dsn = "postgresql://localhost:pw/x@h/db"  # libpq reads "pw" as the port
    assert redact('invalid integer value "pw" for connection option "port"', [dsn]) == (
        'invalid integer value "***" for connection option "port"'
    )
    assert redact("password authentication", [dsn]) == "password authentication"


def test_text_without_a_password_is_left_as_it_is() -> None:
    text = 'cannot connect to PostgreSQL at 127.0.0.1:5432: FATAL: database "prod" does not exist'
    assert redact(text, ["postgresql://127.0.0.1/prod", "host=db", ""]) == text
