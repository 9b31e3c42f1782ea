"""Two pictures of the lesson, drawn from real data rather than pasted: the chat messages of a
run with an arrow from each call to the tool message that carries its id, and the path of one
turn from the model's deltas back into the history.

Matplotlib Figures without pyplot state, like `plots.py`; `notebook.show` displays them with
the same bytes on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from keel_lab._core.messages import AssistantMessage, Message, ToolMessage
from keel_lab._core.streaming import Finish, StreamEvent, ToolCallDelta, assemble
from keel_lab._i18n import _, listing, pgettext
from keel_lab.course._alt import describe, one_line
from keel_lab.course._fonts import register_cjk_font
from keel_lab.course._styles import LineStyle, indexed

register_cjk_font()  # Chinese labels draw from the shipped subset, Latin text stays DejaVu Sans

ROLE_COLORS = {"system": "#eeeeee", "user": "#dbe9f6", "assistant": "#fdebd3", "tool": "#e3f1e0"}
MISSING = "#d62728"
WIDTH = 10.0  # data units across; message boxes take the left part, arrows the right margin
BOX = 7.6


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _box(ax: Any, x: float, y: float, w: float, h: float, face: str, edge: str = "#555555",
         lw: float = 1.0, ls: LineStyle = "-") -> None:
    ax.add_patch(FancyBboxPatch((x, y - h), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=face, edgecolor=edge, linewidth=lw, linestyle=ls))


def message_format(messages: Sequence[Message], width: int = 72) -> Figure:
    """The history top to bottom; each call of an assistant message is an inner box, and an arrow
    runs from it to the tool message whose `tool_call_id` matches - found by id, not by place, so
    a result in another position still points right and a call without one is marked. Each
    call's box, arrow and tool message share a colour and a line style (`_styles.CYCLE`)."""
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    look = {call_id: indexed(i) for i, call_id in enumerate(calls)}
    color = {call_id: s.color for call_id, s in look.items()}
    heights = [0.9 + (0.75 * len(m.tool_calls) if isinstance(m, AssistantMessage) else 0.0)
               for m in messages]
    fig = Figure(figsize=(9.0, 0.75 * (sum(heights) + 0.4 * len(messages)) + 0.9), dpi=100,
                 layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    call_at: dict[str, float] = {}
    answer_at: dict[str, float] = {}
    y = 0.0
    for message, h in zip(messages, heights, strict=True):
        answers = look.get(getattr(message, "tool_call_id", ""))
        _box(ax, 0.0, y, BOX, h, ROLE_COLORS.get(message.role, "white"),
             edge=answers.color if answers else "#555555",
             lw=2.0 if isinstance(message, ToolMessage) else 1.0,
             ls=answers.linestyle if answers else "-")
        ax.text(0.12, y - 0.3, message.role, fontsize=10, fontweight="bold", va="center")
        if isinstance(message, ToolMessage):
            ax.text(1.3, y - 0.3, f"tool_call_id: {message.tool_call_id}", fontsize=8,
                    family="monospace", va="center")
            answer_at.setdefault(message.tool_call_id, y - 0.45)
        ax.text(1.3, y - (0.65 if isinstance(message, ToolMessage) else 0.3),
                _short(message.content, width) or _("(no text)"), fontsize=8, va="center",
                color="#333333" if message.content else "#888888")
        if isinstance(message, AssistantMessage):
            for i, call in enumerate(message.tool_calls):
                top = y - 0.7 - 0.75 * i
                _box(ax, 1.3, top, BOX - 1.5, 0.6, "white", edge=color[call.id], lw=2.0,
                     ls=look[call.id].linestyle)
                ax.text(1.42, top - 0.18, f"id: {call.id}", fontsize=8, family="monospace",
                        va="center")
                ax.text(1.42, top - 0.43, f"{call.name}({_short(call.arguments, width - 20)})",
                        fontsize=8, family="monospace", va="center")
                call_at[call.id] = top - 0.3
        y -= h + 0.4
    for i, call_id in enumerate(calls):
        if call_id in answer_at:
            ax.add_patch(FancyArrowPatch(
                (BOX - 0.2, call_at[call_id]), (BOX, answer_at[call_id]),
                connectionstyle=f"arc,angleA=0,angleB=0,armA={30 + 22 * i},"
                                f"armB={30 + 22 * i + 8},rad=8",
                arrowstyle="-|>", mutation_scale=14, color=color[call_id], linewidth=1.6,
                linestyle=look[call_id].linestyle, gid=f"pair:{call_id}"))
        else:
            ax.text(BOX - 0.1, call_at[call_id],
                    _("  no tool message:\n  the provider rejects this"), fontsize=8,
                    color=MISSING, va="center", gid=f"unanswered:{call_id}")
    ax.set_xlim(-0.1, WIDTH)
    ax.set_ylim(y, 0.2)
    ax.set_title(_("The chat messages of one run: every call's id is answered by one tool "
                   "message"), fontsize=10)
    answered = [c for c in calls if c in answer_at]
    finding = _("{n} messages ({roles}); {answered} of {calls} calls answered by the tool "
                "message with their id").format(
        n=len(messages), roles=listing(m.role for m in messages), answered=len(answered),
        calls=len(calls))
    if len(answered) < len(calls):
        finding += _("; ").join(["", _("no tool message for {ids}").format(
            ids=listing(c for c in calls if c not in answer_at))])
    return describe(fig, finding)


STAGES = ("model", "deltas", "assembler", "calls", "executor", "tool messages", "history")


def stage_name(stage: str) -> str:
    """A stage's box label, translated in the context of the pipeline (its "calls" are the
    calls themselves, not a count of them, as a table's column is)."""
    names = {"model": pgettext("pipeline stage", "model"),
             "deltas": pgettext("pipeline stage", "deltas"),
             "assembler": pgettext("pipeline stage", "assembler"),
             "calls": pgettext("pipeline stage", "calls"),
             "executor": pgettext("pipeline stage", "executor"),
             "tool messages": pgettext("pipeline stage", "tool messages"),
             "history": pgettext("pipeline stage", "history")}
    return names[stage]


def turn_pipeline(events: Sequence[StreamEvent]) -> Figure:
    """One turn end to end, from the model's deltas to the history the next model call reads,
    each stage labelled with what the given stream actually held."""
    assembly = assemble(events)
    calls = assembly.message.tool_calls if assembly.message else ()
    deltas = sum(isinstance(e, ToolCallDelta) for e in events)
    finished = bool(events) and isinstance(events[-1], Finish)
    notes = {
        "model": (_("streams {n} events,\nthe last its finish") if finished else
                  _("streams {n} events,\nno finish")).format(n=len(events)),
        "deltas": _("{n} pieces of calls,\neach tagged with an index").format(n=deltas),
        "assembler": _("one buffer per index;\ncloses calls at the finish"),
        "calls": _("{n} calls, each with\nid, name, arguments").format(n=len(calls)),
        "executor": _("runs them in batches;\none outcome per call id"),
        "tool messages": _("{n}, one per call,\nmatched by tool_call_id").format(n=len(calls)),
        "history": _("user, assistant + calls,\ntool messages"),
    }
    fig = Figure(figsize=(10.0, 2.6), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    step, w = 1.45, 1.15
    for i, stage in enumerate(STAGES):
        x = i * step
        _box(ax, x, 1.0, w, 0.55, "#fdebd3" if stage in ("model", "history") else "#e3f1e0")
        ax.text(x + w / 2, 0.72, stage_name(stage), ha="center", va="center", fontsize=9,
                fontweight="bold")
        ax.text(x + w / 2, 0.3, notes[stage], ha="center", va="top", fontsize=7.5,
                color="#333333")
        if i:
            ax.add_patch(FancyArrowPatch((x - step + w + 0.03, 0.72), (x - 0.03, 0.72),
                                         arrowstyle="-|>", mutation_scale=12, color="#444444",
                                         gid=f"flow:{STAGES[i - 1]}->{stage}"))
    last = (len(STAGES) - 1) * step
    ax.add_patch(FancyArrowPatch((last + w / 2, 1.03), (w / 2, 1.03), arrowstyle="-|>",
                                 connectionstyle="arc,angleA=90,angleB=90,armA=22,armB=22,rad=6",
                                 mutation_scale=12, color="#1f77b4", linestyle="--",
                                 gid="flow:history->model"))
    ax.text(last / 2 + w / 2, 1.25, _("the next turn: the model is called again with the whole "
                                      "history"), ha="center", fontsize=8, color="#1f77b4")
    ax.set_xlim(-0.1, last + w + 0.1)
    ax.set_ylim(-0.2, 1.4)
    first = calls[0].id if calls else "-"
    ax.set_title(_("One turn, end to end (first call id: {id})").format(id=first), fontsize=10)
    return describe(fig, " \u2192 ".join(_("{stage}: {note}").format(
        stage=stage_name(stage), note=one_line(notes[stage])) for stage in STAGES))
