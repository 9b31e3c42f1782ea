"""Matplotlib figures for the experiments' reports. Importing this module loads matplotlib.

Each function takes a `Report` and returns a `Figure` (no pyplot state), so the CLI can save it
and a notebook can show it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from keel_lab._i18n import N_, _, listing
from keel_lab.course._alt import describe, number
from keel_lab.course._experiments.mine import YOURS
from keel_lab.course._experiments.report import Report
from keel_lab.course._fonts import register_cjk_font
from keel_lab.course._sampling import binomial_range
from keel_lab.course._styles import indexed, style

register_cjk_font()  # Chinese labels draw from the shipped subset, Latin text stays DejaVu Sans


# Executor modes as the experiments name them: "sequential", or a kind with its limit.
MODES = {"concurrent": N_("concurrent(limit={limit})"), "batches": N_("batches(limit={limit})"),
         "graph": N_("graph(limit={limit})")}


def _mode(mode: str) -> str:
    """An executor mode's name in the learner's language ("concurrent(limit=4)" -> 并发...)."""
    limited = re.fullmatch(r"(\w+)\(limit=(\d+)\)", mode)
    if limited and limited[1] in MODES:
        return _(MODES[limited[1]]).format(limit=limited[2])
    return _(mode)


class LiveFigure(Figure):
    """A figure an explorer keeps (`refresh`): it shows another report of its shape in place,
    `fill` setting its artists' data, limits and texts and its alt text. A fresh figure is
    built with empty artists and filled by the same `fill`, so both show the same."""

    shape_of: Callable[[Report], Hashable] | None = None  # what its artists can hold
    shape: Hashable = None
    fill: Callable[[Report], None] | None = None

    def can_show(self, report: Report) -> bool:
        return self.shape_of is not None and self.shape_of(report) == self.shape


def _figure(width: float = 7.0, height: float = 3.6) -> tuple[LiveFigure, Any]:
    fig = LiveFigure(figsize=(width, height), dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def _live(fig: LiveFigure, shape_of: Callable[[Report], Hashable],
          fill: Callable[[Report], None], report: Report) -> LiveFigure:
    """Make `fig` live: `fill` shows `report` now, and later any report of its shape."""
    fig.shape_of, fig.shape, fig.fill = shape_of, shape_of(report), fill
    fill(report)
    return fig


def _theory(ax: Any, p: float, trials: int, label: str) -> Callable[[float, int, str], None]:
    """The count theory expects over `trials` trials, and the range sampling noise allows; the
    setter it returns moves both to another theory."""
    line, span = ax.axhline(0, ls="--", color="black"), ax.axhspan(0, 0, color="grey", alpha=0.25)

    def move(p: float, trials: int, label: str) -> None:
        low, high = binomial_range(p, trials)
        line.set_ydata([trials * p] * 2)
        line.set_label(label)
        span.set_y(trials * low)
        span.set_height(trials * (high - low))
        span.set_label(_("95% range of a count over {trials} trials").format(trials=trials))

    move(p, trials, label)
    return move


def _strategies(report: Report) -> tuple[str, ...]:
    return ("pairing", *report.data["strategies"])


def pairing_bars(report: Report) -> Figure:
    """Trials in which some call lacked its own result (another call's, or none), per strategy,
    beside the theory line and the range sampling noise allows around it."""
    names = list(report.data["strategies"])
    fig, ax = _figure(8.5) if "yours" in names else _figure()  # room for a fifth name
    shown = [_(YOURS) if n == "yours" else n for n in names]
    bars = [ax.bar(x, 0, **style(n).fill())[0] for x, n in zip(shown, names, strict=True)]
    labels = [ax.bar_label(ax.containers[i]) for i in range(len(bars))]
    theory = _theory(ax, 0, 1, "")
    ax.set_ylabel(_("trials with a mismatch"))
    ax.tick_params(axis="x", labelsize=8)

    def fill(report: Report) -> None:
        values = [report.data["strategies"][n]["trials_with_mismatch"] for n in names]
        for bar, label, value in zip(bars, labels, values, strict=True):
            bar.set_height(value)
            label[0].set_text(f"{value:g}")
            label[0].xy = (label[0].xy[0], value)
        trials, p = report.params["trials"], report.data["theory"]
        theory(p, trials, _("theory for completion order: {p} x trials").format(p=f"{p:.3f}"))
        ax.set_title(_("Trials with a wrong or missing result ({trials} trials, {calls} calls)")
                     .format(trials=trials, calls=report.params["calls"]))
        ax.set_ylim(0, trials * 1.1)
        ax.legend(loc="upper left", fontsize=8)
        describe(fig, _("trials with a mismatch out of {trials} per strategy: {counts}; "
                        "theory for completion order: {expected}").format(
            trials=number(trials), expected=number(round(trials * p)),
            counts=listing(f"{n} {number(v)}" for n, v in zip(shown, values, strict=True))))

    return _live(fig, _strategies, fill, report)


def _rate_plot(report: Report, x: str, xlabel: str, title: str) -> Figure:
    fig, ax = _figure()
    rows = report.rows
    xs = [r[x] for r in rows]
    for key in ("position_over_completion", "by_call_id"):
        ax.plot(xs, [r[key] for r in rows], **style(key).line(),
                label=_("{key} (measured)").format(key=key))
    ax.plot(xs, [r["theory"] for r in rows], "k--", label=_("theory 1 - 1/n!"))
    trials = report.params["trials"]
    band = [binomial_range(r["theory"], trials) for r in rows]
    ax.fill_between(xs, [lo for lo, _ in band], [hi for _, hi in band], color="grey",
                    alpha=0.25,
                    label=_("95% range of a rate measured over {trials} trials")
                    .format(trials=trials))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(_("share of trials with a mismatch"))
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title)
    ax.legend(fontsize=8)

    def shares(key: str) -> str:
        return listing(number(r[key]) for r in rows)

    return describe(fig, _("{xlabel}: {xs}; share of trials with a mismatch, "
                           "position_over_completion: {measured}; by_call_id: {ids}; "
                           "theory: {theory}").format(
        xlabel=xlabel, xs=listing(f"{x:g}" for x in xs), measured=shares(
            "position_over_completion"), ids=shares("by_call_id"), theory=shares("theory")))


def spread_plot(report: Report) -> Figure:
    fig = _rate_plot(report, "spread_ms",
                     _("delay spread (ms; symlog axis: linear up to 1 ms, logarithmic above)"),
                     _("Mismatch rate vs delay spread ({calls} calls)")
                     .format(calls=report.params["calls"]))
    ax = fig.axes[0]
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(0, max(r["spread_ms"] for r in report.rows) * 1.3)
    return fig


def calls_plot(report: Report) -> Figure:
    return _rate_plot(report, "calls", _("calls in one turn"),
                      _("Mismatch rate vs number of calls (delays 10-500 ms)"))


def order_bars(report: Report) -> Figure:
    fig, ax = _figure(6, 3.4)
    names = list(report.data["in_request_order"])
    trials = report.params["trials"]
    counts = [report.data["in_request_order"][n] for n in names]
    for name, count in zip(names, counts, strict=True):
        ax.bar_label(ax.bar(name, count, **style(name).fill()))
    p = 1 / math.factorial(report.params["calls"])
    _theory(ax, p, trials,
            _("theory for as_completed: trials / {calls}!").format(calls=report.params["calls"]))
    ax.set_ylabel(_("trials in request order"))
    ax.set_ylim(0, trials * 1.1)
    ax.set_title(_("How often results come back in request order"))
    ax.legend(fontsize=8)
    return describe(fig, _("trials in request order out of {trials}: {counts}; theory for "
                           "as_completed: {expected}").format(
        trials=number(trials), expected=number(round(trials * p)),
        counts=listing(f"{n} {number(c)}" for n, c in zip(names, counts, strict=True))))


def exceptions_bars(report: Report) -> Figure:
    """Calls left without their own result, split: given another call's result (wrong), or
    none at all (lost, unanswered). The report's `mismatched_pairs` counts both."""
    fig, ax = _figure()
    strategies = report.data["strategies"]
    names = list(strategies)
    lost = [strategies[n]["unanswered_calls"] for n in names]
    wrong = [strategies[n]["mismatched_pairs"] - k for n, k in zip(names, lost, strict=True)]
    width = 0.38
    for k, (values, key, label) in enumerate(
            ((wrong, "wrong", _("wrong: given another call's result")),
             (lost, "lost", _("lost: no result, the call is unanswered")))):
        xs = [i + (k - 0.5) * width for i in range(len(names))]
        bars = ax.bar(xs, values, width, label=label, **style(key).fill())
        ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylabel(_("calls without their own result"))
    ax.set_title(_("When calls raise (failure rate {rate})")
                 .format(rate=report.params["failure_rate"]))
    ax.legend(fontsize=8)
    return describe(fig, _("calls given another call's result / calls left unanswered, per "
                           "strategy: {counts}").format(counts=listing(
        f"{n} {number(w)} / {number(k)}" for n, w, k in zip(names, wrong, lost, strict=True))))


def _calls(report: Report) -> tuple[str, tuple[int, ...], bool]:
    """A stream plot's shape: its calls, and whether they become executable."""
    return ("streaming", tuple(sorted({r["index"] for r in report.rows})),
            report.data["first_executable_chunk"] is not None)


def stream_plot(report: Report) -> Figure:
    """Arguments received per call against the chunk number, a dot for every chunk that carried
    a fragment of it (so interleaved calls show their alternation); where each parses and runs."""
    fig, ax = _figure(9.0, 3.6)
    _name, indexes, finishes = _calls(report)
    steps, parsed = {}, {}
    for index in indexes:
        steps[index], = ax.step([], [], where="post", **indexed(index).line(),
                                label=_("call {index}: argument characters").format(index=index))
        parsed[index], = ax.plot([], [], "o", mfc="none", color="black")
    ax.plot([], [], ".", color="black", label=_("dot: a chunk carrying a fragment"))
    ax.plot([], [], "o", mfc="none", color="black", label=_("parses, not executable"))
    finish_line = ax.axvline(0, color="black", ls=(0, (6, 2)), lw=1.5,
                             label=_("finish: calls become executable")) if finishes else None
    ax.set_xlabel(_("chunk"))
    ax.set_ylabel(_("characters of arguments"))
    ax.set_title(_("Streamed fragments: nothing runs before the stream closes"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    def fill(report: Report) -> None:
        rows = report.rows
        for index in indexes:
            mine = [r for r in rows if r["index"] == index]
            steps[index].set_data([r["chunk"] for r in mine], [len(r["arguments"]) for r in mine])
            done = [r for r in mine if r["parses"] and not r["executable"]]
            parsed[index].set_data([r["chunk"] for r in done], [len(r["arguments"]) for r in done])
        finish = report.data["first_executable_chunk"]
        if finish_line is not None:
            finish_line.set_xdata([finish, finish])
        ax.relim()
        ax.autoscale_view()
        final = listing(_("call {index}: {n}").format(
            index=i, n=number(len([r for r in rows if r["index"] == i][-1]["arguments"])))
            for i in indexes)
        describe(fig, (_("argument characters per call when the stream ends: {final}; "
                         "the calls become executable at chunk {finish} of {chunks}")
                       if finish is not None else
                       _("argument characters per call when the stream ends: {final}; "
                         "no call becomes executable")).format(
            final=final, finish=finish, chunks=max((r["chunk"] for r in rows), default=0)))

    return _live(fig, _calls, fill, report)


def timeline_gantt(report: Report) -> Figure:
    """Each call's span on the clock, sequential above, concurrent below."""
    spans = report.rows
    modes = list(dict.fromkeys(s["mode"] for s in spans))
    fig = Figure(figsize=(7.5, 1.2 + 1.6 * len(modes)), dpi=100, layout="constrained")
    axes = fig.subplots(len(modes), 1, sharex=True)
    for ax, mode in zip(axes, modes, strict=True):
        mine = [s for s in spans if s["mode"] == mode]
        for y, s in enumerate(mine):
            ax.barh(y, s["end_ms"] - s["start_ms"], left=s["start_ms"],
                    **indexed(s["batch"]).fill())
        ax.set_yticks(range(len(mine)), [f"{s['call']} {s['name']}" for s in mine], fontsize=8)
        ax.invert_yaxis()
        wall = report.data["wall_s"][mode] * 1000
        colour = report.data.get("colour", {}).get(mode, "batch")
        ax.set_title(_("{mode}: wall time {wall} ms (colour = {colour})")
                     .format(mode=_mode(mode), wall=f"{wall:.0f}", colour=_(colour)),
                     fontsize=10)
    axes[-1].set_xlabel(_("virtual time (ms)"))
    first = [s for s in spans if s["mode"] == modes[0]]
    return describe(fig, _("{calls} calls, the sum of their latencies {total} ms; colour groups "
                           "per mode: {groups}").format(
        calls=len(first), total=number(sum(s["end_ms"] - s["start_ms"] for s in first)),
        groups=listing(f"{_mode(m)} {len({s['batch'] for s in spans if s['mode'] == m})}"
                       for m in modes)))


OUTCOMES = (("completed", N_("completed")), ("partial", N_("completed, marked partial")),
            ("failed", N_("failed (a tool crashed)")),
            ("failed_if_fail_fast", N_("failed if any error failed the run")))


def outcomes_plot(report: Report) -> Figure:
    """Shares of run outcomes per failure rate (points), each over the 95% range that chance
    allows around its theory for this many runs (band): points in their bands agree with the
    rule, and bands that do not overlap are rates the runs tell apart."""
    fig, ax = _figure(9.0, 3.6)
    bands, lines = {}, {}
    for key, label in OUTCOMES:
        bands[key] = ax.fill_between([], [], [], color=style(key).color, alpha=0.3, linewidth=0)
        lines[key], = ax.plot([], [], **style(key).line(), label=_(label))
    ax.set_xlabel(_("share of lookups that fail"))
    ax.set_ylabel(_("share of runs"))
    ax.set_ylim(0, 1.02)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    def fill(report: Report) -> None:
        runs, xs = report.params["runs"], [r["failure_rate"] for r in report.rows]
        last = report.rows[-1]
        for key, _label in OUTCOMES:
            ranges = [binomial_range(t[key], runs) for t in report.data["theory"]]
            bands[key].set_data(xs, [lo for lo, _ in ranges], [hi for _, hi in ranges])
            lines[key].set_data(xs, [r[key] for r in report.rows])
        ax.relim()
        ax.autoscale_view()
        ax.set_title(_("How runs end as tools fail ({runs} runs per rate; bands: 95% range "
                       "around the theory)").format(runs=runs), fontsize=10)
        shares = listing(f"{_(label)} {number(last[key])}" for key, label in OUTCOMES)
        describe(fig, _("with {rate} of lookups failing, over {runs} runs: {shares}").format(
            rate=number(last["failure_rate"]), runs=number(runs), shares=shares))

    return _live(fig, lambda report: report.name, fill, report)


POLICY_LABELS = {"tolerated": N_("tolerated: the exact calls run"),
                 "reported": N_("reported: shown, never run"),
                 "refused": N_("refused: a call or the turn\nnever runs")}


def quirks_plot(report: Report) -> Figure:
    """Per group of reported shapes (streams generated to reproduce public reports): how many
    the lab's policies tolerate, report or refuse."""
    groups = report.data["groups"]
    fig, ax = _figure(7.5, 0.5 * len(groups) + 1.4)
    names = [_("{group} ({n})").format(group=_(g), n=sum(c.values())) for g, c in groups.items()]
    left = [0] * len(groups)
    for p in POLICY_LABELS:
        counts = [c[p] for c in groups.values()]
        ax.barh(names, counts, left=left, **style(p).fill(), label=_(POLICY_LABELS[p]))
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(_("reported shapes"))
    ax.set_ylabel(_("what the shape bends"))
    ax.set_title(_("Real-world stream shapes: the lab's policy for each"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside, over no bar
    totals = {p: sum(c[p] for c in groups.values()) for p in POLICY_LABELS}
    return describe(fig, _("{n} reported shapes: {tolerated} tolerated, {reported} reported, "
                           "{refused} refused; per group (tolerated / reported / refused): "
                           "{groups}").format(
        n=number(sum(totals.values())), **{p: number(v) for p, v in totals.items()},
        groups=listing(f"{_(g)} {c['tolerated']} / {c['reported']} / {c['refused']}"
                       for g, c in groups.items())))


def scheduling_gantt(report: Report) -> Figure:
    """The timeline of each executor, one panel per scheduling mode (alt text and all)."""
    fig = timeline_gantt(report)
    for ax in fig.axes:
        ax.set_ylabel(_("call"), fontsize=8)
    return fig


# What the screen says about a call, in the order a call goes through it.
PHASES = (N_("model still writing"), N_("confirmed, not run yet"), N_("refused, never runs"),
          N_("cancelled, never ran"), N_("running"), N_("done"), N_("failed"))


def screen_plot(report: Report) -> Figure:
    """Per call id, event by event: what the screen says about the call."""
    calls, phases = report.data["calls"], report.data["phases"]
    fig, ax = _figure(8.0, 1.5 + 0.5 * len(calls))
    for step, frame in enumerate(phases, 1):
        for y, phase in enumerate(frame):
            if phase:
                ax.barh(y, 1, left=step - 0.5, **style(phase).fill())
    for phase in PHASES:
        ax.barh(0, 0, **style(phase).fill(), label=_(phase))
    ax.set_yticks(range(len(calls)), calls)
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(_("call id"))
    ax.set_xlabel(_("event (stream deltas, then execution events)"))
    n = report.params["cancel_after"]
    ax.set_title(_("What the UI shows per call id (never cancelled)") if n == "never" else
                 _("What the UI shows per call id (cancel after: {n})").format(n=n))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return describe(fig, _("{calls} call ids over {events} events; the last event leaves {last}")
                    .format(calls=len(calls), events=len(phases), last=_("; ").join(
                        _("{call}: {phase}").format(call=call, phase=_(phase) if phase else "-")
                        for call, phase in zip(calls, phases[-1] if phases else [], strict=True))))


def block_close_plot(report: Report) -> Figure:
    """Per policy: how long completed turns take, and what ran for turns that never completed."""
    fig = Figure(figsize=(8.0, 3.4), dpi=100, layout="constrained")
    left, right = fig.subplots(1, 2)
    rows = report.rows
    names = [_(r["policy"]) for r in rows]
    for k, (key, label) in enumerate((("ms_to_all_results", _("stream start to last result")),
                                      ("ms_block_close_to_result",
                                       _("block close to its result")))):
        xs = [i + (k - 0.5) * 0.4 for i in range(len(rows))]
        bars = left.bar(xs, [r[key] for r in rows], 0.4, **style(key).fill(), label=label)
        left.bar_label(bars, fmt="%.0f", fontsize=8)
    left.set_ylim(0, max(1, *(r["ms_to_all_results"] for r in rows)) * 1.4)
    left.set_xticks(range(len(rows)), names, fontsize=8)
    left.set_ylabel(_("mean ms, completed turns"))
    left.set_xlabel(_("when a call starts"))
    left.set_title(_("Latency"), fontsize=10)
    left.legend(fontsize=7, loc="upper right")
    bottom = [0] * len(rows)
    for key, label in (("run_in_cancelled_turns", N_("turn cancelled or cut off")),
                       ("run_in_refused_turns", N_("turn refused (reused id)"))):
        values = [r[key] for r in rows]
        bars = right.bar(names, values, bottom=bottom, **style(label).fill(), label=_(label))
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    right.bar_label(bars, labels=[str(b) for b in bottom], fontsize=8)
    right.set_ylim(0, max(max(bottom), 1) * 1.25)
    right.tick_params(axis="x", labelsize=8)
    right.set_ylabel(_("calls run"))
    right.set_xlabel(_("when a call starts"))
    right.set_title(_("Calls run for turns that never completed"), fontsize=10)
    right.legend(fontsize=7, loc="upper left")
    fig.suptitle(_("Start at block close or wait for the turn ({trials} turns, "
                   "{calls} calls each)").format(trials=report.params["trials"],
                                                 calls=report.params["calls"]), fontsize=11)
    return describe(fig, _("mean ms from stream start to the last result: {latency}; calls run "
                           "for turns that never completed: {run}").format(
        latency=listing(f"{n} {number(r['ms_to_all_results'])}" for n, r in zip(
            names, rows, strict=True)),
        run=listing(f"{n} {number(b)}" for n, b in zip(names, bottom, strict=True))))


def naive_clients_plot(report: Report) -> Figure:
    """Per published reading: calls it loses and calls it runs wrongly, over the recordings."""
    readings = report.data["readings"]
    fig, ax = _figure(7.5, 0.55 * len(readings) + 1.4)
    ys = range(len(readings))
    for shift, key, label in ((-0.2, "lost", _("lost (the lab runs it)")),
                              (0.2, "wrong", _("wrong (the lab does not)"))):
        bars = ax.barh([y + shift for y in ys], [t[key] for t in readings.values()], 0.4,
                       **style(key).fill(), label=label)
        ax.bar_label(bars, fontsize=8)
    ax.set_yticks(list(ys), [f"{n}\n{t['source']}" for n, t in readings.items()], fontsize=8)
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(_("calls, over {n} recorded streams").format(n=report.params["recordings"]))
    ax.set_ylabel(_("published client code"))
    ax.set_title(_("Naive readings against the lab's assembly"))
    ax.legend(fontsize=8, loc="lower right")
    return describe(fig, _("calls lost / run wrongly over {n} recorded streams, per reading: "
                           "{counts}").format(n=number(report.params["recordings"]), counts=listing(
        f"{n} {number(t['lost'])} / {number(t['wrong'])}" for n, t in readings.items())))


PLOTS: dict[str, Callable[[Report], Figure]] = {
    "pairing": pairing_bars, "spread": spread_plot, "calls": calls_plot, "order": order_bars,
    "exceptions": exceptions_bars, "streaming": stream_plot, "timeline": timeline_gantt,
    "outcomes": outcomes_plot, "quirks": quirks_plot, "scheduling": scheduling_gantt,
    "screen": screen_plot, "block_close": block_close_plot, "naive_clients": naive_clients_plot,
}


def plot(report: Report) -> Figure | None:
    """The figure for a report, or None for experiments that are tables only."""
    fn = PLOTS.get(report.name)
    return fn(report) if fn else None


def refresh(fig: Figure | None, report: Report) -> Figure | None:
    """The figure for `report`: `fig` itself, its artists refilled, when it is a live figure of
    the same plot and shape (an explorer's move); else a new one."""
    if isinstance(fig, LiveFigure) and fig.fill is not None and fig.can_show(report):
        fig.fill(report)
        return fig
    return plot(report)
