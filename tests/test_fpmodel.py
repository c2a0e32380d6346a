"""The floating-point model of the rigorous float64 tier: its probes pass here and catch violations."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import math
import operator
import os
import platform
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from certify.core.arith import fpmodel, rounding
from certify.core.arith.midrad64 import MidRad64
from certify.search import tier3


def test_probes_pass_on_this_machine():
    assert fpmodel.tier3_usable() == (True, "")
    for probe in fpmodel.PROBES:
        assert probe() is None, probe.__name__


def test_blas_probe_catches_float32_accumulation_and_wrong_results():
    def float32(a, b):
        with np.errstate(all="ignore"):
            return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float64)
    assert "BLAS dot product" in fpmodel.probe_blas(float32)
    off_by_one = lambda a, b: np.matmul(a, b) + 1e-9
    assert fpmodel.probe_blas(off_by_one) is not None


def test_blas_probe_catches_a_product_just_outside_the_a_priori_bound():
    """A product whose every entry is off by 1.5 times gamma_k |a|^T |b| + k ETA (the exact value in
    Fractions, moved that far) is outside the model, however little."""
    def outside(a, b):
        a3, b3 = np.atleast_3d(a).reshape(-1, *a.shape[-2:]), np.atleast_3d(b).reshape(-1, *b.shape[-2:])
        out = []
        for m1, m2 in zip(a3, b3):
            rows = []
            for row in m1:
                entries = []
                for col in np.swapaxes(m2, -1, -2):
                    terms = [Fraction(float(x)) * Fraction(float(y)) for x, y in zip(row, col)]
                    bound = rounding.gamma(len(terms)) * sum(abs(t) for t in terms) + len(terms) * Fraction(rounding.ETA)
                    entries.append(float(sum(terms) + 3 * bound / 2))
                rows.append(entries)
            out.append(rows)
        return np.array(out).reshape(a.shape[:-1] + b.shape[-1:])
    assert "outside the binary64 error bound" in fpmodel.probe_blas(outside)


def test_every_probe_runs_at_start_up_or_on_every_call():
    """A probe that is defined but not run checks nothing: each probe_ function of the model is one of the
    start-up probes or the environment's, run on every call."""
    defined = {getattr(fpmodel, name) for name in dir(fpmodel) if name.startswith("probe_")}
    assert defined == set(fpmodel.PROBES) | {fpmodel.probe_environment}


def test_probes_catch_an_ldexp_or_sqrt_that_does_not_round_to_nearest(monkeypatch):
    """ldexp truncating into the subnormals (exp_midrad's radius allows half a unit there) and a square root
    one ulp above the correctly rounded one each fail their probe."""
    real_ldexp, real_sqrt = np.ldexp, np.sqrt
    # the probe scales by 2^-1074 only: x 2^-1074 rounded towards zero
    monkeypatch.setattr(np, "ldexp", lambda x, e: real_ldexp(np.trunc(real_ldexp(x, e + 1074)), -1074))
    assert "ldexp" in fpmodel.probe_subnormals()
    monkeypatch.setattr(np, "ldexp", real_ldexp)
    monkeypatch.setattr(np, "sqrt", lambda x, **kw: np.nextafter(real_sqrt(x, **kw), np.inf))
    assert "sqrt" in fpmodel.probe_rounding()


class _DoubleRounded(np.ndarray):
    """binary64 arrays whose + - * / round twice, to 64 significant bits (x87 extended precision) and then to 53,
    as numpy's loops do where the x87 unit computes them (32-bit x86 without SSE2)."""

    def _twice(self, other, op):
        def rounded(value: Fraction) -> float:
            if value == 0:
                return 0.0
            scale = Fraction(2) ** (63 - math.floor(math.log2(abs(value))))
            while abs(value) * scale >= 2**64:  # log2 of a float rounded up
                scale /= 2
            return float(Fraction(round(value * scale)) / scale)  # round: ties to even; float(): to nearest
        pairs = np.broadcast(np.asarray(self), np.asarray(other))
        return np.array([rounded(op(Fraction(float(a)), Fraction(float(b)))) for a, b in pairs]).reshape(pairs.shape)

    def __add__(self, other):
        return self._twice(other, operator.add)

    def __sub__(self, other):
        return self._twice(other, operator.sub)

    def __mul__(self, other):
        return self._twice(other, operator.mul)

    def __truediv__(self, other):
        return self._twice(other, operator.truediv)


