"""`make check`'s pytest plugin, loaded before nbval (`-p keel_checks.pytest_plugin -p nbval`).

nbval reads the notebooks with nbformat, which imports jsonschema, which imports the optional
`rfc3987_syntax` for its "iri" format checker, and that builds a grammar at import: about 1 s of
a one-chapter `make check`, for a format nbformat's validation (JSON Schema draft 4) never
checks. jsonschema is imported here first as the lab imports it (`keel_lab._core.tools`), without
that grammar; what is checked does not change.
"""

from __future__ import annotations

from keel_lab._core.tools import schema_errors

schema_errors({}, None)  # the first validation imports jsonschema, without the "iri" grammar
