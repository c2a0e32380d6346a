"""Certificates: the exact inputs, what was compared, the verdict, and the enclosures.

Schema (format "certify-certificate/1", kind "inequality"):
    claim / bound      the claim id, or the user's bound expression (the other is null)
    verdict            holds | violated
    precision          bits at which the ball evaluation decided
    inputs             the exact configuration (certify.core.config.to_json): a valid config itself
    inputs_sha256      digest of {claim, bound, inputs, precision}: an edit of them is detected (the
                       precision is bound exactly; the digest is no signature, a forger can redo it,
                       so the checker re-derives everything it confirms)
    representation     "centred" where the tokens were carried as X = 1 c^T + E (past the first rung, a stack of
                       two or more layers without LayerNorm or FFN: certify.engine.decide.carries_centred), which
                       the checker follows; absent, as they are
    witness            float64 singular vectors per layer ("A<t>", "V<t>": basis, top), JSON numbers, a
                       basis of more than 64 entries as a binary64 block as the inputs' matrices are
                       (certify.core.numbers.encode_matrix; certificates of earlier versions state it
                       as numbers, which the checker still reads); a basis refined past binary64
                       (certify.core.refine) as rows of exact hex texts, "0x...p-F" (fixed_text);
                       outside the digest: the checker
                       only uses them to confirm norms, so a bad witness can only fail.
                       A wide matrix's (fewer rows than columns) is of its transpose, marked
                       "transposed": true; a name holding the same witness as an earlier one states
                       {"same_as": that name} (witness_table)
    values             D_in, D_out, bound, and per layer every primitive computed, as arb
                       strings "[mid +/- rad]"; "comparisons": each layer, lhs, rhs and outcome (a
                       stack claim's: one after every layer, against the bound composed up to it)
Named results (kinds "attention-head", "residual-far", ...: certify_checker/counterexample.py)
state claims, a verdict certified | refuted | undecided, the inputs, a witness and the values instead (named()).
Numbers are printed with enough digits to keep the precision's accuracy.  confirm() hands a
certificate to the independent checker: the only call certify makes into it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import math
import pickle
from pathlib import Path
from typing import Callable

from flint import arb, ctx

import certify_checker
import certify_checker.exact
import certify_checker.schema
import certify_checker.inequality  # noqa: F401  the kind confirm() reads on every decided check: loaded with the
# engine, so that it is not loaded on first use inside each of a campaign's (forked) worker processes
from certify.core import files, jsonfile
from certify.core.limits import DEFAULT, Limits, raised_with
from certify.core.numbers import arb_str
from certify.core.precision import arb_turn, working
from certify.errors import BadInput

FORMAT = "certify-certificate/1"


# The checker confirms a stated enclosure only when it contains the checker's own, which rounds
# differently: a stated ball is widened by 2^WIDENING_BITS times its radius plus that many ulps of
# its midpoint (a few bits of the precision, far inside the checker's accuracy slack).
WIDENING_BITS = 2


def widened(x: arb, precision: int) -> arb:
    """x widened by 2^WIDENING_BITS times its radius plus that many ulps (at `precision`) of its midpoint."""
    if ctx.prec != precision:  # the stated precision, whatever the caller's context (a check's already is)
        with working(precision):
            return widened(x, precision)
    slack = x.rad() * 2**WIDENING_BITS + abs(x.mid()) * _ulps(precision)  # rad() and mid() are exact balls
    return x + arb(0, slack.upper())


@functools.lru_cache(maxsize=64)
def _ulps(precision: int) -> arb:
    """2^(WIDENING_BITS - precision), exact."""
    return arb(2) ** (WIDENING_BITS - precision)


def arb_text(x: arb, precision: int) -> str:
    """A ball as decimal text with enough digits for `precision` bits (widened to hide binary rounding)."""
    digits = math.ceil(precision * math.log10(2)) + 3
    return arb_str(widened(x, precision), digits, more=True)


# The canonical JSON of json.dumps(about, sort_keys=True, separators=(",", ":")), made by one encoder: what a
# certificate is about is a tree certify builds, so the search for cycles is skipped (its text is the same).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False)


def canonical_digest(about: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of what a certificate is about; the
    checker recomputes it with its own code, so the form must not change."""
    return hashlib.sha256(_CANONICAL.encode(about).encode("utf-8")).hexdigest()


def digest(claim: str | None, bound: str | None, inputs: dict, precision: int) -> str:
    """The digest of an inequality certificate: claim, bound, inputs and precision."""
    return canonical_digest({"claim": claim, "bound": bound, "inputs": inputs, "precision": precision})