def test_rounding_probe_catches_double_rounding_through_extended_precision(monkeypatch):
    """Rounded to 64 bits first, a sum just above a tie lands on it and then rounds to even: the result is still a
    neighbour of the exact sum, but 1 + (u + u/4096) errs by more than u |c|, the rounding bound every enclosure
    uses.  Every tie and quotient the probe checked rounds the same twice as once; the probe passed."""
    real_tile = fpmodel._tile
    monkeypatch.setattr(fpmodel, "_tile", lambda values: real_tile(values).view(_DoubleRounded))
    assert "1 + (u + u/4096)" in fpmodel.probe_rounding()


def test_extended_accumulation_stays_within_the_model():
    """Exact accumulation (more accurate than binary64) is within the a-priori bound."""
    exact = lambda a, b: np.array(
        [[[float(sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(row, col))) for col in np.swapaxes(m2, -1, -2)]
          for row in m1] for m1, m2 in zip(np.atleast_3d(a).reshape(-1, *a.shape[-2:]),
                                           np.atleast_3d(b).reshape(-1, *b.shape[-2:]))]).reshape(a.shape[:-1] + b.shape[-1:])
    assert fpmodel.probe_blas(exact) is None


def test_tier3_defers_to_arb_when_the_model_fails(monkeypatch):
    monkeypatch.setattr(fpmodel, "tier3_usable", lambda: (False, "the rigorous float64 tier is off: test"))
    rng = np.random.default_rng(0)
    verdicts = tier3.decide("collapse.global", tier3.Batch(X=rng.standard_normal((4, 3, 2)),
                                                           A=rng.standard_normal((4, 2, 2)) * 0.1))
    assert list(verdicts) == [tier3.UNDECIDED] * 4


def test_successor_and_predecessor_enclose_rounded_operations():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(2000) * 10.0 ** rng.integers(-320, 300, 2000)
    b = rng.standard_normal(2000) * 10.0 ** rng.integers(-20, 20, 2000)
    with np.errstate(all="ignore"):
        for op, exact in ((np.add, lambda x, y: x + y), (np.multiply, lambda x, y: x * y),
                          (np.divide, lambda x, y: x / y)):
            c = op(a, b)
            lo, hi = rounding.down(c), rounding.up(c)
            for x, y, l, h, ci in zip(a, b, lo, hi, c):
                if np.isfinite(ci) and np.isfinite(h) and np.isfinite(l):
                    z = exact(Fraction(float(x)), Fraction(float(y)))
                    assert Fraction(float(l)) <= z <= Fraction(float(h))
                    assert l < ci < h or ci == 0 and l < 0 < h


def test_product_error_bound_on_adversarial_products():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 30)) * 10.0 ** rng.integers(-150, 150, (20, 30))
    B = rng.standard_normal((30, 10)) * 10.0 ** rng.integers(-150, 150, (30, 10))
    product = MidRad64.matmul(A, B)
    mid, rad = product.mid, product.rad
    for i in range(20):
        for j in range(10):
            z = sum(Fraction(float(A[i, l])) * Fraction(float(B[l, j])) for l in range(30))
            assert abs(Fraction(float(mid[i, j])) - z) <= Fraction(float(rad[i, j]))


