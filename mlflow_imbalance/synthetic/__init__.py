"""Positives synthesised from negatives, and ROC analysis without positive examples.

Cataltepe, Chang, Stiefmeier, Chen & Neubauer, "Using ROC Curve In the Absence of Positive
Examples" (Siemens Corporate Research), §III: when the validation data holds only normal
(negative) examples, an analyst gives a positive fault threshold ``d_i`` per feature (sensor).
Every validation example ``x`` is moved by ``+d_i`` and by ``-d_i`` along feature ``i``
(``u = x ± D_i``, ``D_i`` being ``d_i`` on coordinate ``i`` and zero elsewhere), and the moved
point ``u`` becomes a positive unless some reference example ``r`` (the validation set itself in
the paper) is still within the thresholds of it on *every* coordinate::

    u is dropped  <=>  there is an r with |u_j - r_j| < d_j for all j = 1..k

The inequality is strict, exactly as the paper writes it. This matters: the source ``x`` itself
is at distance exactly ``d_i`` on coordinate ``i`` and therefore never excludes its own
candidate, and a reference example exactly ``d_j`` away on some coordinate does not exclude
either. All comparisons are made in the data's own units, in float64, on the candidate as it is
returned (``fl(x_i ± d_i)``), so the result is the same as the paper's triple loop run in
float64 -- there is no tolerance anywhere in the decision.

The positives form an envelope around the normal data (the paper's Fig. 3); the extended
validation set (negatives + positives) then gives an ROC curve for any detector, one per feature
(the paper's per-sensor curves), and the cost ``Cost(FP, TP) = C_n (1 - TP) + C_p FP`` averaged
over features compares detectors (§II).

Algorithm (no Python loop over examples). For a single-feature fault ``u = x + s d_i e_i`` only
coordinate ``i`` differs from ``x``, so ``r`` excludes it iff ``|x_j - r_j| < d_j`` on every
``j != i`` and ``|fl(x_i + s d_i) - r_i| < d_i``. Hence a reference example can exclude a
candidate of ``x`` only when it is within ``d_j`` of ``x`` on all coordinates but at most one,
and within about ``2 d`` on that one. The reference set is sorted on its most selective
coordinate; for every source the window ``|x_a - r_a| <= 2 d_a`` (plus a few ulps, a superset)
is found by binary search, the (source, reference) pairs of the windows are enumerated in
blocks of ``chunk_size`` pairs, and each block is filtered coordinate by coordinate (most
selective first), dropping a pair as soon as it has two coordinates outside the box. The pairs
that survive give, exactly, the excluded candidates of all ``2k`` directions of their source at
once. Memory is ``O(chunk_size * 8 bytes * a few)`` on top of the inputs and the output. Faults
in several features at once use the same sort-and-filter join directly between candidates and
reference examples.

The cost grows with the number of pairs in the windows: small when the thresholds are small
compared with the spread of the data (the intended use: a fault moves a sensor off the set of
observed states), quadratic in the worst case where the thresholds exceed the data's range (then
almost every candidate is dropped anyway).

Modules: ``generate`` (the synthesis and :class:`SyntheticPositives`), ``evaluate``
(:func:`evaluate_without_positives`, :class:`SyntheticEvaluation`), ``_checks`` (input checks).
"""

from __future__ import annotations

from mlflow_imbalance.synthetic.evaluate import SyntheticEvaluation, evaluate_without_positives
from mlflow_imbalance.synthetic.generate import SyntheticPositives, synthesize_positives

__all__ = [
    "SyntheticEvaluation",
    "SyntheticPositives",
    "evaluate_without_positives",
    "synthesize_positives",
]
