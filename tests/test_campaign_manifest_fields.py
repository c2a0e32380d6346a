"""A campaign manifest with a parameter missing, unknown or of another form (its chain of digests made anew, as a
forger would) is refused in one line naming the key, where it named a Python exception ("TypeError:
Campaign.__init__() missing 1 required positional argument: 'n'")."""

from __future__ import annotations

import json
import shutil

import pytest

from certify import errors
from certify.cli import main
from certify.jobs.store import chain

SAMPLE = ["sample", "--n", "4", "--d", "2", "--count", "4", "--seed", "1", "-q"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("manifest") / "c"
    assert main([*SAMPLE, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("edit, said", [
    (lambda m: m.pop("n"), "n is missing"),
    (lambda m: m.pop("seed"), "seed is missing"),
    (lambda m: m.update(extra=1), "an unknown key 'extra'"),
    (lambda m: m.update(L_range=5), "L_range is not an array of two numbers"),
])
def test_a_manifest_parameter_is_named(campaign, tmp_path, capsys, edit, said):
    folder = tmp_path / "c"
    shutil.copytree(campaign, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    manifest["chain"] = chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["verify", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"manifest.json: not a campaign manifest: {said}" in err, err
    assert "Error" not in err and "__init__" not in err, err


@pytest.mark.parametrize("extra, said", [
    ({f"k{i:04}": 0 for i in range(2000)}, "unknown keys k0000, k0001,"),  # a million made a line of 26 MB
    ({"k\n\x1b" * 100_000: 0}, "an unknown key 'k"),  # 5 million: 45 MB escaped character by character, then cut
], ids=["many", "long"])
def test_unknown_keys_are_listed_short(campaign, tmp_path, capsys, monkeypatch, extra, said):
    """The refusal of a manifest's unknown keys quoted each whole: a million keys made a line of 26 MB (6.5 s, 0.6 GB
    where reading took 0.7 s), and a key of 15 MB was written out escaped (2.7 s) before the line was cut short."""
    written = []
    monkeypatch.setattr(errors, "one_line", lambda message, line=errors.one_line: written.append(len(message)) or
                        line(message))
    folder = tmp_path / "c"
    shutil.copytree(campaign, folder)
    manifest = {**json.loads((folder / "manifest.json").read_text()), **extra}
    manifest["chain"] = chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["verify", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and len(err) < 400 + len(str(folder)), err
    assert max(written) < 1000, max(written)