# The SSE control register MXCSR (flush-to-zero 0x8000, denormals-are-zero 0x40) through two x86-64
# instructions placed in executable memory: stmxcsr [rdi]; ret and ldmxcsr [rdi]; ret.  This is what a shared
# library built with fast-math does when it is loaded (crtfastmath), for the whole thread.
MXCSR_HELPER = """
import ctypes, mmap, platform, sys
def mxcsr():
    if platform.machine() not in ("x86_64", "AMD64") or not sys.platform.startswith("linux"):
        return None
    try:
        memory = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError, AttributeError):
        return None
    memory.write(bytes([0x0F, 0xAE, 0x1F, 0xC3, 0x0F, 0xAE, 0x17, 0xC3]))
    address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    kind = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint32))
    return kind(address), kind(address + 4), memory
FLUSH_TO_ZERO = 0x8040
"""
# a script's start: flush-to-zero set in its main thread (state: the flags before)
FLUSHING = MXCSR_HELPER + """
read, write, memory = mxcsr()
state = ctypes.c_uint32()
read(ctypes.byref(state))
write(ctypes.byref(ctypes.c_uint32(state.value | FLUSH_TO_ZERO)))
"""
DIRECTED = (0x400, 0x800, 0xC00)  # x86's FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO


def _libm() -> str:
    """libm's name, for fesetround with x86's constants (DIRECTED); the test is skipped elsewhere."""
    libm = ctypes.util.find_library("m")
    if platform.machine() not in ("x86_64", "AMD64") or libm is None:
        pytest.skip("the fenv constants are x86's")
    return libm


@contextlib.contextmanager
def _rounding(mode: int):
    """The process rounds as `mode` (fesetround) inside the block, to nearest again after it."""
    fesetround = ctypes.CDLL(_libm()).fesetround
    fesetround(mode)
    try:
        yield
    finally:
        fesetround(0)  # FE_TONEAREST


_helper: dict = {}
exec(MXCSR_HELPER, _helper)

# tokens 1e-200 apart: D_out > 0 exactly, but every square of a difference is below the subnormals
TINY_SPREAD = {"X": [[0.0], [1e-200], [0.0]], "A": [[1.0]]}


def test_flush_to_zero_set_after_start_up_switches_the_tier_off():
    """The probes ran once at start-up; flush-to-zero set later made tier 3 say D_out <= 0 holds (every
    square of a difference, and every 2^-1074 of the error bounds, read as 0) where arb finds it violated."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    from certify import engine
    goal = engine.target(None, "0")
    batch = tier3.batch_of_configs([TINY_SPREAD])
    assert fpmodel.tier3_usable() == (True, "")
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    try:
        write(ctypes.byref(ctypes.c_uint32(saved.value | _helper["FLUSH_TO_ZERO"])))
        usable, reason = fpmodel.tier3_usable()
        verdict = tier3.decide(goal.claim, batch)[0]
    finally:
        write(ctypes.byref(saved))
    assert not usable and "flushed to zero" in reason
    assert verdict == tier3.UNDECIDED
    assert engine.check(TINY_SPREAD, goal=goal).verdict == engine.VIOLATED
    assert fpmodel.tier3_usable() == (True, "")  # back to normal: the tier is on again


def test_flush_to_zero_on_before_certify_is_loaded_is_caught():
    """On from the start, flush-to-zero read 2^-1074 as 0, and the probes compared zeros with zeros."""
    if _helper["mxcsr"]() is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    script = FLUSHING + """
