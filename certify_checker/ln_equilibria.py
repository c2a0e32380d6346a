"""Checker for "ln-equilibria" certificates: equilibria of every rank (Wu et al., Theorem 3).

Setting: N tokens in R^N (rows, d = N), causal mask, W_Q = W_K = 0, so row i of P averages
tokens 0..i; W_V = I + w S with S the superdiagonal of ones (e_c W_V = e_c + w e_{c+1});
post-LN with LN(x) = x / ||x||_2.  Because LN(c y) = LN(y) for c > 0, X is an equilibrium exactly
when for every i, with s_i = x_0 + ... + x_i,
    s_i W_V = lam_i x_i,   ||x_i|| = 1,   lam_i > 0.                                   (*)

V_m = span(e_{N-m}, ..., e_{N-1}) (the last m coordinates) is invariant under W_V.  The witness
gives each token a dimension m_i (nondecreasing in i, so s_{i-1} lies in V_{m_i}) and a box for
(y, lam) in R^{m_i + 1}, y the coordinates of x_i in V_{m_i}; (*) restricted to V_{m_i} is m_i + 1
equations in m_i + 1 unknowns, and outside V_{m_i} it holds with zeros on both sides.

What a certified certificate proves, from the exact N and w, token by token:
1. Krawczyk: for every s in the enclosure of s_{i-1}, K(U) = c - C H(c) + (I - C J(U))(U - c) lies
   inside the box U, so (*) has exactly one solution in U; its lam is > 0.  By induction on i
   (each enclosure of s_{i-1} holds the true partial sum) the listed X is a true equilibrium.
2. Rank: the rows lie in V_k, k = m_{N-1}, so rank <= k; the Gram matrix G of the last k columns
   minus the witness's shift mu > 0 passes an interval Cholesky with positive pivots, so
   lambda_min(G) > mu and rank = k (the k-th singular value exceeds sqrt(mu)).
3. Equilibria listed with the same rank are distinct: for every pair some coordinate of some
   token has disjoint enclosures.
4. Rank N ones are anisotropic: for the witness's vector v, R = ||X v||^2 / ||v||^2 <= ||X||_2^2 and
   R > N - (N-1)/w^2; as ||X||_F^2 = N (unit rows), the stable rank N / ||X||_2^2 is
   < N / (N - (N-1)/w^2).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat

from certify_checker.counterexample import Evaluation, confirm, retried, text_price
from certify_checker.exact import ball, interval, rational
from certify_checker.limits import limbs
from certify_checker.norms import certainly_positive_definite

KIND = "ln-equilibria"
TEXT_READS = 3  # the most an evaluation reads one number stated as text (a box's ends: read exactly, and as balls at both precisions)
INPUT_KEYS = {"n", "w"}
MAX_TOKENS = 16  # bounds the checker's running time, not the mathematics


def residual(w: arb, s: list, y: list, lam: arb) -> list:
    """H(y, lam): ((s + y) W_V - lam y) on V_m, then (||y||^2 - 1)/2."""
    v = [a + b for a, b in zip(s, y)]
    h = [v[c] + (w * v[c - 1] if c else 0) - lam * y[c] for c in range(len(y))]
    return h + [(sum(t * t for t in y) - 1) / 2]


def jacobian(w: arb, y: list, lam: arb) -> list:
    """dH/d(y, lam): rows of the m equations, then the norm equation."""
    m = len(y)
    rows = []
    for c in range(m):
        row = [arb(0)] * (m + 1)
        row[c] = 1 - lam
        if c:
            row[c - 1] = w
        row[m] = -y[c]
        rows.append(row)
    return rows + [list(y) + [arb(0)]]


def krawczyk(w: arb, s: list, box: list) -> list | None:
    """The Krawczyk image of the box (list of (lo, hi)) if it lies inside the box, else None."""
    n = len(box)
    U = [interval(lo, hi) for lo, hi in box]
    c = [ball((lo + hi) / 2) for lo, hi in box]
    J_mid = arb_mat([[x.mid() for x in row] for row in jacobian(w, c[:-1], c[-1])])
    try:
        inverse = J_mid.inv()
    except ZeroDivisionError:
        return None
    C = arb_mat([[inverse[a, b].mid() for b in range(n)] for a in range(n)])  # any point matrix will do
    H = arb_mat([[h] for h in residual(w, s, c[:-1], c[-1])])
    spread = arb_mat([[u - x] for u, x in zip(U, c)])
    image = arb_mat([[x] for x in c]) - C * H + (arb_mat(n, n, [1 if a == b else 0 for a in range(n) for b in range(n)])
                                                 - C * arb_mat(jacobian(w, U[:-1], U[-1]))) * spread
    K = [image[a, 0] for a in range(n)]
    inside = all(bool(ball(lo) < k) and bool(k < ball(hi)) for k, (lo, hi) in zip(K, box))
    return K if inside else None


def positive_definite(G: list) -> bool:
    """Interval Cholesky: every symmetric matrix in G is positive definite."""
    return certainly_positive_definite(G)


def _equilibrium(found: Evaluation, w: arb, N: int, j: int, entry: dict):
    """The enclosed rows of listed equilibrium j, or None when a token is not certified."""
    rows, s, previous = [], [arb(0)] * N, 1
    tokens = entry["tokens"]
    if len(tokens) != N:
        raise ValueError(f"equilibrium {j} lists {len(tokens)} tokens, not {N}")
    for i, token in enumerate(tokens):
        if not (isinstance(token, dict) and set(token) == {"dim", "box"}):
            raise ValueError(f"equilibrium {j}, token {i}: a token states exactly its dim and box")
        m, stated = token["dim"], token["box"]
        # lists: the two keys of an object {"0": TEXT, "1": TEXT} were read as the ends, its texts shown unread
        if (type(m) is not int or not previous <= m <= N or not isinstance(stated, list) or len(stated) != m + 1
                or not all(isinstance(ends, list) and len(ends) == 2 for ends in stated)):
            raise ValueError(f"equilibrium {j}, token {i}: dims must be nondecreasing in 1..N with m + 1 box entries "
                             "[lo, hi]")
        previous = m
        box = [(rational(lo), rational(hi)) for lo, hi in stated]
        K = krawczyk(w, s[N - m:], box)
        if not found.require(K is not None, f"equilibrium {j}, token {i}: the Krawczyk test fails"):
            return None
        if not found.require(K[-1] > 0, f"equilibrium {j}, token {i}: lam > 0 is not proven"):
            return None
        row = [arb(0)] * (N - m) + K[:-1]
        rows.append(row)
        s = [a + b for a, b in zip(s, row)]
    return rows


def _rank(found: Evaluation, rows: list, N: int, j: int, k: int, shift: Fraction) -> bool:
    mu = ball(shift)
    if not shift > 0:
        raise ValueError(f"equilibrium {j}: the Gram shift must be positive")
    cols = range(N - k, N)
    G = [[sum((r[a] * r[b] for r in rows), arb(0)) - (mu if a == b else 0) for b in cols] for a in cols]
    return found.require(positive_definite(G), f"equilibrium {j}: lambda_min(Gram) > {shift} is not proven")


def _distinct(a: list, b: list) -> bool:
    return any(not x.overlaps(y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def evaluate(inputs: dict, witness: dict) -> Evaluation:
    found = Evaluation()
    N, w_exact = inputs["n"], rational(inputs["w"])
    if type(N) is not int or not 1 <= N <= MAX_TOKENS or w_exact <= 0:
        raise ValueError(f"need an integer 1 <= n <= {MAX_TOKENS} and w > 0")
    w = ball(w_exact)
    bound_exact = Fraction(N) / (N - Fraction(N - 1) / (w_exact * w_exact))
    bound = ball(bound_exact)
    by_rank: dict[int, list] = {}
    if set(witness) != {"equilibria"} or not isinstance(witness["equilibria"], list):
        raise ValueError("the witness states exactly its list of equilibria")
    for j, entry in enumerate(witness["equilibria"]):
        rows = _equilibrium(found, w, N, j, entry)
        k = entry["tokens"][-1]["dim"]
        # Exactly the fields read: the top vector of a full-rank one (anisotropy), N entries (zip would drop more).
        full = k == N
        if set(entry) != {"tokens", "gram_shift"} | ({"top_vector"} if full else set()) or (
                full and not (isinstance(entry["top_vector"], list) and len(entry["top_vector"]) == N)):
            raise ValueError(f"equilibrium {j} states other fields than its tokens, gram_shift and (rank N) top_vector")
        by_rank.setdefault(k, []).append(rows)
        if rows is None or not _rank(found, rows, N, j, k, rational(entry["gram_shift"])):
            continue
        if k == N >= 2:  # for N = 1 the stable rank is 1, the bound itself
            v = [ball(rational(t)) for t in entry["top_vector"]]
            Xv = [sum((x * t for x, t in zip(r, v)), arb(0)) for r in rows]
            rayleigh = sum((t * t for t in Xv), arb(0)) / sum((t * t for t in v), arb(0))
            found.require(rayleigh > N - (N - 1) / (w * w), f"equilibrium {j}: stable rank < {bound_exact} is not proven")
            found.values[f"eq{j}.stable_rank_at_most"] = N / rayleigh
    for k, listed in sorted(by_rank.items()):
        certified = [rows for rows in listed if rows is not None]
        pairs_apart = all(_distinct(a, b) for i, a in enumerate(certified) for b in certified[i + 1:])
        found.require(pairs_apart, f"the equilibria of rank {k} are not proven distinct")
    found.values["stable_rank_bound"] = bound
    found.claims = claims(N, w_exact, {k: len(v) for k, v in sorted(by_rank.items())}, bound_exact)
    return found


def claims(N: int, w: Fraction, counts: dict, bound: Fraction) -> list[str]:
    """The statements a certified certificate proves, word for word."""
    lines = [f"setting: N = d = {N}, causal mask, W_Q = W_K = 0, W_V = I + {w} S (S: superdiagonal ones), post-LN x / ||x||_2"]
    lines += [f"{count} distinct {'equilibrium' if count == 1 else 'equilibria'} of rank {k}, "
              "each enclosed token by token by a Krawczyk test" for k, count in counts.items()]
    if N in counts and N >= 2:
        lines.append(f"each listed equilibrium of rank {N} has stable rank < N / (N - (N-1)/w^2) = {bound}")
    return lines


def work(cert: dict) -> int:
    """The work of the listed equilibria in the units of certify_checker.limits (certify_checker.__init__): a
    Krawczyk test per token on (N+1) x (N+1) matrices, after a fixed part, each operation weighted by its
    limbs (a box [0, 1/3] takes 150 ms at 2^16 bits for N = 16), at the stated precision and the finer one
    (counterexample.retried), and reading the numbers stated as text (counterexample.text_price).  0 when malformed
    (verify judges)."""
    try:
        N, listed, bits = cert["inputs"]["n"], cert["witness"]["equilibria"], cert["precision"]
        if type(N) is not int or type(bits) is not int or not isinstance(listed, list):
            return 0
        return (retried(lambda bits: len(listed) * (1000 + 8 * min(max(N, 0), MAX_TOKENS) ** 3) * limbs(bits), bits)
                + text_price(cert, TEXT_READS))
    except (TypeError, KeyError, AttributeError):
        return 0


def verify(cert: dict) -> tuple[bool, str]:
    return confirm(cert, KIND, evaluate, INPUT_KEYS)
