"""How a refusal says to raise a limit, in its context: a check's certificate is confirmed under the command's
--limit, so "here and on `certify verify`"; a campaign's limits are its manifest's (`certify verify FOLDER` refuses
--limit, and a resumed run with other limits is another campaign), so a new campaign raises them."""

from __future__ import annotations

import json

import pytest

import certify
from certify.cli import main
from certify.core.limits import Limits
from certify.search import campaign

LAYER = {"X": [["1", "0"], ["0", "1"], ["-1", "1"]], "A": [["1", "0"], ["0", "1"]]}
SAMPLE = ["sample", "--n", "4", "--d", "2", "--count", "2", "--seed", "1"]
ON_VERIFY = "here and on `certify verify`"
NEW_CAMPAIGN = "on a new campaign (another --out, or --restart: a campaign keeps the limits of its manifest"


def test_a_check_says_to_raise_it_here_and_on_verify(tmp_path, capsys):
    path = tmp_path / "layer.json"
    path.write_text(json.dumps(LAYER))
    assert main(["check", str(path), "--limit", "bytes=600", "-q"]) == 3  # its certificate would be too large
    assert f"raise it with --limit bytes=N, {ON_VERIFY}" in capsys.readouterr().out


def test_a_campaign_refused_before_starting_says_a_new_campaign_raises_it(tmp_path, capsys):
    """It said "raise it with --limit bytes=N, here and on `certify verify`": verify refuses --limit for a folder."""
    assert main([*SAMPLE, "--limit", "bytes=300", "--out", str(tmp_path / "c"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"raise it with --limit bytes=N {NEW_CAMPAIGN}" in err and "here and on" not in err, err
    assert err.count("\n") == 1


def test_a_campaigns_records_and_its_audit_say_a_new_campaign_raises_it(tmp_path, capsys):
    out = tmp_path / "c"
    assert main([*SAMPLE, "--limit", "bytes=1500", "--out", str(out), "-q"]) == 3  # every certificate too large
    capsys.readouterr()
    reasons = [r["reason"] for r in campaign.records(out)]
    assert len(reasons) == 2 and all(f"--limit bytes=N {NEW_CAMPAIGN}" in r and ON_VERIFY not in r
                                     for r in reasons), reasons
    assert main(["verify", str(out), "--all"]) == 0, capsys.readouterr()  # re-derived in the same words
    # what the advice says: verify takes no --limit for a campaign, a resumed run no other limits
    assert main(["verify", str(out), "--limit", "bytes=100000"]) == 2
    assert main([*SAMPLE, "--limit", "bytes=100000", "--out", str(out), "-q"]) == 2
    assert "--restart" in capsys.readouterr().err


def test_the_api_says_it_in_its_keywords(tmp_path):
    with pytest.raises(certify.BadInput) as refused:
        certify.sample(n=4, d=2, count=2, seed=1, out=tmp_path / "c", limits=Limits(bytes=300))
    said = str(refused.value)
    assert ("raise it with limits=Limits(bytes=N) on a new campaign (another out=, or restart=True: a campaign "
            "keeps the limits of its manifest") in said, said