from certify import engine
from certify.search import tier3
goal = engine.target(None, "0")
print(tier3.decide(goal.claim, tier3.batch_of_configs([{"X": [[0.0], [1e-200], [0.0]], "A": [[1.0]]}]))[0])
print(tier3.unusable_reason())
"""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    verdict, reason = done.stdout.splitlines()
    # certify compiled here reads ETA = 2^-1074 as 0 ("read as 0"); loaded from bytecode compiled without
    # flush-to-zero, ETA is right and the next probe, a result flushed to zero, catches it: either way the tier is off
    assert verdict == tier3.UNDECIDED and ("2^-1074 was read as 0" in reason or "flushed to zero" in reason), reason


def test_bytecode_compiled_under_flush_to_zero_keeps_the_smallest_subnormal():
    """ETA = 2.0**-1074 was folded into the bytecode when compiled: compiled once under flush-to-zero (the first
    import in a process with a fast-math library loaded), it read as 0 in every later run, without flush-to-zero,
    and the tier was off there for a reason that no longer held."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    source = Path(rounding.__file__).read_text()
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    try:
        write(ctypes.byref(ctypes.c_uint32(saved.value | _helper["FLUSH_TO_ZERO"])))
        code = compile(source, rounding.__file__, "exec")
    finally:
        write(ctypes.byref(saved))
    loaded: dict = {}
    exec(code, loaded)  # as a later run loads the bytecode, without flush-to-zero
    assert np.array([loaded["ETA"]]).view(np.int64)[0] == 1


def test_bytecode_compiled_under_a_rounding_mode_keeps_the_model_s_constants():
    """2.0**k and its sums are folded into the bytecode, by pow, which errs under a rounding mode: compiled once
    rounding downward (the first import in a process where a library set it), PHI read u (not u (1 + 2u)), exp's
    LN2_REMAINDER one ulp below its bound, and the probes' 2^-1022 the largest subnormal, for every later run (the
    tier off there for a reason that no longer held)."""
    from certify.core.arith import exp64, midrad64
    exact = {rounding: ("UNIT_ROUNDOFF", "PHI", "ETA"), exp64: ("LN2_REMAINDER",), fpmodel: (),
             midrad64: ("_SLACK", "_EXACT_MULTIPLES", "_DOUBLED", "_WIDENED")}  # (exp64's decimals move an ulp:
    # R1_MAX, a run-time check, and R_MAX down, REL_ERROR up, each with room in the analysis that tests them)
    for module, names in exact.items():
        source = Path(module.__file__).read_text()
        for mode in DIRECTED:
            with _rounding(mode):
                code = compile(source, module.__file__, "exec")
            loaded: dict = {"__name__": module.__name__}
            exec(code, loaded)  # as a later run loads the bytecode, rounding to nearest
            assert [loaded[name] for name in names] == [getattr(module, name) for name in names], hex(mode)
            if module is fpmodel:
                assert loaded["probe_environment"]() is None and loaded["probe_subnormals"]() is None, hex(mode)


def test_a_rounding_mode_set_after_start_up_switches_the_tier_off():
    assert fpmodel.tier3_usable() == (True, "")
    for mode in DIRECTED:
        with _rounding(mode):
            usable, reason = fpmodel.tier3_usable()
        assert not usable and "rounding mode" in reason
    assert fpmodel.tier3_usable() == (True, "")


def test_flags_of_blas_threads_are_probed():
    """BLAS's threads keep the flags of the thread that started them (the one that loaded numpy): flush-to-zero
    set then and cleared since in this thread went on flushing there, unseen by the probes (run here, and on
    products too small to be shared out), and tier 3 said D_out <= 0.99 D_out held."""
    if _helper["mxcsr"]() is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    script = FLUSHING + """
import numpy as np  # BLAS's threads start with flush-to-zero
write(ctypes.byref(state))  # and this thread is back to normal
from certify import engine
from certify.search import tier3
X = np.random.default_rng(1).standard_normal((128, 384))
# no scores (A = 0), a residual connection: every output token is x_i + the mean token, so D_out = D, here computed
# without BLAS at the scale of X, then scaled by 2^-520 (exactly): the squares of differences are subnormal
D = max(float(np.sqrt(((X[i] - X) ** 2).sum(axis=1)).max()) for i in range(len(X))) * 2.0**-520
config = {"X": (X * 2.0**-520).tolist(), "A": np.zeros((384, 384)).tolist(), "residual": True}
print(tier3.decide(engine.target(None, repr(0.99 * D)).claim, tier3.batch_of_configs([config]))[0])
print(tier3.unusable_reason())
"""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root), "OPENBLAS_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr
    verdict, reason = done.stdout.splitlines()
    assert verdict == tier3.UNDECIDED and "BLAS's threads" in reason, (verdict, reason)


