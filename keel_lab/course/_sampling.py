"""How far a measured rate may sit from its theory by chance alone.

A rate measured over n seeded trials scatters around its true value p. The plots draw the
central 95% range of that scatter around each theory line, so that a point just above the line
reads as sampling noise, not as a flaw in the theory.
"""

from __future__ import annotations

import math

from keel_lab._core.errors import LabError
from keel_lab._i18n import N_


def binomial_range(p: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The central `level` range of k / n for k ~ Binomial(n, p), exact (no normal
    approximation, which fails near 0 and 1, where the lab's rates often are)."""
    if n < 1 or not 0.0 <= p <= 1.0 or not 0.0 < level < 1.0:
        raise LabError("bad_range", N_("need n >= 1, 0 <= p <= 1 and 0 < level < 1; got {n}, "
                                       "{p}, {level}"), n=n, p=p, level=level)
    if p in (0.0, 1.0):
        return p, p
    tail = (1.0 - level) / 2
    log_p, log_q = math.log(p), math.log1p(-p)
    bounds: list[int] = []
    total = 0.0
    for k in range(n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                          + k * log_p + (n - k) * log_q)
        while len(bounds) < 2 and total >= (tail, 1.0 - tail)[len(bounds)] - 1e-12:
            bounds.append(k)
    low, high = bounds + [n] * (2 - len(bounds))
    return low / n, high / n
