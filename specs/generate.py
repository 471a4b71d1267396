"""Write the generated contracts in this folder from the code.

python specs/generate.py          # rewrite the tool catalogs and change schemas
python specs/generate.py --check  # exit 1 when the checked-in files drift
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tickler.core import tool_catalog
from tickler.core._schema import change_schema, change_schema_v2

HERE = Path(__file__).resolve().parent


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def contracts() -> dict[str, str]:
    return {
        "tool-catalog.json": _dump(tool_catalog(profile="reference")),
        "tool-catalog-extended.json": _dump(tool_catalog(profile="extended")),
        "change-schema.json": _dump(change_schema()),
        "change-schema-v2.json": _dump(change_schema_v2()),
    }


def main(argv: list[str]) -> int:
    drift = []
    for name, text in contracts().items():
        path = HERE / name
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                drift.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    for name in drift:
        print(f"specs/{name} drifted from the code: run `make specs`", file=sys.stderr)
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