def test_a_rounding_mode_of_blas_threads_is_probed():
    """Likewise a rounding mode set when numpy was loaded and set back to nearest in this thread since."""
    libm, root = _libm(), Path(__file__).resolve().parents[1]
    for mode in DIRECTED:
        script = (f"import ctypes; fesetround = ctypes.CDLL({libm!r}).fesetround; fesetround({mode}); "
                  "import numpy; fesetround(0); from certify.search import tier3; print(tier3.unusable_reason())")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=root,
                              env={**os.environ, "PYTHONPATH": str(root), "OPENBLAS_NUM_THREADS": "2"})
        assert done.returncode == 0, done.stderr
        assert "BLAS's threads" in done.stdout, (mode, done.stdout)


def test_the_blas_threads_probe_knows_its_product():
    """The product the BLAS threads' probe compares with is A B, bit for bit, here (exact rationals)."""
    A, B, C = fpmodel._threaded_product()
    used = np.flatnonzero(A.any(axis=0))
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1), (30, 31)):
        exact = sum(Fraction(float(A[i, l])) * Fraction(float(B[l, j])) for l in used)
        assert Fraction(float(C[i, j])) == exact or float(C[i, j]) == fpmodel._rounded(exact)
    assert fpmodel.probe_environment() is None


def test_a_rounding_mode_does_not_change_the_numbers_a_file_holds(tmp_path):
    """float() rounds as the floating-point environment does: in a process rounding down, a file's 0.1 was read as
    the binary64 below it, and D_out <= 0.1 held (for those numbers) where for the file's D_out = fl(0.1) > 0.1; the
    checker read a certificate's numbers so too."""
    import certify_checker
    from certify import engine
    from certify.core import jsonfile
    path = tmp_path / "tie.json"
    path.write_text('{"X": [[0.0], [0.1]], "A": [[0.0]], "residual": true}')  # D_out = D = fl(0.1)
    rng = np.random.default_rng(5)
    numbers = [float(x) for x in rng.standard_normal(500) * 10.0 ** rng.integers(-320, 300, 500)] + [0.1, 5e-324]
    text = "[" + ", ".join(map(repr, numbers)) + "]"
    for mode in DIRECTED:
        with _rounding(mode):
            verdict = engine.check(str(path), bound="0.1").verdict
            read, checked = jsonfile.loads(text, "numbers.json"), certify_checker.load(text)
        assert verdict == engine.VIOLATED, hex(mode)
        assert np.array_equal(np.array(read).view(np.int64), np.array(numbers).view(np.int64)), hex(mode)
        assert np.array_equal(np.array(checked).view(np.int64), np.array(numbers).view(np.int64)), hex(mode)


def test_a_campaign_is_not_sampled_under_another_rounding_mode():
    """numpy's draws round as the process does: under a rounding mode a library set, a campaign's configuration i was
    another than its seed gives elsewhere, and certify verify rejected a sound campaign (every certificate "about
    another configuration"); a campaign's configurations are not drawn there now (bad input, exit 2)."""
    from certify.errors import BadInput
    from certify.search import samplers
    for mode in DIRECTED:
        with _rounding(mode), pytest.raises(BadInput, match="rounded to nearest"):
            samplers.samples("gaussian", 3, 2, 1, [0, 1])
    assert samplers.samples("gaussian", 3, 2, 1, [0])[0].config == samplers.sample("gaussian", 3, 2, 1, 0).config


