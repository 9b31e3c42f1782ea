"""The course's sources as the commands that publish them (`keel-course handout`, `keel-course
nbgrader`) meet them: folders of the checkout those commands must never write into
(`Checkout.sources`), solution notebooks that may be damaged, and file errors told in one line
that names the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from keel_course.checkout import Checkout
from keel_lab._core.errors import LabError
from keel_lab._i18n import N_


def check_outside(folder: Path, checkout: Checkout) -> None:
    """`LabError` when `folder` is (or would be) inside the checkout's package, its data or its
    notebooks."""
    try:
        where = folder.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise LabError("unresolvable_folder", N_("{folder}: cannot tell where it is ({reason})"),
                       folder=folder, reason=exc) from exc
    inside = [d for d in checkout.sources if where.is_relative_to(d)]
    if inside:
        raise LabError("inside_sources", N_("{folder} is inside {source}: give a folder outside "
                                            "the course's sources"),
                       folder=folder, source=inside[0])


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn any error met while the notebook at `path` is read and made into another edition
    into one line naming it: a half-written or hand-edited notebook is a user's mistake."""
    try:
        yield
    except OSError as exc:
        raise LabError("cannot_read", N_("{path}: cannot read ({reason})"),
                       path=path, reason=exc.strerror or exc) from exc
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError,
            SyntaxError) as exc:  # not JSON, or cells of the wrong shape
        raise LabError("unreadable_notebook", N_("{path} is not a notebook the course can read "
                                                 "({error}); restore it, or rebuild it with "
                                                 "`make notebooks`"),
                       path=path, error=type(exc).__name__) from exc


def failure(exc: OSError) -> str:
    """Why the system refused, naming the file it refused ("Is a directory" alone names none)."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason
