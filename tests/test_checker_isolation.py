"""The trust boundary: the checker imports only the standard library, python-flint and itself."""

from __future__ import annotations

import argparse
import ast
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import certify_checker

CHECKER_DIR = Path(certify_checker.__file__).parent
ALLOWED_THIRD_PARTY = {"flint"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path.name}: relative imports hide what is imported")
            names.add(node.module)
    return names


def test_checker_modules_import_only_stdlib_flint_and_the_checker():
    files = sorted(CHECKER_DIR.glob("*.py"))
    assert len(files) >= 3
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            allowed = (top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY
                       or module == "certify_checker" or module.startswith("certify_checker."))
            assert allowed, f"{path.name} imports {module}"


def test_the_rule_catches_a_forbidden_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import numpy\nfrom certify import engine\n")
    found = imported_modules(planted)
    assert "numpy" in found and "certify" in found


def test_checker_kinds_point_inside_the_checker():
    assert all(module.startswith("certify_checker.") for module in certify_checker.KINDS.values())


def test_checker_stays_small():
    """A kernel a reader can audit in one sitting (exact numbers, JSON reader and limits, schema,
    bound grammar, forward pass, norms, the shared frames) and one small module per certificate kind."""
    kind_files = {module.split(".")[1] + ".py" for module in certify_checker.KINDS.values()}
    sizes = {path.name: len(path.read_text().splitlines()) for path in CHECKER_DIR.glob("*.py")}
    kernel = sum(lines for name, lines in sizes.items() if name not in kind_files)
    # 1460 until limits.limbs: one definition for the seven copies of its expression; 1463 until numbers were
    # read in certify's grammar only (no underscores); 1466 until a counterexample certificate of an earlier version
    # was named as such, not called malformed; 1468 until a counterexample certificate's witness had to be a table;
    # 1470 until a stack of thin heads was priced by the route its witnesses take (limits.norm_work, _thin); 1485
    # until a stated radius far looser than the checker's own was refused (exact.loose); 1500 until the work estimate
    # priced arb_mat products apart from the Python around them, the precision by cost() and the recomputations at 2
    # and 4 times it (limits.layer_work, cost, passes); 1530 until SIGTERM and SIGHUP stopped `python -m
    # certify_checker` in one line; 1545 until a wide matrix's norm was read from a witness of its transpose
    # (forward.spectral_norm) and a repeated thin head priced through the witness it names (_thin); 1555 until a
    # named result's verdict or enclosure that disagrees at the stated precision was judged again on one finer
    # evaluation, priced (counterexample.confirm, retried, step_limbs; exact.finer moved into the kernel from
    # inequality), and a stated non-finite enclosure agreed with a recomputed one that is not finite either
    # (exact.agrees); 1620 until `python -m certify_checker` read --limit and --help instead of taking them for files
    # (and refused a pipe, which it waited on), and JSON deeper than the reader goes was named so; 1675 until a named
    # result's finer run was priced by cost() and over_limits took a planned trajectory's price of its steps (priced);
    # 1685 until a witness's basis was read as a binary64 block too, a malformed block named so (schema.expanded);
    # 1700 until a trajectory's step was priced apart from a layer, its Python at any precision and its arithmetic by
    # cost(), for the sizes over_limits reads (limits.step_parts, sizes); 1735 until a trajectory read its layers'
    # numbers once, not at every step (schema.exact); 1750 until a region proof's counterexample was refused and
    # confirmed under the limits the checker is given (over_limits, verify), and `python -m certify_checker` named
    # itself in a refusal's advice (limits.ADVICE); 1760 until a layer was priced as a step, its Python at any
    # precision and its arithmetic by cost() (limits.layer_parts, layer_cost); 1775 until LayerNorm's work and a window
    # claim's windows were priced (limits.layer_parts' layernorm, window_parts), the windows' graph searched on bits
    # (windowed.graph, n^3 steps in Python before) and Q's row sums taken once (windowed.Window); 1780 until the caps
    # on sizes were asked before a kind's work reads a certificate's parts (limits.shape_problem: a window claim's mask
    # of 2500 tokens took 3 s to price before the token limit refused it); 1790 until a folder given to
    # `python -m certify_checker` was named as one (__main__), a proof with a box open never read 100% (region_proof),
    # every layer was priced on tokens at the full precision and P's Python with the diameters' pairs
    # (limits.FULL_TOKENS, PAIRS), a layer's own window quantities were computed once for the windows holding it
    # (windowed.Window._each) and a hex mantissa capped (exact.MAX_HEX_BITS); 1810 until a thin head's reduction was
    # priced uncapped, with its Cholesky's Python (limits.norm_work, layer_parts), and numbers stated as text were
    # priced by their length and exponent, a binary64's hex text as an entry (schema.reading, exact.binary64); 1845
    # until that pricing walked the inputs with a stack, passing over rows of plain numbers in one step (schema.reading:
    # element by element it cost a check of 8 x 4 tokens some 40 us, the engine's estimate as much again); 1860 until
    # ln.collapse's full rank was shown modulo primes and its cosines' signs in balls, exactly only where a ball holds
    # 0 (windowed.full_rank, nonnegative_cosines, _dot: FLINT's exact rank and Gram matrix took 43 s at 24 x 24 tokens
    # of 4000-digit fractions, and an exact zero on rows cleared of distinct denominators 9 s at d = 256), and loose
    # asked the accuracy first and the limits' estimate was remembered (exact.loose, limits.problem); 1895 until
    # every kind priced its texts (counterexample.text_price, limits.text_work: certificates of an attention head,
    # centred tokens, residual-far, expansive-v, wu-fig1 and ln-equilibria of 4000-digit p/q ran 100 to 1000 times
    # their estimates); 1915 until residual-far and expansive-v proved their checks false too (counterexample.Evaluation:
    # a refuted verdict, confirmed as a certified one is); 1925 until a trajectory drew value.expansive's cubic curve
    # (trajectory.cubic, written once for both cubic curves; norms.power_norms); 1935 until the Dobrushin coefficient
    # summed only the pairs a binary64 screen keeps (overlaps: at 110 tokens every pair's balls were 0.25 s a head);
    # 1995 until a head's work estimate read the shapes of binary64 blocks (limits.stated_shape); 2000 until the
    # centred Dobrushin coefficient was screened too, on balls scaled by a power of two (overlaps.difference_pairs: at
    # 128 tokens every pair's balls were 0.3 s of a trajectory's step); 2065 until a certificate given as a dict was
    # walked as a JSON tree before any work (__init__.tree_problem: one that held itself looped the pricing walk); 2085
    # until one past a size or nesting limit was refused as its text is, and a text past a limit refused (OverLimit);
    # 2095 until a region proof's bound had its slope over (0, L_hi] enclosed in interval arithmetic whose ends may be
    # infinite, so that a root of L closes the box at L = 0 (region_bounds.Dual); 2165 until the inputs' name and
    # description had to be texts (schema.problem); 2170 until a JSON number was read as its nearest binary64 whatever
    # rounding mode a library set in the process (exact.nearest_binary64); 2190 until a subnormal number was refused
    # where denormals-are-zero reads it wrongly (exact.subnormal_unread); 2215 until that reading took a number's text
    # to 800 digits and its exponent to 10^15 (exact._SIGNIFICANT: 10^18 was an internal error, 300,000 digits 5 s);
    # 2225 until `python -m certify_checker` named a file with its newlines and terminal escapes escaped (__main__.printed);
    # 2235 until a warning of Python's tokenizer on a bound ("1if") was raised as the syntax error it is (bound.syntax);
    # 2520 until the centred form moved out of the trajectory kind into a module of its own, which inequality
    # certificates stating it share (centred: 127 lines moved, 12 new), the formulas' compiler out of the inequality
    # kind (formula: 118 lines moved, 17 new for 1 - exp(u) as -expm1(u)), and a layer in centred form was priced
    # (limits.centred_cost); 2530 until a formula could be evaluated with 1 - exp(u) subtracted as written, which
    # certificates written before state (formula.evaluate's expm1), and expm1's 2^-prec was made once a precision; 2550
    # until a text's arrays, objects and keys were counted before it was read (load, limits.CONTAINER_BYTES: 64 MiB of
    # `[{},{},...]` took 3.5 GB and 24 s to be refused); 2575 until a counterexample's configuration name, which states
    # its parameters (residual-far-q1_10), was rebuilt from the inputs checked (counterexample.confirm), and a description
    # no check reads refused (schema.problem); 2715 until a malformed certificate's message named the field and what is
    # wrong with it, not a Python exception ("KeyError: 'x'"; fields); 2795 until the Dobrushin screens summed every pair
    # in exact integers, a column of 64-bit lanes an operation (distances, 54 lines, and overlaps' integers: with a
    # math.fsum of per-entry calls for each pair the checker's tau took 1.3 to 4 times as long at 64 and 128 tokens);
    # 2805 until naming a malformed certificate's field stopped past fields.WALKED parts (64 MiB: 50 s and 3 GB);
    # 2810 until a number too long to write in decimal was named as such (fields) and the command line was read once;
    # 2830 until a configuration's name stating its sizes (gaussian-n8-d4) was held to its tokens (schema);
    # 2850 until over_limits was a function of the limits that reads a kind's work once (estimate: the engine's advice
    # on which limit to raise read a region proof's leaves once a limit, ten times at a stop of the prover's search);
    # 2880 until a row of texts was priced in C (schema._texts_reading: 64 MiB of "xy" took 13 s to price, 1 s to read);
    # 2890 until a path the system refused was cut short in its line (__main__.refused: 100 kB made a line of 100 kB);
    # 2900 until naming a malformed field wrote out no integer longer than its message's quotes (fields._text);
    # 2910 until a bound's literal was rendered from the powers of 2, 5 and 10 dividing it (bound._times_divisible: a
    # step a power of ten took 5 s for a bound of literals 9e-3999); 2920 until sqrt and a positive power of numbers
    # alone that cancel exactly (1/3 - 1/3) were its exact 0 (formula._compile reads numbers alone as one exact
    # number; in balls that root was not finite, undecided)
    assert kernel < 2920, kernel
    for name in kind_files:
        # 450 until the trajectory kind stated a precision per step and read its balls' ends exactly; 470 until
        # its work estimate priced each step at that precision; 490 until a stated ball missing the checker's own only by
        # rounding was recomputed finer (exact.finer), as an inequality's always was; 540 until its witnesses
        # and curves had to be exactly the fields it reads; 555 until each step was priced by cost() at its precision
        # and at twice it (step_price), the unit a run's meter charges; 575 until a layer's numbers stated as text
        # were priced at every step by their length (trajectory._digits); 590 until value.expansive's cubic curve
        # was drawn for X' = P X V^T near consensus (trajectory.cubic); 620 until a region proof's work was priced
        # a part at a time (region_proof.prices: the prover's meter walked the whole proof 78 times near a limit) and
        # a resumed proof's earlier leaves were tested once (region_proof.verify's closed)
        assert sizes[name] < 620, (name, sizes[name])