def test_a_value_compared_with_a_file_is_read_back_as_the_file_is():
    """A folder's parameters, summary and records decided again were compared with what its files hold after
    json.loads alone, which rounds as the process does: under a rounding mode a library set, 0.1 came back as another
    number than the file's, read by certify's reader, and a sound folder was refused or found edited."""
    from certify.core import jsonfile
    # the nearest binary64 to 0.1 is above it (misread rounding down or towards zero), to 0.3 below it (rounding up)
    value = {"L_range": (0.1, 0.3), "margin": 1e-310}
    for mode in DIRECTED:
        with _rounding(mode):
            by_float, read = json.loads(json.dumps(value)), jsonfile.as_read(value)
        as_written = jsonfile.loads(jsonfile.dumps(value), "value")
        assert read == {"L_range": [0.1, 0.3], "margin": 1e-310} == as_written, hex(mode)
        assert by_float != read, hex(mode)  # what the comparison went through before

def test_flush_to_zero_does_not_change_the_numbers_a_file_holds(tmp_path):
    """Under flush-to-zero (a fast-math library loaded) float() read a file's 5e-324 as 0, and D_out <= 0 held."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    from certify import engine
    path = tmp_path / "subnormal.json"
    path.write_text('{"X": [[0.0], [5e-324]], "A": [[0.0]], "residual": true}')  # D_out = D = 2^-1074
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    try:
        write(ctypes.byref(ctypes.c_uint32(saved.value | 0x8000)))  # flush-to-zero alone: inputs are read as they are
        verdict = engine.check(str(path), bound="0").verdict
    finally:
        write(ctypes.byref(saved))
    assert verdict == engine.VIOLATED


def test_denormals_are_zero_refuses_a_file_with_a_subnormal_number(tmp_path):
    """Under denormals-are-zero (a fast-math library loaded) Fraction(x), float.hex and arb(x) read 2^-1074 as 0 or
    2^-1023: D_out <= 1e-308 was found violated, certified, where D_out = 2^-1074.  Such a number is refused now."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    from certify import engine
    from certify.errors import BadInput
    # a matrix of numbers read at once, one read entry by entry, and a binary64 block
    paths = [tmp_path / "block.json", tmp_path / "entries.json", tmp_path / "binary64.json"]
    paths[0].write_text('{"X": [[0.0], [5e-324]], "A": [[0.0]], "residual": true}')
    paths[1].write_text('{"X": [["0"], [5e-324]], "A": [[0.0]], "residual": true}')
    paths[2].write_text('{"X": {"binary64": "AAAAAAAAAAABAAAAAAAAAA==", "shape": [2, 1]}, "A": [[0.0]], "residual": true}')
    assert [engine.check(str(path), bound="1e-308").verdict for path in paths] == [engine.HOLDS] * 3
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    for path in paths:
        try:
            write(ctypes.byref(ctypes.c_uint32(saved.value | 0x40)))  # denormals-are-zero
            with pytest.raises(BadInput, match=r"^X(\[1\]\[0\])?: a subnormal .*denormals-are-zero"):  # where it is
                engine.check(str(path), bound="1e-308")
        finally:
            write(ctypes.byref(saved))


