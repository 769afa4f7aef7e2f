"""p50 against size is the largest size's over the reference's, taken in the same minutes."""

from __future__ import annotations

from bench.compare.sizes import growth


def timing(p50: float) -> dict[str, float]:
    return {"p50": p50, "p99": 2 * p50}


def test_growth_is_the_largest_size_over_the_copy_beside_it_not_over_the_first_size():
    first = {
        "warm": timing(1.0),
        "cold": timing(2.0),
        "reference": {"warm": timing(1.0), "cold": timing(2.0)},
    }
    # The machine ran slower while the largest size was measured: the copy shows it.
    largest = {
        "warm": timing(1.5),
        "cold": timing(2.2),
        "reference": {"warm": timing(1.4), "cold": timing(2.0)},
    }
    results = {
        "sizes": {"10000": {"pin": {"pinboard": first}}, "1000000": {"pin": {"pinboard": largest}}}
    }
    assert round(growth(results, "pin", "pinboard", "warm") or 0, 3) == round(1.5 / 1.4, 3)
    assert round(growth(results, "pin", "pinboard", "cold") or 0, 3) == 1.1


def test_a_run_of_one_size_has_no_growth():
    results = {
        "sizes": {"1000000": {"pin": {"pinboard": {"warm": timing(1.0), "cold": timing(2.0)}}}}
    }
    assert growth(results, "pin", "pinboard", "warm") is None
