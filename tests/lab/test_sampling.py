import math

import pytest

from keel_lab._core.errors import LabError
from keel_lab.course._sampling import binomial_range

pytestmark = pytest.mark.ch2


def _mass(p, n, low, high):
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k)
               for k in range(round(low * n), round(high * n) + 1))


@pytest.mark.parametrize(("p", "n"), [(5 / 6, 300), (0.5, 300), (1 / 24, 200), (0.999, 300),
                                      (0.5, 2)])
def test_range_holds_at_least_the_level_and_contains_p(p, n):
    low, high = binomial_range(p, n)
    assert low <= p <= high
    assert _mass(p, n, low, high) >= 0.95


def test_range_is_about_two_standard_errors_wide_for_a_middle_rate():
    low, high = binomial_range(5 / 6, 300)
    se = math.sqrt(5 / 6 * (1 / 6) / 300)
    assert (low, high) == pytest.approx((5 / 6 - 1.96 * se, 5 / 6 + 1.96 * se), abs=2 / 300)


def test_range_shrinks_with_more_trials_and_mirrors_at_one_minus_p():
    assert binomial_range(0.3, 1000)[1] - binomial_range(0.3, 1000)[0] < \
        binomial_range(0.3, 100)[1] - binomial_range(0.3, 100)[0]
    low, high = binomial_range(0.3, 100)
    assert binomial_range(0.7, 100) == pytest.approx((1 - high, 1 - low))


def test_certain_rates_have_no_scatter():
    assert binomial_range(0.0, 300) == (0.0, 0.0)
    assert binomial_range(1.0, 300) == (1.0, 1.0)


@pytest.mark.parametrize(("p", "n", "level"), [(0.5, 0, 0.95), (1.5, 10, 0.95), (0.5, 10, 1.0)])
def test_rejects_impossible_arguments(p, n, level):
    with pytest.raises(LabError):
        binomial_range(p, n, level)
