"""How an untrusted field's value is named in an error line: short, one line, always printable.

`repr` of a hostile value can itself fail (an integer past Python's digit limit, a list nested
100,000 deep), so only scalars are shown and everything else by its type.
"""

from __future__ import annotations

from typing import Any


def shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40]) + ("..." if len(value) > 40 else "")
    if value is None or isinstance(value, bool | float):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < 10**40 else "a huge integer"
    return f"a {type(value).__name__}"
