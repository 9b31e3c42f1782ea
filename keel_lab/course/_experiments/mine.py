"""The learner's own exercise function beside the lab's in an experiment, run safely.

An experiment given `mine=` runs it on the very inputs its own strategies get and shows it as
one more row, column or series labelled `YOURS`. Whatever the learner's code raises - the stub's
`NotImplementedError` or any other error - becomes one line of the report, never a traceback,
and the lab's part is shown whole: the function is watched call by call, so an error is caught
even where the lab's code in between turns it into a failed run.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from keel_lab._i18n import _
from keel_lab.course._experiments.report import COLUMNS

T = TypeVar("T")

YOURS = COLUMNS["yours"]  # the learner's row, column or series; translated where shown


@dataclass
class Mine:
    """The learner's function and the first exception it raised, if any."""

    fn: Callable[..., Any]
    error: Exception | None = None

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", None) or _("your function")

    @property
    def unwritten(self) -> bool:
        """Still the learner edition's stub."""
        return isinstance(self.error, NotImplementedError)

    def watched(self) -> Callable[..., Any]:
        """The function, sync or async as the learner wrote it, noting its first exception
        before passing it on."""
        fn = self.fn
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def watched_async(*args: Any) -> Any:
                try:
                    return await fn(*args)
                except Exception as exc:
                    self._note(exc)
                    raise
            return watched_async

        @functools.wraps(fn)
        def watched(*args: Any) -> Any:
            try:
                return fn(*args)
            except Exception as exc:
                self._note(exc)
                raise
        return watched

    def run(self, use: Callable[[Callable[..., Any]], T]) -> T | None:
        """`use(watched function)`, or None when the function (or the lab's code, on what it
        returned) raised: `line` then says what happened."""
        try:
            value = use(self.watched())
        except Exception as exc:
            self._note(exc)
            return None
        return None if self.error else value  # the lab's code may have absorbed the error

    def _note(self, exc: Exception) -> None:
        if self.error is None:
            self.error = exc

    @property
    def line(self) -> str | None:
        """One line for the report when the function failed; None when it ran."""
        if self.error is None:
            return None
        if self.unwritten:
            return _("yours: {name} is not written yet - replace its `raise "
                     "NotImplementedError` above, then run this cell again").format(name=self.name)
        return _("yours: {name} failed with {error_type}: {error} - the lab's part is shown "
                 "without it").format(name=self.name, error_type=type(self.error).__name__,
                                      error=textwrap.shorten(str(self.error), 160,
                                                             placeholder=" ..."))