def test_verifying_every_kind_in_a_fresh_interpreter_loads_no_engine_numpy_or_scipy(tmp_path):
    """The static rule above cannot see imports made at run time (a package __init__, a lazy
    import): run the checker alone on a certificate of every kind and list what was loaded."""
    import numpy as np
    import test_heads

    from certify import engine
    from certify.engine import certificate
    from certify.studies import counterexamples, trajectory
    from certify.suite import cases
    from certify.suite.thesis_dynamics import ROTATION_V

    certs = [engine.check(cases.gaussian(n=4, d=2, seed=3)).certificate,
             trajectory.trace(ROTATION_V, 3).certificate]
    for name, module in counterexamples.REGISTRY.items():
        parser = argparse.ArgumentParser()
        counterexamples.load(name).add_arguments(parser)
        certs.append(counterexamples.load(name).build(parser.parse_args([])).certificate)
    certs.append(test_heads.confirmed_steps(test_heads.sample_head()).certificate)  # the heads of model and init
    certs.append(test_heads.rank_certificate(np.eye(3), 2))  # the model's centred rank
    from certify.prove import profiles, reductions, region
    certs.append(region.prove(reductions.region(3, 1, 1, 1), profiles.claim_profile("collapse.global")).certificate)
    certs.append(region.prove(reductions.region(2, 2, 2, 4), profiles.bound_profile("D*(1-exp(-0.45*a*D**2))", 2, 2)).certificate)
    assert {cert["kind"] for cert in certs} == set(certify_checker.KINDS)
    paths = [str(certificate.write(cert, tmp_path / f"{i}.json")) for i, cert in enumerate(certs)]
    probe = ("import runpy, sys\n"
             "sys.argv = ['certify_checker', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('certify_checker', run_name='__main__')\n"
             "except SystemExit as done:\n    code = done.code\n"
             "print('LOADED', ' '.join(sorted(sys.modules)))\n"
             "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", probe, *paths], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("OK: ") == len(paths)
    loaded = done.stdout.split("LOADED ")[1].split()
    forbidden = [m for m in loaded if m.split(".")[0] in {"certify", "numpy", "scipy", "sympy", "mpmath", "matplotlib"}]
    assert not forbidden, forbidden
    assert json.loads((tmp_path / "0.json").read_text())["kind"] == "inequality"