def build(inputs: dict, claim_id, bound, verdict, precision, views, comparisons, witnesses) -> dict:
    """The inequality certificate of a decided verdict: the exact inputs (certify.core.config.to_json of the case,
    made once by the check, whose preflight measured the same), every enclosure, the comparisons, the witnesses
    and the digest."""
    texts: dict = {}  # by ball: D_in, D_out and the bound are also among the layers' values and comparisons

    def text(x: arb) -> str:
        if id(x) not in texts:
            texts[id(x)] = (x, arb_text(x, precision))  # the ball kept with its text, so that its id stays its own
        return texts[id(x)][1]

    layers = [{name: text(value) for name, value in view.cache.items()} for view in views]
    compared = [
        {"layer": c.layer, "lhs_expr": c.lhs_expr, "rhs_expr": c.rhs_expr, "lhs": text(c.lhs),
         "rhs": text(c.rhs), "holds": c.outcome}
        for c in comparisons
    ]
    deciding = next((c for c in comparisons if c.outcome is False), comparisons[-1])
    last = views[-1]
    # the checker recomputes in the form the values were computed in (certify.engine.decide.carries_centred)
    representation = {"representation": "centred"} if views[0].attention is not None else {}
    return {
        "format": FORMAT,
        "kind": "inequality",
        "claim": claim_id,
        "bound": bound,
        "verdict": verdict,
        "precision": precision,
        "inputs": inputs,
        "inputs_sha256": digest(claim_id, bound, inputs, precision),
        "witness": witness_table(witnesses),
        "values": {
            "D_in": text(views[0].get("D")),
            "D_out": text(last.get("D_out")),
            "bound": text(deciding.rhs),
            "layers": layers,
            "comparisons": compared,
        },
        **representation,
    }


def witness_table(witnesses: dict) -> dict:
    """The stated norm witnesses by name (spectral.NormWitness each): a witness in full once, as basis and top
    (with "transposed": true for a wide matrix's, which is of its transpose), and under every later name that
    holds the same one as {"same_as": the first name} (value.bounded's one V shares the witnesses of its powers
    across the T layers: T^2 full ones were 187 MB at 6 layers of 128 x 384, 47 MB so, 30 MB with blocks).  A basis
    is written as the inputs' matrices are (numbers.encode_matrix: beyond BLOCK_ENTRIES entries a binary64 block,
    10.7 bytes an entry against some 26 as indented JSON numbers, written ten and read five times faster); top,
    a vector of d entries beside d^2, stays numbers as the inputs' vectors do."""
    from certify.core.numbers import Binary64Matrix, encode_matrix  # here: reading a certificate loads no numpy

    table: dict = {}
    first: dict = {}  # id of a witness -> the name it is stated under in full (witnesses keeps each alive)
    for key, w in witnesses.items():
        if id(w) in first:
            table[key] = {"same_as": first[id(w)]}
            continue
        first[id(w)] = key
        flag = {"transposed": True} if w.transposed else {}
        if w.refined:  # exact texts of its fixed-point entries, which the checker reads exactly (exact.rational)
            rows = [[fixed_text(m, w.refined.fraction_bits) for m in row] for row in w.refined.mantissas]
            table[key] = {"basis": rows, "top": [row[w.refined.top] for row in rows], **flag}
        else:
            table[key] = {"basis": encode_matrix(Binary64Matrix(w.basis)), "top": w.top.tolist(), **flag}
    return table


def fixed_text(mantissa: int, fraction_bits: int) -> str:
    """mantissa / 2^fraction_bits exactly, as a hex float ("-0x1f3ap-20"): about a character for 4 bits."""
    return f"{'-' if mantissa < 0 else ''}0x{abs(mantissa):x}p-{fraction_bits}"


# The share of the checker's bytes and work limits the refined witnesses' texts may take (certify.core.refine): the
# rest is the evaluation's, which the plan prices; a witness refined to fewer bits only leaves its norm wider.
WITNESS_SHARE = 16


# The most bits of a refined entry: its text's binary exponent, -fraction_bits, within the checker's cap on a hex float's
# (certify_checker.exact.rational refuses a larger one, and the certificate with it).
MOST_WITNESS_BITS = 4 * certify_checker.exact.MAX_DECIMAL_EXPONENT


