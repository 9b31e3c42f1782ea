"""The package's messages in the learner's language: check verdicts and hints, plot labels,
`make check`'s summary, the progress table.

English is the source: a message is marked `_("...")` where it is used, and `N_("...")` where it
is defined at import time (a module constant) and translated where it is shown. A message with
placeholders is translated as a template, then formatted: `_("{n} of {total}").format(...)`, so
one catalog entry serves every value. The catalog is the gettext `.po` file shipped in
`keel_lab/locale/` (read with Babel, nothing compiled to keep in step); a message it lacks, or
marks fuzzy because its English changed, falls back to English. The language is `KEEL_LAB_LANG`
(`en` or `zh`), `en` when unset; `set_language` changes it for the process (a Chinese notebook's
first cell does).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import IO

from keel_lab.core.errors import LabError

ENV = "KEEL_LAB_LANG"
DOMAIN = "keel_lab"
LOCALES: dict[str, str | None] = {"en": None, "zh": "zh_CN"}  # option -> catalog (None: source)

_chosen: str | None = None  # set_language's choice; None: the environment's


def _checked(code: str, where: str) -> str:
    if code not in LOCALES:
        raise LabError(f"{where}: unknown language {code!r}; choose one of "
                       + ", ".join(LOCALES))
    return code


def set_language(code: str) -> None:
    """Translate the package's messages into `code` ("en" or "zh") from now on."""
    global _chosen
    _chosen = _checked(code, "set_language")


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Messages in `code` while the block runs when it is a language the package speaks other
    than English; else in the environment's, as always. The choice before is put back after,
    so a process (a test's) goes on as it was."""
    global _chosen
    if code == "en" or code not in LOCALES:
        yield
        return
    before = _chosen
    set_language(code)
    try:
        yield
    finally:
        _chosen = before


def language() -> str:
    """The language messages are shown in: `set_language`'s, else `KEEL_LAB_LANG`, else en."""
    if _chosen is not None:
        return _chosen
    return _checked(os.environ.get(ENV) or "en", ENV)


def translations(po: IO[bytes], locale: str) -> dict[str, str]:
    """English -> translation for every translated, non-fuzzy message of a `.po` file."""
    from babel.messages.pofile import read_po  # only a translated session pays for Babel

    return {m.id: m.string for m in read_po(po, locale=locale, domain=DOMAIN)
            if isinstance(m.id, str) and m.id and isinstance(m.string, str) and m.string
            and not m.fuzzy}


@cache
def catalog(locale: str) -> dict[str, str]:
    """The shipped catalog of `locale`, read once."""
    path = resources.files("keel_lab") / "locale" / locale / "LC_MESSAGES" / f"{DOMAIN}.po"
    try:
        with path.open("rb") as f:
            return translations(f, locale)
    except OSError as exc:
        raise LabError(f"{path}: the {locale} catalog is missing - an incomplete install "
                       "(reinstall keel-lab)") from exc


def _(message: str) -> str:
    """`message` in the current language; English without a (non-fuzzy) translation."""
    locale = LOCALES[language()]
    return message if locale is None else catalog(locale).get(message, message)


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; `_` translates it where shown."""
    return message
