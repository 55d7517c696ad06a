r"""Numbers for people: 3 significant digits, a real minus sign, "—" for none.

:func:`people` writes plain text (the console summary): ``1.23·10⁻⁷``, ``−0.00773``,
``2.06``; :func:`mathtext` the same for matplotlib's mathtext (the report):
``$1.23\times10^{-7}$``. Values from 10⁻³ to 10⁴ are written without an exponent.
"""

from __future__ import annotations

import math

#: What a missing value (None, NaN) is written as.
NONE = "—"
MINUS = "\N{MINUS SIGN}"
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _parts(value: float, digits: int) -> tuple[str, int | None]:
    """(mantissa or fixed text without sign handling, exponent or None for fixed)."""
    mantissa, _, exponent = f"{value:.{digits - 1}e}".partition("e")
    power = int(exponent)
    if -3 <= power < 4:
        decimals = max(digits - 1 - power, 0)
        return f"{float(f'{value:.{digits - 1}e}'):.{decimals}f}", None
    return mantissa, power


def people(value: float | int | None, digits: int = 3, unit: str = "") -> str:
    """``value`` with ``digits`` significant digits as plain text (``—`` for None/NaN).

    Args:
        value: the number (None: missing).
        digits: significant digits.
        unit: appended after a space (not to "—").
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NONE
    x = float(value)
    if math.isinf(x):
        text = "∞" if x > 0 else MINUS + "∞"
    elif x == 0.0:
        text = "0"
    else:
        body, power = _parts(abs(x), digits)
        text = body if power is None else f"{body}·10{str(power).translate(_SUPERSCRIPT)}"
        text = (MINUS if x < 0 else "") + text
    return f"{text} {unit}" if unit else text


def mathtext(value: float | int | None, digits: int = 3) -> str:
    r"""``value`` as a mathtext string (``$1.23\times10^{-7}$``; ``—`` for None/NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NONE
    x = float(value)
    if math.isinf(x):
        return r"$\infty$" if x > 0 else r"$-\infty$"
    if x == 0.0:
        return "$0$"
    body, power = _parts(abs(x), digits)
    sign = "-" if x < 0 else ""
    return f"${sign}{body}$" if power is None else rf"${sign}{body}\times10^{{{power}}}$"
