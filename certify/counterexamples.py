"""Named counterexamples, certified: `certify counterexample NAME [options] [--out CERT]`.

REGISTRY maps a name to the module that builds it.  Such a module exposes
    HELP = "one line"
    add_arguments(parser)        its options (besides --out, which the CLI adds)
    build(args) -> Outcome       search the witness, evaluate it in ball arithmetic, and have the
                                 trusted checker confirm the certificate before anything is reported
Add a counterexample by adding one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from flint import ctx

from certify import certificate
from certify.checker import counterexample
from certify.suite import Row

REGISTRY = {
    "wu-fig1": "certify.wu.fig1",
    "ln-equilibria": "certify.wu.equilibria",
    "residual-far": "certify.thesis.residual_far",
    "expansive-v": "certify.thesis.expansive_v",
}

# Precision ladder (bits) of the ball evaluation; a counterexample still undecided at the top stays so.
PRECISIONS = (64, 128, 256, 512)


@dataclass(frozen=True)
class Outcome:
    certificate: dict
    confirmed: bool  # the trusted checker re-derived the certificate
    message: str  # the checker's word
    summary: list[str] = field(default_factory=list)  # lines for the terminal

    @property
    def verdict(self) -> str:
        return self.certificate["verdict"]


def value_lines(found, names, extra=()) -> list[str]:
    """The terminal summary: the verdict, the named enclosures present, extra lines, and every
    check that was not proven."""
    lines = [f"verdict: {found.verdict}"]
    lines += [f"  {name:24s} {found.values[name].str(12, radius=True)}" for name in names if name in found.values]
    return lines + list(extra) + [f"  not proven: {f}" for f in found.failures]


def suite_rows(section: str, folder, out_dir, entries):
    """`certify run` rows for named counterexamples, entries (claim id, name, argparse arguments):
    a certified, checker-confirmed counterexample is the outcome its claim predicts ("holds")."""
    for claim, name, args in entries:
        outcome = load(name).build(args)
        path = certificate.write(outcome.certificate, folder / f"{name}.json")
        settings = ", ".join(f"{k} = {v}" for k, v in vars(args).items() if v is not None and not isinstance(v, bool))
        certified = outcome.confirmed and outcome.verdict == "certified"
        yield Row(section=section, case=f"{claim}: {name} ({settings})", verdict="holds" if certified else outcome.verdict,
                  detail=outcome.message, ok=certified, certificate=str(path.relative_to(out_dir)))


def load(name: str):
    return importlib.import_module(REGISTRY[name])


def certify_by_checker(kind: str, checker, inputs: dict, make_witness, summarize,
                       precisions=PRECISIONS) -> Outcome:
    """Evaluate with checker.evaluate at rising precision until certified, then confirm.

    make_witness(precision) -> witness dict (untrusted search); summarize(found, witness) -> lines.
    The evaluation is the checker's own, so engine and checker cannot drift apart; the
    certificate is then re-read from scratch by checker.verify, as `certify verify` would.
    """
    for precision in precisions:
        witness = make_witness(precision)
        with ctx.workprec(precision):
            found = checker.evaluate(inputs, witness)
        if found.verdict == "certified":
            break
    cert = counterexample.certificate(kind, inputs, witness, found, precision)
    confirmed, message = checker.verify(cert)
    return Outcome(cert, confirmed, message, summarize(found, witness))
