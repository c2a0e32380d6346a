"""The options of a campaign's audit (`certify verify CAMPAIGN --all --sample K --workers W`, certify.verify), in a
module of their own: the command reads a certificate file without loading the audit and the engine."""

from __future__ import annotations

from certify.core.arguments import Spelling, integer
from certify.errors import BadInput

SAMPLE = 64  # records re-derived at random beyond the violated, undecided and certified ones
# where changed limits apply: not to a campaign, whose limits are its manifest's
LIMITS_APPLY = ("a certificate file: a campaign is re-derived under the limits its manifest keeps (those of "
                "`certify sample --limit`)")


def campaign_options(everything, sample, workers, names: Spelling) -> list[str]:
    """The options of a campaign's audit given (--all, --sample, --workers), as `names` spells them: with a
    certificate they did nothing, and the user believed it re-derived in full."""
    return [names(name) for name, value in (("everything", everything), ("sample", sample is not None),
                                            ("workers", workers is not None)) if value]


def sample_size(sample: int | None, names: Spelling, default: int = SAMPLE) -> int:
    """The holds (or a corpus run's sentences) re-derived at random (--sample, as `names` spells it): `default`
    when None, else a non-negative integer or BadInput."""
    if sample is None:
        return default
    option = names.option("sample")
    sample = integer(sample, option)
    if sample < 0:
        raise BadInput(f"{option} must be at least 0, got {sample}")
    return sample
