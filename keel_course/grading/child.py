"""The grading process of one submission, started by `sandbox` as `python -I` with a job file.

It reads and deletes its job file, limits itself (memory, CPU time, file size, no core file;
hard limits too, so they stay), keeps its standard output as the channel to the grader and
points file descriptor 1 at /dev/null, so nothing the learner's code prints - however much -
reaches the grader or is kept. Then it imports the lab, snapshots it (`integrity`), runs the
planned code in one namespace and, where each exercise's check cell stands, serves the function
bound to its name to the grader, which judges it in its own process (`remote`): every call is
watched (`guard`), and what it returned crosses as plain data. Every step is announced on the
channel, so a process that hangs or dies is reported with where it was. A change to the lab's
code refuses the exercises served after it, then the lab is put back. The inputs are the
grader's: this process never sees the seed they were drawn from.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import io
import json
import linecache
import os
import resource
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from keel_course.grading.guard import Guard
from keel_course.grading.hints import described, moved, refusal, short
from keel_course.grading.integrity import Snapshot, import_lab
from keel_course.grading.plain import given, lab_object, to_plain
from keel_course.grading.remote import Requests, serve

FILE_SIZE = 64 * 1024 * 1024


class _Discard(io.TextIOBase):
    """sys.stdout and sys.stderr for the learner's code: everything written is dropped."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


class Channel:
    """One JSON object a line, on a file descriptor the learner's code does not print to."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, **message: Any) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]


def limit(memory: int, cpu: int) -> None:
    """Soft and hard limits alike, so the learner's code cannot raise them again."""
    for name, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu),
                        (resource.RLIMIT_FSIZE, FILE_SIZE), (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(name)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(name, (value, value))


def quiet() -> Channel:
    """The channel on a copy of stdout; fds 0, 1 and 2 on /dev/null; Python's streams dropped.
    (Until here, stderr went to a file the grader reads when the process fails to start.)"""
    channel = Channel(os.dup(1))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdout = sys.stderr = _Discard()
    return channel


def run_chunk(chunk: dict[str, Any], namespace: dict[str, Any],
              elsewhere: dict[str, int] | None = None) -> str | None:
    """Run one cell's planned code (its statements numbered in `keep`, or all of it; a
    top-level `await` runs on the virtual clock, as a notebook would run it); None, or the
    error line naming the cell."""
    from keel_course.grading.plan import python
    from keel_lab._core.clock import run_coroutine

    number, source, keep = chunk["cell"], chunk["source"], chunk["keep"]
    name = f"<cell {number}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # for hints
    try:
        tree = ast.parse(python(source), name)
        if keep is not None:
            tree.body = [tree.body[n] for n in keep]
        code = compile(tree, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                       dont_inherit=True)
        if code.co_flags & inspect.CO_COROUTINE:
            run_coroutine(eval(code, namespace))
        else:
            exec(code, namespace)
    except SyntaxError as exc:
        return short(f"cell {number}: SyntaxError at line {exc.lineno}: {exc.msg}")
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the grader goes on
        return short(f"cell {number} raised {described(exc)}{moved(exc, elsewhere)}")
    return None


def grade(job: dict[str, Any], channel: Channel, requests: Requests) -> None:
    """Run the chunks in order; where each exercise's check cell stands, serve its function to
    the grader, which judges it."""
    import_lab()
    snapshot = Snapshot()
    elsewhere = job["elsewhere"]
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins,
                                 "display": _display}
    chunks, after = job["chunks"], job["checked_after"]
    changed: list[str] = []
    for at in range(len(chunks) + 1):
        for name in (x for x in job["exercises"] if after.get(x, len(chunks)) == at):
            changed = changed or snapshot.changes()
            if changed:
                snapshot.restore()
            channel.send(at=f"checking {name}")
            offer(name, namespace, changed, snapshot, channel, requests)
        if at < len(chunks):
            channel.send(at=f"running cell {chunks[at]['cell']}")
            error = run_chunk(chunks[at], namespace, elsewhere)
            if error:
                channel.send(error=error)
            now = [] if changed else snapshot.changes()
            if now:
                channel.send(error=short(f"the notebook changed the lab's code: {now[0]}"))


def _display(*objects: Any, **options: Any) -> None:
    """IPython's `display`, for code that calls it: the grader shows nothing."""


