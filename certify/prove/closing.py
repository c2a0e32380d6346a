"""The closing tests of a region proof: a small fixed menu, each proving h = g(L) - F >= 0 on a box.

    direct              1 - F >= (1 - F)_lo on the box (certify.prove.tilt) and 1 - g <= gap_hi:
                        h = (1 - F) - (1 - g) >= 0 when the difference of the ends is >= 0.
    divided             a box with L_lo = 0, where h vanishes (F(w, 0) = 0 and g(0) = 0): by the
                        mean value theorem h(L) = L dh/dL(xi) with xi in (0, L), and
                        dh/dL = g' - (m'(w + L/2) + m'(w - L/2))/2 >= g'_lo - max Var >= 0, g'_lo a lower
                        end of g' on (0, L_hi] (certify.prove.profiles), finite where g' is not at 0 (sqrt).
    chord               any box with L_hi > 0 (L_lo = 0 only where g(0) = 0): h = L (g(L)/L - F/L), and
                        F/L = (1/L) integral of m' over [w - L/2, w + L/2] <= max Var over
                        [w_lo - L_hi/2, w_hi + L_hi/2] (m' = Var, proofs/region_tilt.py), so h >= 0 when
                        (g(L)/L)_lo - max Var >= 0.  For concave g with g(0) = 0 (both claims) g(L)/L
                        decreases and (g(L)/L)_lo = g(L_hi)/L_hi > g'(L_hi): it closes what divided does
                        and, away from L = 0, boxes whose L is far wider than direct allows (direct loses
                        about the width of L times Var; chord only the curvature of m over the window).
    rise                the mean value form from the face L = L_lo: h(L) = h(L_lo) + integral of h' over
                        [L_lo, L]: g(L) - g(L_lo) >= (L - L_lo) s_lo, s_lo a lower end of g's secant slopes
                        from L_lo (the secant to L_hi for a concave g, else g'_lo), and F(w, L) - F(w, L_lo) <=
                        (L - L_lo)(Var+ + Var-)/2, Var+ the max of m' over [w_lo + L_lo/2, w_hi + L_hi/2] and
                        Var- over [w_lo - L_hi/2, w_hi - L_lo/2] (dF/dL = (m'(w + L/2) + m'(w - L/2))/2); so
                        h >= h(L_lo)_lo + (L_hi - L_lo) min(0, s_lo - (Var+ + Var-)/2), h(L_lo)_lo by direct
                        on the face.  Where g' and the Var nearly cancel (the tight sets) it loses far less
                        than direct, which pays about the width of L times g' + Var.
    monotone-w/FACE     n = 2 only: dF/dw = -sinh(w) sinh(L/2) / (4 cosh^2((w + L/2)/2)
                        cosh^2((w - L/2)/2)) <= 0 for w, L >= 0 (proofs/region_two_tokens.py), so
                        h >= h on the face w = w_lo, which FACE closes: direct, divided, or
                        identity (w_lo = 0 and g(L) = tanh(L/4) = F(0, L), the tight set).
    monotone-t/FACE     the line: each inner position t_k with dF/dt_k <= 0 on the box moves to t_k lo, with
                        dF/dt_k >= 0 to t_k hi (certify.prove.tilt.slope_margins), and that face decides;
                        FACE is direct, divided, chord, rise, or pair (every position at 0 or 1, k of the n at 0: the
                        two-token ratio shifted by ln(k / (n - k)), at most tanh(L/4); tight at 0, 0, 1, 1).
    ordered             the line: F is symmetric in the inner positions, so h >= 0 on the sorted part t_2 <= ... <=
                        t_{n-1} of the domain gives it everywhere, and a box inside t_k >= t_{k+1} for some k
                        (t_k lo >= t_{k+1} hi) needs no test of its own: the other leaves cover every strictly
                        sorted point, and h is continuous (proofs/region_line.py).  The volume proved counts
                        such leaves through the open boxes, or not at all (certify.prove.region.proved_fraction).
A test closes a box only on a finite enclosure certainly >= 0 (certify.prove.bnb): a NaN or
infinite ball never closes anything.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from certify.prove.bnb import certainly_nonnegative
from certify.prove.profiles import Profile
from certify.prove.tilt import Interval, exact, one_minus_ratio_lower, slope_margins, variance_upper


def direct(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The direct test's margin on the box (w, L, inner...): a lower end of (1 - F) - (1 - g(L)) = g(L) - F,
    from (1 - F)_lo (certify.prove.tilt) minus the profile's upper end of 1 - g. Closes the box when >= 0."""
    w, L, inner = box[0], box[1], box[2:]
    return one_minus_ratio_lower(w, L, inner).lower() - profile.gap_upper(L).upper()


