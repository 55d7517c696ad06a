"""The figure checks of report_checks.py catch a clipped and an overlapping text."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from support.report_checks import figure_problems  # noqa: E402

from robot_tv_dynamics.demo.numbers import NONE, mathtext, people  # noqa: E402


def test_a_clean_figure_has_no_problem():
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_title("title")
    assert figure_problems(fig) == []
    plt.close(fig)


def test_a_text_off_the_figure_and_two_texts_on_each_other_are_found():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    fig.text(0.95, 0.5, "a long text that runs off the right edge")
    ax.text(0.5, 0.5, "first", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second", transform=ax.transAxes)
    problems = figure_problems(fig)
    plt.close(fig)
    assert any(p.startswith("clipped: 'a long text") for p in problems), problems
    assert any("'first' and 'second'" in p for p in problems), problems


def test_numbers_for_people_have_three_digits_and_a_dash_for_none():
    assert people(1.227610704894002e-07) == "1.23·10⁻⁷"
    assert people(-0.00773) == "\N{MINUS SIGN}0.00773"
    assert people(0.36, unit="s") == "0.360 s"
    assert people(None, unit="s") == NONE == "—"
    assert people(float("nan")) == NONE
    assert people(9.996e-5) == "1.00·10⁻⁴"  # the mantissa rounds up a decade
    assert mathtext(1.227610704894002e-07) == r"$1.23\times10^{-7}$"
    assert mathtext(None) == NONE


def test_a_symlog_axis_over_many_decades_has_no_crowded_labels():
    """The report's symlog axes: no tick inside the linear range, at most 13 labels."""
    import numpy as np

    from robot_tv_dynamics.demo.report import _symlog

    for low, high, lin in ((-0.72, 1.5e-2, 1.23e-7), (-1e-1, 1e-1, 2.5e-4), (0.0, 3.0, 1e-4)):
        fig, ax = plt.subplots(figsize=(8, 3.4), layout="constrained")
        ax.plot(np.linspace(0, 8, 50), np.linspace(low, high, 50))
        _symlog(ax, lin, low, high)
        ticks = ax.get_yticks()
        assert len(ticks) <= 13, ticks
        assert not np.any((np.abs(ticks) > 0) & (np.abs(ticks) < 10 ** np.floor(np.log10(lin))))
        assert figure_problems(fig) == [], (low, high, lin)
        plt.close(fig)