def offer(name: str, namespace: dict[str, Any], changed: list[str], snapshot: Snapshot,
          channel: Channel, requests: Requests) -> None:
    """Serve the function bound to `name` to the grader's verifier, each call watched: what it
    returned or raised, how far it moved the virtual clock, what the watch found."""
    from keel_checks.check import exercise_of

    fn = namespace.get(name)
    refused = refusal(f"the notebook changed the lab's code ({changed[0]})") if changed else None
    # the exercise it is bound to, as `check` finds it: a lambda or a partial is judged too
    channel.send(serve=name, defined=name in namespace, refused=refused,
                 name=exercise_of(fn, namespace) if fn is not None else None)
    from keel_checks.delegation import watched
    from keel_checks.verdict import where
    from keel_lab._core.clock import clock_moves

    guard = Guard(snapshot)

    def call(fn: Callable[..., Any], args: tuple[Any, ...], lab: list[str],
             driver: str | None) -> dict[str, Any]:
        target = guard.wrap(fn)
        if lab:
            target = watched(target, tuple(map(_lab_object, lab)))
        if driver is not None:  # the check's own driving of the learner's coroutine
            target = functools.partial(_lab_object(driver), target)
        reply: dict[str, Any]
        known = given(args)
        before = [to_plain(a, known) if type(a) in (list, dict) else None for a in args]
        with clock_moves() as moved:
            try:
                reply = {"return": to_plain(target(*args), known)}
            except BaseException as exc:  # SystemExit too: the grader judges it as raised
                reply = {"raise": _error(exc, "" if driver else where(exc, fn))}
        after = [to_plain(a, known) if type(a) in (list, dict) else None for a in args]
        if after != before:  # the learner's code changed its input: the grader's changes too
            reply["after"] = after
        # the whole lab after a driver (the check's own code ran here), its functions' code
        # after a plain call (7 ms against 0.5 ms a call: pair_results is called 60 times)
        now = snapshot.changes() if driver else snapshot.code_changes()
        found = [*(f"changed the lab's code: {w}" for w in now[:1]), *guard.found]
        if now:
            snapshot.restore()
        return reply | {"moved": sum(moved), "woke": sum(1 for m in moved if m > 0),
                        **({"found": found[0]} if found else {}),
                        **({"copy": guard.copy} if guard.copy else {})}

    if fn is not None:
        serve(requests, fn, call)
    else:
        requests.next()  # the grader's ("done",): it judged a missing function


def _lab_object(name: str) -> Any:
    """The lab object the grader named (the checks imported its module before any learner
    code ran)."""
    found = lab_object(name)
    if found is None:
        raise LookupError(f"the grader named {name!r}, which is no lab object here")
    return found


def _error(exc: BaseException, where: str) -> dict[str, Any]:
    """An exception of the learner's code as plain data: its type, module, arguments and place."""
    kind = type(exc)
    base = next(c.__name__ for c in kind.__mro__ if c.__module__ == "builtins")
    attrs = {k: to_plain(v) for k, v in getattr(exc, "__dict__", {}).items()
             if isinstance(k, str) and not k.startswith("_") and k != "keel_sent"}
    sent = getattr(exc, "keel_sent", None)
    frames = list(traceback.walk_tb(exc.__traceback__))
    last = f"{frames[-1][0].f_globals.get('__name__')}:{frames[-1][0].f_code.co_qualname}" \
        if frames else ""
    return {"sent": sent if type(sent) is int else None, "raised_in": last,
            "type": kind.__name__, "qualname": kind.__qualname__, "module": kind.__module__,
            "base": base, "args": to_plain(list(exc.args)), "attrs": attrs,
            "message": short(described(exc)), "where": where}


def main() -> None:
    job_file = Path(sys.argv[1])
    job = json.loads(job_file.read_text(encoding="utf-8"))
    job_file.unlink()  # the learner's code does not read the inputs drawn for this run
    limit(job["memory"], job["cpu"])
    requests_fd = os.dup(0)
    channel = quiet()
    try:
        grade(job, channel, Requests(requests_fd, channel.send))
    except BaseException as exc:  # the grader's own failure (or what the learner's code did to it)
        channel.send(error=short(f"grading failed: {described(exc)}"))
        os._exit(1)
    channel.send(done=True)
    os._exit(0)  # neither the learner's threads nor their atexit handlers hold the process


if __name__ == "__main__":
    main()