def witness_bits(precision: int, entries: int, limits: Limits = DEFAULT) -> int:
    """The most bits, up to `precision` and MOST_WITNESS_BITS, to which witnesses of `entries` numbers in all may be
    refined so that their texts (fixed_text) take at most 1/WITNESS_SHARE of the checker's bytes and work limits at
    this precision, as the checker prices them (text_reading, text_work); halved until they do, 0 when none do."""
    bits = min(precision, MOST_WITNESS_BITS)
    while bits and entries:
        text = fixed_text((1 << bits) - 1, bits)  # the longest entry at these bits
        units, _ = text_reading({"basis": [[text]]})
        if (entries * len(text) * WITNESS_SHARE <= limits.bytes
                and text_work((units * entries, entries), precision) * WITNESS_SHARE <= limits.work):
            return bits
        bits //= 2
    return bits


def named(kind: str, claims: list[str], verdict: str, inputs: dict, witness: dict, values: dict,
          precision: int) -> dict:  # fmt: skip
    """The certificate of a named result, with its evaluation's verdict (certified, refuted or undecided)."""
    return {
        "format": FORMAT,
        "kind": kind,
        "verdict": verdict,
        "claims": claims,
        "inputs": inputs,
        "witness": witness,
        "values": {name: arb_text(x, precision) for name, x in values.items()},
        "precision": precision,
        "inputs_sha256": named_digest(kind, inputs, witness, precision),
    }


def named_digest(kind: str, inputs: dict, witness: dict, precision: int) -> str:
    """The digest of a named result's certificate: kind, inputs, witness and precision."""
    return canonical_digest({"kind": kind, "inputs": inputs, "witness": witness, "precision": precision})


def confirm(cert: dict, limits: Limits = DEFAULT, written: bool = True, closed=None) -> certify_checker.Confirmation:
    """The independent checker's re-derivation of the certificate (ok, message), under the same
    limits as the engine's reader (the checker keeps its own copy of them).  written: the certificate is judged
    as the text `write` puts in its file, read by the checker's own loader (_as_written): one whose text passes
    a limit is refused, as `certify verify` of that file refuses it; False for a certificate read from its file,
    whose own text the reader measured (`certify verify`).  closed: a set, made empty, in which the checker records the
    leaf tests of region proofs it closes, and whose tests it does not run again (certify_checker.region_proof.verify):
    a resumed proof's earlier leaves, replayed before its search goes on, are not replayed again in the merged proof."""
    checker_limits = _checker_limits(limits)
    if written:
        try:
            cert = _as_written(cert, limits)
        except certify_checker.Unreadable as err:
            return certify_checker.Confirmation(False, str(err), refused=True)
    with arb_turn():  # the checker's precision is the process's too
        return certify_checker.verify(cert, checker_limits, closed)


def _as_written(cert: dict, limits: Limits):
    """Under limits a user set, the certificate read back by certify_checker.load from the bytes `write` puts in its
    file, under its size, nesting and digits limits (Unreadable past one): the checker's measure of a value's tree
    (certify_checker.tree_problem) counts an entry a byte, short of the text, and a certificate of 1,939 bytes passed
    a limit of 600 bytes there, which `certify verify` of its file then refused.  Under the defaults, `cert` itself,
    measured as a tree, where its text is certain to fit (_fits): writing and reading the text back cost a small check
    a third more (8 x 4: 4.4 to 5.9 times the bare arb evaluation).  Taken for every certificate, that shortcut
    confirmed one whose text passed the default 64 MiB, which `certify verify` then refused: a trajectory of 4000
    layers near consensus states balls of 1900-digit exponents (69 MB)."""
    if limits == DEFAULT and _fits(cert, limits):
        return cert
    return certify_checker.load(jsonfile.dumps(cert).encode("utf-8"), _checker_limits(limits))


def _fits(cert: dict, limits: Limits) -> bool:
    """Whether the text `write` puts in the certificate's file is certain to fit the bytes limit.  Indented, every
    entry and closing bracket gains at most a newline and one space a level (within the nesting limit, which the
    checker enforces anyway) over the at least one byte it takes in the compact JSON text, bounded first from the
    certificate's pickle (_pickled_length, a tenth of the cost), then, for a large one, measured (made in C).  Its
    arrays, objects and keys, a byte each of that compact text, are then within their limit (limits.CONTAINER_BYTES)
    too: the defaults' nesting, 32, makes the text's room bytes / 34."""
    room = (limits.bytes - 1) // (limits.nesting + 2)  # the longest compact text that fits once indented
    if JSON_PER_PICKLED_BYTE * _pickled_length(cert) <= room:
        return True
    try:
        return len(json.dumps(cert, allow_nan=False)) <= room
    except ValueError:  # a value binary64 cannot write (jsonfile writes it otherwise): measured as written
        return False


