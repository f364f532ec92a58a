"""How a number and a prevalence are written, in the report, the run card and the CLI alike.

One module, so a reader who sees a number in one place finds it written the same in the others
(the page's script mirrors these rules in ``templates/_live.js.j2``; a browser test compares).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_eta", "fmt_number", "fmt_sci"]


def fmt_number(x: Any, digits: int = 4) -> str:
    """``digits`` significant digits, thousands separated; '—' for missing or NaN.

    Whole units from ``10**(digits-1)`` up to 1e9 (1,235 rather than 1.235e3); an exponent only
    outside [1e-3, 1e9). The branch follows the shown value: 9.9999e-4 reads 0.001.
    """
    if x is None:
        return "—"
    x = float(x)
    if not math.isfinite(x):
        return "—" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0:
        return "0"
    a = abs(float(f"{x:.{digits}g}"))
    if 1e-3 <= a < 10**digits and "e" not in (s := f"{x:,.{digits}g}"):
        return s  # thousands separated, as in the branch below (9,999.7 rounds up: below)
    if 10 ** (digits - 1) <= a < 1e9:
        return f"{x:,.0f}"
    return fmt_sci(x, digits - 1)


def fmt_sci(x: float, digits: int = 2) -> str:
    """``1.5e-4`` (``digits`` decimals at most, trailing zeros dropped, no ``e-04`` padding)."""
    mant, exp = f"{x:.{digits}e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}"


def fmt_eta(x: float) -> str:
    """A prevalence: plain from 0.001 up (``0.0736``), else ``1e-4`` / ``2.5e-5``."""
    x = float(x)
    if x >= 1e-3:
        return f"{x:.3g}"
    return fmt_sci(x, 2)
