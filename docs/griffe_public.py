"""A griffe extension for the API reference (docs/api.md), named in
mkdocs.yml. An attribute set in ``__init__`` without a docstring of its own
is an object's state, not its API: it is left out (a documented one stays).
A Sphinx role in a docstring (``:class:`~tickler.shell.Session```) reads as
code, the name as Sphinx would show it."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    short, name = match.groups()
    return f"`{name.rsplit('.', 1)[-1] if short else name}`"


class PublicApi(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)

    def on_module(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        self.on_object(obj=mod)

    def on_class(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        for name, member in list(cls.members.items()):
            state = not member.is_alias and "instance-attribute" in member.labels
            if state and member.docstring is None:
                cls.del_member(name)