# json.dumps of a JSON value (separators ", " and ": ", keys strings) takes at most this many characters a byte of
# its pickle without memo (_pickled_length): a bool pickles to 1 byte and writes "false, " (7); None 1 and "null, "
# (6); a float 9 ("G" and 8 bytes) and at most 24 + 2 (-2.2250738585072014e-308, or null or NaN); a string of b bytes
# of UTF-8 b + 2 and at most 6 characters a byte (\u0001; an astral character's 4 bytes \ud83d\ude00) + 4; an int of
# n bytes n + 1 or n + 2 and its digits, under 2.5 n + 4; a container 1 to 3 and its brackets and separator, 4.
JSON_PER_PICKLED_BYTE = 7


def _pickled_length(value) -> int:
    """The length of value's pickle without memo (a string met twice is pickled twice, as JSON writes it twice): a
    bound on its JSON text made in C without writing its numbers in decimal, the bulk of json.dumps's time."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: a value met twice is written twice
    pickler.dump(value)
    return buffer.tell()


def checker_refusal(cert: dict, limits: Limits = DEFAULT, priced: int | None = None) -> str | None:
    """Which of the checker's limits a certificate of this shape passes, or None: what `certify verify` at
    these limits would refuse unread, asked before a long run that would write it (priced: a trajectory's
    steps' step_prices summed, in place of those the skeleton states: certify_checker.over_limits).  Its size and
    nesting as the checker reads a certificate's tree too: a skeleton larger or deeper than the limits allow was
    admitted, and the run's certificate was then not confirmed whatever it found."""
    checker_limits = _checker_limits(limits)
    return certify_checker.tree_problem(cert, checker_limits) or certify_checker.over_limits(cert, checker_limits, priced)


def region_prices(cert: dict):
    """The checker's price of a region proof's replay a part at a time (certify_checker.region_proof.prices), in the unit
    of its work limit: (symbol, leaf(precision, method)) for the claim and region `cert` states, whose sum over a
    proof's tree and leaves is the checker's estimate of its work; the prover's meter keeps that sum as its proof
    grows, and checker_refusal decides."""
    import certify_checker.region_proof  # here: only a region proof's meter needs it

    return certify_checker.region_proof.prices(cert)


def tree_limit(cert: dict, limits: Limits = DEFAULT) -> str | None:
    """Which of the checker's size, nesting and digits limits the written text of `cert` passes, as `certify verify`
    of its file measures it (_as_written), and how to raise it; or None.  No precision makes a
    certificate smaller or shallower: a check need not climb its ladder for one."""
    if not (problem := _text_problem(cert, limits)):
        return None
    raised = [name for name in ("nesting", "bytes", "digits")
              if _text_problem(cert, dataclasses.replace(limits, **{name: 1 << 62})) is None]
    return f"{problem}: raise it with {raised_with(raised or ('nesting', 'bytes'))}"


def said(confirmation: certify_checker.Confirmation, cert: dict, limits: Limits = DEFAULT) -> str:
    """The checker's message, with how to raise it when a size, nesting or digits limit refused the certificate's
    text (tree_limit): more precision would not help, a raised limit does."""
    return (tree_limit(cert, limits) or confirmation.message) if confirmation.refused else confirmation.message


def _text_problem(cert: dict, limits: Limits) -> str | None:
    """Which limit the certificate's written text passes as the checker reads it (_as_written), or None."""
    try:
        return certify_checker.tree_problem(_as_written(cert, limits), _checker_limits(limits))
    except certify_checker.Unreadable as err:
        return str(err)


# How certify_checker.limits ends a size cap's refusal (`certify verify --limit NAME=N` raises it)
CHECKER_ADVICE = f" ({certify_checker.limits.ADVICE}"


def checker_limit(cert: dict, limits: Limits = DEFAULT, priced: int | None = None, quote: bool = True) -> str | None:
    """Which of the checker's limits a certificate of this shape passes and how to raise it, in words, or None (the
    limit found as the one whose raising lets the certificate through); quote: with the checker's estimate (not for a
    meter's least cost, which passes the limit by a hair and would read as the limit itself); priced: checker_refusal's."""
    # Asked as checker_refusal a limit at a time, a region proof's skeleton was read 20 times (its tree and its leaves'
    # work ten times each, at a stop of the prover's search): the estimate reads its kind's work once, and the tree,
    # measured first, is measured again only when it is what the checker refuses (raising a limit never refuses more).
    checker_limits = _checker_limits(limits)
    tree, estimate = certify_checker.tree_problem(cert, checker_limits), certify_checker.estimate(cert, priced)
    if not (refusal := tree or estimate(checker_limits)):
        return None
    for name in (f.name for f in dataclasses.fields(limits)):
        raised = dataclasses.replace(checker_limits, **{name: 1 << 62})
        if (tree is None or certify_checker.tree_problem(cert, raised) is None) and estimate(raised) is None:
            # the checker's words without its own advice: the line ends with the advice for both commands
            stated = f"({refusal.split(CHECKER_ADVICE)[0]})" if quote else f"of {getattr(limits, name):.3g}"
            return f"the checker's {name} limit {stated}: raise it with {raised_with([name])}"
    return f"the checker's limits: {refusal}"


def text_reading(inputs: dict) -> tuple[int, int]:
    """(units, count) of reading the numbers a certificate with these inputs states as text
    (certify_checker.schema.reading): the engine prices them as the checker does, not by a copy of its formula."""
    return certify_checker.schema.reading(inputs)


def text_work(reading: tuple[int, int], bits: int) -> int:
    """The checker's work of reading those texts in an inequality certificate at these bits, its recomputations
    included (certify_checker.inequality.text_work)."""
    return certify_checker.inequality.text_work(reading, bits)


@functools.lru_cache(maxsize=64)
def bound_operations(bound: str | None) -> int:
    """The ball operations of one evaluation of a user's bound (0 for none), as the checker counts them
    (certify_checker.inequality.operations); remembered, as a campaign's checks share their bound (parsed once)."""
    return certify_checker.inequality.operations(bound)


def bound_work(count: int, bits: int) -> int:
    """The checker's work of `count` ball operations of a bound at these bits, its recomputations included
    (certify_checker.inequality.bound_work)."""
    return certify_checker.inequality.bound_work(count, bits)


def step_prices(cert: dict) -> Callable[[int], int]:
    """The checker's price of one step at given bits of a trajectory with this certificate's configuration
    (certify_checker.trajectory.step_prices): a run budgets its steps in the checker's own unit, not a copy of it."""
    import certify_checker.trajectory  # here: only a trajectory needs it, not a check or the reading of a certificate

    return certify_checker.trajectory.step_prices(cert)


@functools.lru_cache(maxsize=64)
def _checker_limits(limits: Limits) -> certify_checker.Limits:
    return certify_checker.Limits(**vars(limits))


def write(cert: dict, path) -> Path:
    """Write a certificate as JSON; returns the path."""
    return jsonfile.write(cert, path)


def read(path, limits: Limits = DEFAULT) -> dict:
    """A certificate file read under the JSON rules and limits of certify.core.jsonfile."""
    path = files.input_file(path, "certificate")
    try:
        cert = jsonfile.read(path, str(path), limits)
    except BadInput as err:  # not JSON (a job's page, chunk, figure) or beyond a limit
        raise BadInput(f"{err}{_in_job(path)}") from None
    return of_format(cert, str(path), lambda: _instead(path, cert))


def of_format(cert, shown: str, instead: Callable[[], str] = str) -> dict:
    """cert, when it is a certify certificate (a dict of FORMAT), read from a file or given as a dict; else BadInput
    naming it as `shown`, with what to run `instead`."""
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise BadInput(f"{shown}: not a certify certificate (format {FORMAT!r} expected){instead()}")
    return cert


def _instead(path: Path, data) -> str:
    """What to run instead on a file given where a certificate goes: certify check on a configuration (an attack's
    best.json, an example), certify verify on the job folder it is in (_in_job), or on the certificate beside an
    attack's or a trajectory's summary."""
    if isinstance(data, dict) and "X" in data:
        return f"; it is a configuration, which certify check {path} decides"
    folder = path.parent
    beside = [folder / name for name, written in _WRITTEN_BESIDE.items()
              if path.name in written and (folder / name).is_file()]
    return _in_job(path) or (f"; the certificate beside it: certify verify {beside[0]}" if beside else "")


def _in_job(path: Path) -> str:
    """The hint to verify the folder of a campaign or a corpus run that `path` is in: at its top (summary.json,
    index.html, a figure) or in one of its folders (chunks/, certificates/); "" for a file in no job's folder."""
    for folder in path.parents[:2]:
        if (folder / "manifest.json").is_file():
            return f"; it is in the folder of a campaign or a corpus run: certify verify {folder}"
    return ""


# the files an attack's and a trajectory's --out write beside their certificate: only those are answered with it (a
# user's notes.json beside a trajectory's certificate has nothing to do with it)
_WRITTEN_BESIDE = {"certificate.json": ("summary.json", "attack.json"),
                   "trajectory-certificate.json": ("trajectory.json",)}