def test_the_limbs_of_a_precision_are_counted_once():
    """Every work estimate weights an operation by the limbs of its precision: one function
    (certify_checker.limits.limbs), so that the estimates cannot drift apart."""
    from certify_checker.limits import limbs
    assert [limbs(b) for b in (-5, 0, 53, 63, 64, 4096)] == [1, 1, 1, 1, 2, 65]
    assert limbs(1 << 40) == limbs(1 << 20) == 1 + (1 << 14)  # a stated precision is clamped before it is judged
    assert limbs(1 << 20, 1 << 14) == 1 + (1 << 8)
    for path in CHECKER_DIR.glob("*.py"):
        if path.name != "limits.py":
            assert "// 64" not in path.read_text(), path.name


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["ctrl-c", "sigterm", "sighup"])
def test_a_signal_stops_the_checker_in_one_line_with_the_shells_status(tmp_path, signum):
    """SIGTERM (a batch system's stop, `timeout`) and SIGHUP killed `python -m certify_checker` silently: they end
    it as Ctrl-C does, one line naming the signal and 128 + its number, never a verdict's code.  The checker sends
    itself the signal as it starts verifying, a point that does not depend on the machine's load."""
    from certify import engine
    from certify.engine import certificate
    from certify.suite import cases

    path = certificate.write(engine.check(cases.gaussian(n=4, d=2, seed=3)).certificate, tmp_path / "c.json")
    probe = ("import os, runpy, sys\n"
             "import certify_checker\n"
             "real, signum = certify_checker.verify, int(sys.argv[1])\n"
             "def signalled(*args, **kwargs):\n"
             "    os.kill(os.getpid(), signum)  # taken by the handler before the verification runs\n"
             "    return real(*args, **kwargs)\n"
             "certify_checker.verify = signalled\n"
             "sys.argv = ['certify_checker', *sys.argv[2:]]\n"
             "runpy.run_module('certify_checker', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", probe, str(int(signum)), str(path)], capture_output=True, text=True,
                          timeout=120)
    named = "" if signum == signal.SIGINT else f" ({signal.Signals(signum).name})"
    assert (done.returncode, done.stdout, done.stderr) == (128 + signum, "", f"certify_checker: interrupted{named}\n")
