"""Tool profiles: which contract a tool surface speaks.

``reference`` is the exact v1 contract (the reference's texts, catalog and
events); ``extended`` adds calendar reminders and the other v2 features. A
session that uses no extended feature writes only v1 events in either.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

Profile: TypeAlias = Literal["reference", "extended"]
PROFILES: Final[tuple[Profile, ...]] = get_args(Profile)
DEFAULT_PROFILE: Final[Profile] = "extended"
