"""Each chapter's live controls, one function per chapter, so a widget cell is one call and the
bench and the tests can move the same sliders a learner moves.

The budget: one move redraws in 0.5 s at the defaults and blocks the kernel for at most 1.5 s
anywhere in the ranges (bench/sliders.py measures it). For that reason the pairing trials have a
lower maximum than the chapter had, and the partial-success runs a smaller default.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets

from keel_lab._i18n import _
from keel_lab.course._experiments.batching import timeline
from keel_lab.course._experiments.block_close import block_close
from keel_lab.course._experiments.pairing import pairing
from keel_lab.course._experiments.partial_success import outcome_mix
from keel_lab.course._experiments.production import screen
from keel_lab.course._experiments.providers import stream_names, stream_report
from keel_lab.course._experiments.streaming import chunk_table
from keel_lab.course._notebook import Explorer, float_slider, slider
from keel_lab.course._scenarios import COMPARE, compare_question


def history_explorer() -> Explorer:
    """Chapter 1: the chunk table of the comparison question, by chunk size and seed."""
    return Explorer(lambda chunk_size, seed: chunk_table(_(COMPARE), seed, chunk_size),
                    {"chunk_size": slider(_("chunk size"), 4, 1, 30),
                     "seed": slider(_("seed"), 0, 0, 20)}, table=False)


def pairing_explorer() -> Explorer:
    """Chapter 2: mismatches per pairing strategy, by trials, calls and delay spread."""
    return Explorer(lambda trials, calls, spread_ms:
                    pairing(trials, calls, seed=0, spread=spread_ms / 1000),
                    # 2,000 trials, not 5,000 (over 2 s at six calls); a rate's standard error is
                    # then at most 1.1 points, finer than the bars can show.
                    {"trials": slider(_("trials"), 500, 10, 2000, 10),
                     "calls": slider(_("calls"), 3, 1, 6),
                     "spread_ms": slider(_("delay spread (ms)"), 490, 0, 1000, 10)})


def batching_explorer() -> Explorer:
    """Chapter 3: the turn's timeline, sequential and concurrent, by limit and latency seed."""
    return Explorer(lambda limit, seed: timeline(seed, limit),
                    {"limit": slider(_("concurrency limit"), 4, 1, 6),
                     "seed": slider(_("latency seed"), 0, 0, 20)})


def streaming_explorer() -> Explorer:
    """Chapter 4: the chunk table of one to four interleaved calls."""
    return Explorer(lambda chunk_size, seed, calls:
                    chunk_table(compare_question(calls), seed, chunk_size),
                    # seed 1: its two calls visibly interleave (seed 0's barely do)
                    {"chunk_size": slider(_("chunk size"), 6, 1, 30),
                     "seed": slider(_("seed"), 1, 0, 20),
                     "calls": slider(_("calls"), 2, 1, 4)}, table=False)


def block_close_explorer() -> Explorer:
    """Chapter 4: the lab's policy against starting at block close, by how often turns fail."""
    return Explorer(lambda cancel_rate, refuse_rate, calls:
                    block_close(300, calls, 0, cancel_rate, refuse_rate),
                    {"cancel_rate": float_slider(_("share cancelled"), 0.1, 0.0, 0.5, 0.05),
                     "refuse_rate": float_slider(_("share refused"), 0.05, 0.0, 0.5, 0.05),
                     "calls": slider(_("calls"), 3, 1, 6)}, table=False)


def partial_success_explorer() -> Explorer:
    """Chapter 5: how runs end as lookups fail, by share of crashes and runs per rate."""
    return Explorer(lambda internal_share, runs:
                    outcome_mix(runs=runs, internal_share=internal_share),
                    {"internal_share": float_slider(_("share of crashes"), 0.25, 0.0, 1.0, 0.05),
                     "runs": slider(_("runs per rate"), 1000, 100, 3000, 100)}, table=False)


def providers_explorer() -> Explorer:
    """Chapter 7: any recorded stream's chunk table and diagnosis."""
    return Explorer(stream_report,
                    {"name": widgets.Dropdown(options=stream_names(),
                                              value="quirks/all_index_zero.sse",
                                              description=_("stream"))})


def production_explorer() -> Explorer:
    """Chapter 8: what the screen shows when the stream is cancelled after a given event."""
    return Explorer(lambda cancel_after, seed: screen(cancel_after, seed),
                    {"cancel_after": slider(_("cancel after event (0 = never)"), 0, 0, 27),
                     "seed": slider(_("seed"), 0, 0, 20)}, table=False)


EXPLORERS: dict[str, Callable[[], Explorer]] = {
    "01_history": history_explorer, "02_pairing": pairing_explorer,
    "03_batching": batching_explorer, "04_streaming": streaming_explorer,
    "04_streaming_block_close": block_close_explorer,
    "05_partial_success": partial_success_explorer,
    "07_providers": providers_explorer, "08_production": production_explorer,
}
