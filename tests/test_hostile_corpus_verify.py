"""`certify verify FOLDER` of a `certify model --corpus` folder edited by a forger who redoes every digest: a record
field of another type, bytes that are no text, a string no UTF-8 file holds, a certificate that is a link, a lock file
that is a pipe.  Each is rejected (exit 1, the folder named as edited) or refused (exit 2, one line), never an internal
error (exit 4) or a hang, and never confirmed.  The folder is test_verify_corpus's (its fixtures and forgeries)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("safetensors", reason="certify.studies.models needs the extra certify[models]")
pytest.importorskip("tokenizers", reason="certify.studies.models needs the extra certify[models]")

from test_verify_corpus import NAME, _rewrite_record, built, folder, keeping, verify  # noqa: F401 (fixtures)

from certify import jobs
from certify.core import jsonfile
from certify.jobs import store as job_store
from certify.errors import BadInput

ROOT = Path(__file__).resolve().parents[1]
EDITED = "chunks/000000001.jsonl line 1 is not a record of sentence 1 of this corpus run"


def _without_certificate(folder: Path) -> None:
    """Sentence 1's layer 0 head 1 keeps no certificate (as a run keeps none for a head whose steps hold): its fields
    are then checked by the record's shape alone under --sample 0."""
    (folder / "certificates" / NAME).unlink()
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(certificate=None,
                                                                                      certificate_sha256=None))


def _head(**fields):
    return lambda record: record["layers"][0]["heads"][1].update(fields)


def _layer(**fields):
    return lambda record: record["layers"][1].update(fields)


@pytest.mark.parametrize("edit", [
    _head(head=1.0), _layer(layer=1.0),  # summed into the summary by index: an internal error (exit 4)
    _head(head=True), _head(bits="64"), _head(bits=64.0), _head(checker=5), _head(certificate_sha256="0" * 64),
    _head(tau=[0.9, 0.1]), _layer(rank="7"), _layer(D="x"), _layer(extra=1),
    lambda record: record.update(extra=1),
    lambda record: record.update(tokens=record["tokens"][:-1]),
    lambda record: record.update(text="a man is eating food\ud800"),  # an internal error: no UTF-8 text holds it
], ids=["head index 1.0", "layer index 1.0", "head index True", "bits a string", "bits 64.0", "checker a number",
        "a digest without certificate", "an enclosure reversed", "rank a string", "D a string", "a layer's extra key",
        "a record's extra key", "a token short", "a lone surrogate in the text"])
def test_a_record_field_of_another_type_is_rejected_whatever_the_sample(folder, capsys, edit):
    _without_certificate(folder)
    assert verify(folder, capsys, "--sample", "0")[0] == 1  # the summary no longer says it, but nothing else differs
    _rewrite_record(folder, 1, edit)
    code, out, err = verify(folder, capsys, "--sample", "0")
    assert code == 1 and out.startswith("REJECTED: corpus run") and EDITED in out and err == "", (out, err)


def test_a_chunk_of_bytes_that_are_no_text_is_rejected_as_edited(folder, capsys):
    """Its digest and the manifest's chain redone: it was refused as unreadable JSON (exit 2), without the folder."""
    path = folder / "chunks" / job_store.chunk_name(1)
    path.write_bytes(b'{"i": 1, "text": "\xff"}\n')
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["chunks"][1]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "chunks/000000001.jsonl is not UTF-8 text (invalid start byte at byte 18)" in out, out


def test_a_manifest_string_no_utf8_text_holds_is_not_a_run_s_parameters(folder, capsys):
    """A corpus named by a lone surrogate (JSON's "\\ud800"), the chain and summary.json redone, in a folder of fewer
    sentences than its count: the summary's text and the note naming the command broke on it (exit 4)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(count=4, corpus="\ud800")
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    summary = json.loads((folder / "summary.json").read_text())
    summary.update(corpus="\ud800", corpus_sentences=4)
    (folder / "summary.json").write_text(jsonfile.dumps(summary))
    code, out, _ = verify(folder, capsys, "--sample", "0")
    assert code == 1 and "manifest.json does not hold a corpus run's parameters" in out, out


def test_a_certificate_that_is_a_link_out_of_the_folder_is_rejected(folder, capsys):
    """Its target the very file, so that every digest matches: a run writes its certificates in the folder."""
    path = folder / "certificates" / NAME
    outside = folder.parent / NAME
    path.rename(outside)
    path.symlink_to(outside)
    code, out, _ = verify(folder, capsys, "--sample", "0")
    assert code == 1 and EDITED in out, out


def _verify_process(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "certify", "verify", str(folder), "--sample", "0", "--workers", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_lock_file_that_is_a_pipe_is_refused_not_waited_on(folder):
    """verify opened the folder's lock file to share it: a pipe there blocked it for ever."""
    (folder / ".lock").unlink()
    os.mkfifo(folder / ".lock")
    done = _verify_process(folder)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines() == [f"certify: error: {folder / '.lock'} is not a regular file (a link, a folder, a "
                                        "pipe or a device), which a folder's lock file is: remove it"], done.stderr


def test_a_run_is_refused_a_lock_file_that_is_a_pipe(tmp_path):
    """A run opens the lock file to write it: on a pipe, it waited for a reader for ever."""
    os.mkfifo(tmp_path / ".lock")
    with pytest.raises(BadInput, match="is not a regular file"):
        jobs.Store.open(tmp_path, {"format": "test/1", "count": 1})


def test_a_text_no_utf8_text_holds_is_rejected_by_the_command(folder):
    """The command as a user runs it, its stdout UTF-8: the text's lone surrogate was an internal error."""
    _rewrite_record(folder, 1, lambda record: record.update(text="\ud800"))
    done = _verify_process(folder)
    assert done.returncode == 1 and EDITED in done.stdout and "Traceback" not in done.stderr, done