def test_the_checker_refuses_a_subnormal_number_under_denormals_are_zero(tmp_path, monkeypatch):
    """A certificate of D_out <= 1e-308 violated for tokens 2^-1074 apart (made where denormals-are-zero read 2^-1074
    as 2^-1023: D_out = 2^-1074 holds it) was confirmed by a checker under denormals-are-zero, which reads it so too."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    import certify_checker
    from certify import engine
    from certify.core import numbers
    path = tmp_path / "subnormal.json"
    path.write_text('{"X": [[0.0], [5e-324]], "A": [[0.0]], "residual": true}')
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    try:
        write(ctypes.byref(ctypes.c_uint32(saved.value | 0x40)))  # denormals-are-zero
        with monkeypatch.context() as unguarded:  # the engine and its checker as they were: made so, it is confirmed
            unguarded.setattr(numbers, "_subnormals_read", lambda: True)
            unguarded.setattr(certify_checker.exact, "subnormal_unread", lambda value: False, raising=False)
            result = engine.check(str(path), bound="1e-308")
        confirmation = certify_checker.verify(result.certificate)
    finally:
        write(ctypes.byref(saved))
    assert result.verdict == engine.VIOLATED  # false: D_out = 2^-1074 <= 1e-308
    assert not confirmation.ok and confirmation.refused and "denormals-are-zero" in confirmation.message


def test_numbers_read_by_integers_are_float_s_for_any_exponent_and_length():
    """The reading of a JSON number where float() would misread it (a rounding mode set) gave an internal error (exit
    4; certify verify too) for an exponent beyond 10^18, which Decimal refuses and float() reads as 0 or inf, and took
    5 s for a number of 300,000 digits (exact fractions, quadratic in them): days for one of 64 MiB."""
    import time
    import certify_checker
    from certify.core import jsonfile
    tie = "9007199254740993"  # 2^53 + 1, halfway between two binary64 numbers: to even, below; up beyond it
    midpoint = "0." + str((2**53 - 1) * 5**1075).rjust(1075, "0")  # (2^53 - 1) 2^-1075, below 2^-1022
    assert len(midpoint[2:].strip("0")) == 768  # the most significant digits of a midpoint
    texts = ["1e99999999999999999999999999", "-1e-99999999999999999999999999", "0e99999999999999999999999999",
             "-0.0e-" + "9" * 5000, "1e-" + "0" * 40 + "400", "1e" + "9" * 5000, tie + ".0", tie + "." + "0" * 300000,
             tie + "." + "0" * 300000 + "1", "0." + "3" * 300000, midpoint, midpoint + "0" * 50 + "1"]
    expected = np.array([float(text) for text in texts]).view(np.int64)
    for read in (jsonfile.nearest_binary64, certify_checker.exact.nearest_binary64):
        start = time.process_time()
        assert np.array_equal(np.array([read(text) for text in texts]).view(np.int64), expected), read.__module__
        assert time.process_time() - start < 1, read.__module__


def test_denormals_are_zero_reads_a_float32_subnormal_as_itself(tmp_path):
    """numpy's conversion to float64 read a float32 array's subnormal entry (1e-45, a normal binary64 number) as 0 under
    denormals-are-zero: D_out <= 0 held for an .npz file's tokens 1e-45 apart, and a model's such weights were 0."""
    registers = _helper["mxcsr"]()
    if registers is None:
        pytest.skip("needs x86-64 Linux and executable memory")
    read, write, _memory = registers
    from certify import engine
    from certify.core import numbers
    path = tmp_path / "tiny.npz"
    np.savez(path, X=np.array([[0.0], [1e-45]], dtype=np.float32), A=np.zeros((1, 1), dtype=np.float32), residual=True)
    tiny = np.array([-1e-45, 2.0**-149 * 12345, 1e-38, 0.5, -0.0], dtype=">f4")  # subnormal, normal; big-endian
    half = np.array([6e-8, -3e-5, 1.0], dtype=np.float16)
    saved = ctypes.c_uint32()
    read(ctypes.byref(saved))
    try:
        write(ctypes.byref(ctypes.c_uint32(saved.value | 0x40)))  # denormals-are-zero
        verdict = engine.check(str(path), bound="0").verdict
        widened = [numbers.widened(array, "w") for array in (tiny, half)]
        with pytest.raises(numbers.BadInput, match="denormals-are-zero"):
            numbers.widened(np.array([5e-324]), "w")
    finally:
        write(ctypes.byref(saved))
    assert verdict == engine.VIOLATED
    for array, wide in zip((tiny, half), widened):
        assert [Fraction(x) for x in wide.tolist()] == [Fraction(*x.as_integer_ratio()) for x in array.tolist()]
        assert np.array_equal(np.signbit(wide), np.signbit(array))