def divided(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The divided test's margin on a box with L_lo = 0 where h = g(L) - F vanishes at L = 0: g'_lo - max Var
    of the tilted positions, a lower end of dh/dL on the box (mean value theorem); None when L_lo != 0 or
    the profile does not vanish at 0."""
    w, L, inner = box[0], box[1], box[2:]
    if L[0] != 0 or not profile.vanishes:
        return None
    thetas = (w[0] - L[1] / 2, w[1] + L[1] / 2)
    return profile.slope_lower(L[1]).lower() - variance_upper(thetas, inner).upper()


def chord(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The chord test's margin: (g(L)/L)_lo - max Var of the tilted positions over [w_lo - L_hi/2, w_hi + L_hi/2],
    a lower end of h/L on the box (h = L (g(L)/L - F/L), F/L the mean of m' = Var over the window of width L);
    None when L_hi = 0, or L_lo = 0 and the profile does not vanish at 0 (h(0) = g(0) must be 0 there)."""
    w, L, inner = box[0], box[1], box[2:]
    if L[1] <= 0 or L[0] < 0 or (L[0] == 0 and not profile.vanishes):
        return None
    thetas = (w[0] - L[1] / 2, w[1] + L[1] / 2)
    return profile.chord_lower(L).lower() - variance_upper(thetas, inner).upper()


def rise(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The rise test's margin: direct's on the face L = L_lo plus (L_hi - L_lo) times a lower end of the slope of h
    from L_lo when that is negative: g rises from L_lo at least at its secant slope (profile.secant_lower), and
    F(w, L) - F(w, L_lo) is the integral of (m'(w + s/2) + m'(w - s/2))/2 over [L_lo, L], m' = Var."""
    w, L, inner = box[0], box[1], box[2:]
    if L[0] < 0:
        return None
    base = direct((w, (L[0], L[0])) + inner, profile)
    plus = variance_upper((w[0] + L[0] / 2, w[1] + L[1] / 2), inner).upper()
    minus = variance_upper((w[0] - L[1] / 2, w[1] - L[0] / 2), inner).upper()
    slope = profile.secant_lower(L).lower() - (plus + minus) / 2
    if not slope.is_finite():  # min(0, +inf) would be 0: an infinite enclosure never closes a box
        return arb("nan")
    return base + exact(L[1] - L[0]) * slope.min(arb(0))


def identity(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The face w = 0 of the two-token form, where F(0, L) = tanh(L/4) (proofs/region_tilt.py)."""
    return arb(0) if box[0] == (0, 0) and len(box) == 2 and profile.tanh else None


FACE_TESTS = {"direct": direct, "divided": divided, "chord": chord, "rise": rise, "identity": identity}


def monotone_w(face_test, box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """Two tokens only (w, L >= 0): dF/dw <= 0, so h is least on the face w = w_lo; return `face_test`'s
    margin there, or None when the box is not of that form."""
    w, L = box[0], box[1]
    if len(box) != 2 or w[0] < 0 or L[0] < 0:  # the sign of dF/dw is proved for two tokens, w, L >= 0
        return None
    return face_test(((w[0], w[0]), L), profile)


def pair(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """A face whose inner positions are all 0 or 1 (k of the n positions at 0): m(theta) = sigma(theta -
    ln(k / (n - k))), so F is the two-token ratio at w - ln(k / (n - k)), at most tanh(L/4)
    (proofs/region_line.py)."""
    corner = all(lo == hi and lo in (0, 1) for lo, hi in box[2:])
    return arb(0) if len(box) >= 3 and corner and profile.tanh else None


T_FACE_TESTS = {"direct": direct, "divided": divided, "chord": chord, "rise": rise, "pair": pair}


def monotone_t(face_test, box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """The line (L >= 0): each inner position t_k whose dF/dt_k has a proved sign on the box
    (certify.prove.tilt.slope_margins) moves to the end where F is largest, t_k lo for dF/dt_k <= 0 (tried
    first), t_k hi for >= 0; `face_test`'s margin on that face when at least one moved, otherwise the
    sign tests' own (negative) margin; None when the box is not of that form."""
    if len(box) < 3 or box[1][0] < 0:
        return None
    face, moved, refused = t_face(box)
    if not moved:
        return refused  # no sign is proved: the (negative) margin of the sign tests
    return face_test(face, profile)


def t_face(box: tuple[Interval, ...]) -> tuple[tuple[Interval, ...], tuple[int, ...], arb | None]:
    """The line's box (L >= 0) with each inner position whose dF/dt_k has a proved sign moved to the end where F
    is largest (monotone_t), the axes moved, and the sign tests' margin for the first position not moved."""
    face, moved, refused = list(box), [], None
    for k, (lower, upper) in enumerate(slope_margins(box[0], box[1], box[2:])):
        if certainly_nonnegative(lower):
            face[k + 2] = (box[k + 2][0], box[k + 2][0])
            moved.append(k + 2)
        elif certainly_nonnegative(upper):
            face[k + 2] = (box[k + 2][1], box[k + 2][1])
            moved.append(k + 2)
        elif refused is None:
            refused = lower if not upper.is_finite() or (lower.is_finite() and lower >= upper) else upper
    return tuple(face), tuple(moved), refused


def ordered(box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """0 on a line box inside t_k >= t_{k+1} for some pair of neighbouring inner positions (its points are
    permutations of sorted ones, which the other leaves decide), else None."""
    inner = box[2:]
    unsorted = any(inner[k][0] >= inner[k + 1][1] for k in range(len(inner) - 1))
    return arb(0) if len(box) >= 4 and unsorted else None


def margin(method: str, box: tuple[Interval, ...], profile: Profile) -> arb | None:
    """A ball whose lower end is <= h on the box when the method applies (for a monotone face whose
    derivative sign is not proved: the sign test's own margin, < 0), else None."""
    if method == "ordered":
        return ordered(box, profile)
    if method == "direct":
        return direct(box, profile)
    if method == "divided":
        return divided(box, profile)
    if method == "chord":
        return chord(box, profile)
    if method == "rise":
        return rise(box, profile)
    if method.startswith("monotone-w/") and method[len("monotone-w/"):] in FACE_TESTS:
        return monotone_w(FACE_TESTS[method[len("monotone-w/"):]], box, profile)
    if method.startswith("monotone-t/") and method[len("monotone-t/"):] in T_FACE_TESTS:
        return monotone_t(T_FACE_TESTS[method[len("monotone-t/"):]], box, profile)
    return None


def closes(method: str, box: tuple[Interval, ...], profile: Profile) -> bool:
    """Whether `method` proves h = g(L) - F >= 0 on the whole box: its margin is a finite ball certainly >= 0."""
    value = margin(method, box, profile)
    return value is not None and certainly_nonnegative(value)


def slack(value: arb | None) -> arb | None:
    """How far a margin is from closing (None: not at all), for choosing splits only, never for a
    verdict: the exact midpoint, which compares exactly however far below float64's range it lies
    (exp(-4096)) and costs nothing however large its exponent."""
    if value is None or not value.is_finite():
        return None
    return value.mid()


def midpoint(box: tuple[Interval, ...]) -> tuple[Fraction, ...]:
    """The box's exact midpoint, one Fraction per variable."""
    return tuple((lo + hi) / 2 for lo, hi in box)
