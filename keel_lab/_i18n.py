"""The package's messages in the learner's language: check verdicts and hints, plot labels,
`make check`'s summary, the progress table.

English is the source: a message is marked `_("...")` where it is used, and `N_("...")` where it
is defined at import time (a module constant) and translated where it is shown. A message with
placeholders is translated as a template, then formatted: `_("{n} of {total}").format(...)`, so
one catalog entry serves every value; a message whose words depend on a count is marked
`ngettext(singular, plural, n)`, and each language picks its form by its own rule. The catalog
is the gettext `.po` file shipped in `keel_lab/locale/` (read with Babel, nothing compiled to
keep in step); a message it lacks, or marks fuzzy because its English changed, falls back to
English. The language is `KEEL_LAB_LANG` (`en` or `zh`), `en` when unset; `set_language`
changes it for the process (a Chinese notebook's first cell does).
"""

from __future__ import annotations

import gettext
import os
import re
import string
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import IO, Any

ENV = "KEEL_LAB_LANG"
DOMAIN = "keel_lab"
# option -> catalog (None: the English source). "qps" is the pseudo-locale (Windows' qps-ploc):
# every message turned to nonsense with its placeholders kept, so a test sees whether any code
# decides by reading a message instead of its code.
LOCALES: dict[str, str | None] = {"en": None, "zh": "zh_CN", "qps": "qps"}


@dataclass(frozen=True)
class Said:
    """A message by its kind: `code` is what code decides and groups by (stable across languages
    and wordings), `params` what it is about; the text is rendered from them, in the learner's
    language, only where it is shown (`str`)."""

    code: str
    template: str  # the English source, marked N_() where it is written
    params: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return _(self.template).format(**self.params)


class LabError(Exception):
    """Bad input from a learner or practitioner: the CLI prints it, it never becomes a traceback.
    `code` says which mistake (decisions read it), `params` which call and what is wrong; the
    message is rendered from them in the learner's language when shown."""

    def __init__(self, code: str, template: str, /, **params: Any) -> None:
        super().__init__(code)
        self.said = Said(code, template, params)

    @property
    def code(self) -> str:
        return self.said.code

    @property
    def params(self) -> Mapping[str, Any]:
        return self.said.params

    def __str__(self) -> str:
        return str(self.said)


_chosen: str | None = None  # set_language's choice; None: the environment's


def _checked(code: str, where: str) -> str:
    if code not in LOCALES:
        raise LabError("unknown_language", N_("{where}: unknown language {code!r}; choose one of "
                                              "{choices}"),
                       where=where, code=code,
                       choices=", ".join(c for c in LOCALES if c != "qps"))
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


def _chosen_code() -> str:
    return _chosen or os.environ.get(ENV) or "en"


def language() -> str:
    """The language messages are shown in: `set_language`'s, else `KEEL_LAB_LANG`, else en."""
    return _checked(_chosen_code(), ENV)


class Translations(dict[str, str]):
    """A catalog as read: English -> translation, what `_` looks up; `plurals` holds its plural
    entries, (singular, plural) English -> the translation's forms, and `form(n)` says which
    form a count takes (the catalog's Plural-Forms rule: Chinese has one form)."""

    def __init__(self, texts: dict[str, str], plurals: dict[tuple[str, str], tuple[str, ...]],
                 form: Callable[[int], int],
                 contexts: dict[tuple[str, str], str] | None = None) -> None:
        super().__init__(texts)
        self.plurals, self.form = plurals, form
        self.contexts = contexts or {}  # (msgctxt, English) -> translation: `pgettext`'s


def translations(po: IO[bytes], locale: str) -> Translations:
    """Every translated, non-fuzzy message of a `.po` file (a plural entry only when all its
    forms are translated)."""
    from babel.messages.pofile import read_po  # only a translated session pays for Babel

    read = read_po(po, locale=locale, domain=DOMAIN)
    done = [m for m in read if m.id and m.string and not m.fuzzy]
    return Translations(
        {m.id: m.string for m in done if isinstance(m.id, str) and isinstance(m.string, str)
         and not m.context},
        {(m.id[0], m.id[1]): tuple(m.string) for m in done
         if isinstance(m.id, tuple) and isinstance(m.string, tuple) and all(m.string)},
        gettext.c2py(read.plural_expr),
        {(m.context, m.id): m.string for m in done
         if m.context and isinstance(m.id, str) and isinstance(m.string, str)})


@cache
def catalog(locale: str) -> Translations:
    """The shipped catalog of `locale`, read once."""
    path = resources.files("keel_lab") / "locale" / locale / "LC_MESSAGES" / f"{DOMAIN}.po"
    try:
        with path.open("rb") as f:
            return translations(f, locale)
    except OSError as exc:
        raise LabError("catalog_missing", N_("{path}: the {locale} catalog is missing - an "
                                             "incomplete install (reinstall keel-lab)"),
                       path=path, locale=locale) from exc


def _locale() -> str | None:
    # an unknown language is refused where it is chosen; its own error is shown in English
    return LOCALES.get(_chosen_code())


def _(message: str) -> str:
    """`message` in the current language; English without a (non-fuzzy) translation."""
    locale = _locale()
    if locale == "qps":
        return pseudo(message)
    return message if locale is None else catalog(locale).get(message, message)


def pgettext(context: str, message: str) -> str:
    """`message` as `_` gives it, told apart by `context` from the same English used elsewhere
    (a diagram's box "calls" is not a table's column "calls", a count)."""
    locale = _locale()
    if locale == "qps":
        return pseudo(message)
    return message if locale is None else catalog(locale).contexts.get((context, message),
                                                                        message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message that the count `n` takes, in the current language: English's
    singular for n == 1, else its plural; a catalog's by its own rule. Format it after, as
    with `_`: `ngettext("{n} call", "{n} calls", n).format(n=n)`."""
    english = singular if n == 1 else plural
    locale = _locale()
    if locale == "qps":
        return pseudo(english)
    if locale is None:
        return english
    found = catalog(locale)
    forms = found.plurals.get((singular, plural))
    return forms[min(found.form(n), len(forms) - 1)] if forms else english


# A run of letters, unless it is what every translation keeps as it is (the Chinese catalog's
# test asks it to): code in backticks, or an identifier - a word with a digit or an underscore
# (INC-001, tool_call_id).
_WORD = re.compile(r"(`[^`]*`|[\w-]*[\d_][\w-]*)|[A-Za-z]+")


def _garbled(text: str) -> str:
    return _WORD.sub(lambda m: m.group(1) or m.group()[::-1].swapcase(), text)


def pseudo(message: str) -> str:
    """`message` in the pseudo-locale: every run of letters outside a placeholder, code or an
    identifier reversed, and the whole bracketed, so no English phrase survives, while
    `{placeholders}`, what a translation keeps and the text's shape do."""
    parts = []
    try:
        pieces = list(string.Formatter().parse(message))
    except ValueError:  # a lone brace: a message never formatted
        return "\u27e6" + _garbled(message) + "\u27e7"
    for literal, name, spec, conversion in pieces:
        parts.append(_garbled(literal).replace("{", "{{").replace("}", "}}"))
        if name is not None:
            parts.append("{" + name + (f"!{conversion}" if conversion else "")
                         + (f":{spec}" if spec else "") + "}")
    return "\u27e6" + "".join(parts) + "\u27e7"


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; `_` translates it where shown."""
    return message


def listing(items: Iterable[str]) -> str:
    """Items joined as the language lists them (Chinese with its enumeration comma)."""
    return _(", ").join(items)
