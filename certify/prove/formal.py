"""Formal cross-checks of the scalar lemmas: proofs/formal/*.v compiled by coqc, and
proofs/formal/*.g proved by gappa, whose Coq certificate (`gappa -Bcoq`) is compiled too.

One result per lemma: "checked" or "failed", the seconds its proof took, and the axioms it rests
on (`Print Assumptions`).  Lemmas proved symbolically rest on the classical reals only; those
closed by the `interval` tactic also on Coq's axiomatised primitive integers and floats.  Any
other assumption (an `Admitted` lemma, a stray `Axiom`) makes the lemma fail.

Each .v file is self-contained (it imports only the Coq libraries) and is compiled as a copy in
a scratch folder, so nothing is written next to the sources.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import proofs
from certify.errors import BadInput

FORMAL_DIR = Path(proofs.__file__).resolve().parent / "formal"
APT_PACKAGES = "coq libcoq-interval libcoq-coquelicot libcoq-flocq gappa libcoq-gappa"
TIMEOUT_SECONDS = 900

# The axioms of Coq's classical real numbers (Reals and Coquelicot use all four).
CLASSICAL_REALS = frozenset({
    "ClassicalDedekindReals.sig_forall_dec",
    "ClassicalDedekindReals.sig_not_dec",
    "Classical_Prop.classic",
    "FunctionalExtensionality.functional_extensionality_dep",
})
# Primitive 63-bit integers and binary64 floats, axiomatised by Coq and used by `interval`.
PRIMITIVE_PREFIXES = ("PrimInt63.", "Uint63.", "PrimFloat.", "FloatAxioms.")
NO_AXIOMS = "none"
ONLY_REALS = "classical reals"
REALS_AND_PRIMITIVES = "classical reals + primitive ints/floats"
UNEXPECTED = "unexpected axioms"

_DECLARATION = re.compile(rb"(?m)^[ \t]*(?:Lemma|Theorem|Corollary|Proposition|Fact|Remark)\s+([A-Za-z_][\w']*)")
_PROOF_END = re.compile(rb"\b(?:Qed|Defined|Admitted|Abort)\s*\.")
_TIMING = re.compile(r"^Chars (\d+) - (\d+) .*? ([\d.]+) secs", re.M)
_ERROR_AT = re.compile(r'File "[^"]*", line (\d+), characters (\d+)-(\d+):')
_IMPORTED = re.compile(r"(?m)^\s*From\s+(\w+)\s+Require")


@dataclass
class LemmaResult:
    """The outcome of one formal lemma: its file and name, "checked" or "failed", the seconds its proof took,
    the assumptions class and axioms it rests on (`Print Assumptions`), and the first error line when it
    failed."""
    file: str
    name: str
    outcome: str  # "checked" | "failed"
    seconds: float = 0.0
    assumptions: str = ""  # NO_AXIOMS, ONLY_REALS or REALS_AND_PRIMITIVES when checked
    axioms: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def label(self) -> str:
        """"FILE:LEMMA", the lemma's name in reports."""
        return f"{self.file}:{self.name}"

    def as_dict(self) -> dict:
        """The result as a JSON-ready dict (seconds rounded to ms)."""
        return {"file": self.file, "lemma": self.name, "outcome": self.outcome,
                "seconds": round(self.seconds, 3), "assumptions": self.assumptions,
                "axioms": self.axioms, "message": self.message}


# ---------------------------------------------------------------- reading the sources

def _blank_comments(source: bytes) -> bytes:
    """The source with every (nested) Coq comment replaced by spaces, newlines and offsets kept."""
    out, depth, i = bytearray(source), 0, 0
    while i < len(source):
        pair = source[i:i + 2]
        if pair == b"(*":
            depth += 1
        if depth:
            out[i] = out[i] if source[i] == 10 else 32
            if pair == b"*)":
                out[i + 1] = 32
                depth -= 1
                i += 2
                continue
            if pair == b"(*":
                out[i + 1] = 32
                i += 2
                continue
        i += 1
    return bytes(out)


def _lemma_spans(source: bytes) -> list[tuple[str, int, int]]:
    """(name, start, end) of each lemma: from its keyword to just after its Qed (byte offsets)."""
    code = _blank_comments(source)
    spans = []
    for match in _DECLARATION.finditer(code):
        end = _PROOF_END.search(code, match.end())
        spans.append((match.group(1).decode(), match.start(), end.end() if end else len(code)))
    return spans


def lemma_names(path: Path) -> list[str]:
    """Names of the lemmas (Lemma, Theorem, Corollary, ...) a .v file declares."""
    return [name for name, _, _ in _lemma_spans(Path(path).read_bytes())]


def known_labels(folder: Path = FORMAL_DIR) -> set[str]:
    """What a step's `formal` label may name: "file.v:lemma" for each lemma of a Coq file, and
    "file.g:file" for a Gappa script (one proved property, named by the file's stem)."""
    folder = Path(folder)
    coq = {f"{path.name}:{name}" for path in folder.glob("*.v") for name in lemma_names(path)}
    return coq | {f"{path.name}:{path.stem}" for path in folder.glob("*.g")}


# ---------------------------------------------------------------- assumptions

def _axioms(printed: str) -> list[str]:
    """Axiom names from the output of `Print Assumptions` (empty when closed): each entry starts a line with its
    name, its statement after " : " on that line or, when long, on the indented lines below (such an axiom was
    not read at all); the lines ending with ":" are the headers ("Axioms:")."""
    if "Closed under the global context" in printed:
        return []
    return sorted({line.split(" : ")[0].strip() for line in printed.splitlines()
                   if line[:1].strip() and not line.rstrip().endswith(":")})


def classify(axioms: list[str]) -> tuple[str, list[str]]:
    """(category, unexpected axioms): none, the classical reals, those and primitive ints/floats, or unexpected
    axioms (an Admitted lemma rests on itself alone: it was said to rest on the classical reals)."""
    unexpected = [a for a in axioms if a not in CLASSICAL_REALS and not a.startswith(PRIMITIVE_PREFIXES)]
    if unexpected:
        return UNEXPECTED, unexpected
    if any(a.startswith(PRIMITIVE_PREFIXES) for a in axioms):
        return REALS_AND_PRIMITIVES, unexpected
    return (ONLY_REALS if axioms else NO_AXIOMS), unexpected


def _judge(result: LemmaResult, printed: str | None) -> LemmaResult:
    """Mark a compiled lemma checked, or failed when its assumptions are missing or unexpected."""
    if printed is None:
        result.outcome, result.message = "failed", "Print Assumptions gave no output"
        return result
    result.axioms = _axioms(printed)
    result.assumptions, unexpected = classify(result.axioms)
    if unexpected:
        result.outcome, result.message = "failed", f"rests on unexpected assumption(s): {', '.join(unexpected)}"
    else:
        result.outcome = "checked"
    return result


# ---------------------------------------------------------------- running the tools

def require_tools(files: list[Path]) -> dict[str, str]:
    """Paths of coqc (and gappa, for .g files), after checking that the Coq libraries the files
    import are installed; BadInput naming the packages when something is missing."""
    need_gappa = any(p.suffix == ".g" for p in files)
    tools = {"coqc": shutil.which("coqc")}
    if need_gappa:
        tools["gappa"] = shutil.which("gappa")
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise BadInput(f"{' and '.join(missing)} not found on PATH; install: apt-get install -y {APT_PACKAGES}")
    libraries = {lib for p in files if p.suffix == ".v" for lib in _IMPORTED.findall(_source_text(p))}
    libraries = (libraries | ({"Gappa"} if need_gappa else set())) - {"Coq", "Ltac2"}
    roots = _coq_library_roots(tools["coqc"]) if libraries else []
    absent = sorted(lib for lib in libraries if not any((root / lib).is_dir() for root in roots))
    if absent:
        raise BadInput(f"Coq librar{'ies' if len(absent) > 1 else 'y'} {', '.join(absent)} not installed; "
                       f"install: apt-get install -y {APT_PACKAGES}")
    return tools


def _source_text(path: Path) -> str:
    """A .v file's text; BadInput when it is not UTF-8, which coqc reads (the error read "not valid JSON")."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path} is not UTF-8 text, which coqc reads") from None


def _coq_library_roots(coqc: str) -> list[Path]:
    """Where `From Library Require ...` looks: user-contrib of `coqc -where`, and COQPATH."""
    where = subprocess.run([coqc, "-where"], capture_output=True, text=True).stdout.strip()
    return [Path(where) / "user-contrib"] + [Path(p) for p in os.environ.get("COQPATH", "").split(os.pathsep) if p]


class _Tools:
    """The coqc and gappa processes running, which `stop` kills: an interrupted check (Ctrl-C, SIGTERM) raises in
    the main thread only, and the pool's threads, which it waits for, wait for their tools, up to
    TIMEOUT_SECONDS each (a SIGTERM to the command alone left coqc running and the command waiting for it)."""

    def __init__(self):
        self._lock, self._running, self._stopped = threading.Lock(), set(), False

    def run(self, command: list[str], cwd: Path) -> subprocess.CompletedProcess:
        with self._lock:
            if self._stopped:  # no tool starts after an interruption (a compile's probe, a certificate's check)
                return subprocess.CompletedProcess(command, 130, "", "interrupted")
            process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self._running.add(process)
        try:
            out, err = process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            out, err = "", f"timed out after {TIMEOUT_SECONDS} s"
            process.returncode = 124
        finally:
            with self._lock:
                self._running.discard(process)
        return subprocess.CompletedProcess(command, process.returncode, out, err)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for process in self._running:
                process.kill()


_TOOLS = [_Tools()]  # those of the check under way (check_all starts each with its own)


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return _TOOLS[0].run(command, cwd)


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Error")), None)
    if start is None:
        return lines[-1] if lines else "failed"
    return " ".join(lines[start:start + 3])[:300]


def _compile_coq(source: bytes, file_label: str, spans: list[tuple[str, int, int]], coqc: str,
                 workdir: Path) -> list[LemmaResult]:
    """Compile `source` as the library Formal, then print the assumptions of each lemma it reached; one result per
    span."""
    (workdir / "Formal.v").write_bytes(source)
    run = _run([coqc, "-q", "-time", "Formal.v"], workdir)

    times = [(int(m.group(1)), float(m.group(3))) for m in _TIMING.finditer(run.stdout)]
    error_offset = _error_offset(run, source)
    reached = [(name, end) for name, _, end in spans if error_offset is None or error_offset >= end]
    if run.returncode != 0 and reached:  # the lemmas before the error are judged from the part that compiles
        (workdir / "Formal.v").write_bytes(source[:reached[-1][1]])
        _run([coqc, "-q", "Formal.v"], workdir)
    printed = _assumptions([name for name, _ in reached], coqc, workdir)
    results = []
    for name, start, end in spans:
        result = LemmaResult(file_label, name, "failed",
                             seconds=sum(t for at, t in times if start <= at < end))
        if error_offset is not None and error_offset < end:
            result.message = (_first_error(run.stderr) if error_offset >= start or error_offset < 0
                              else "not reached: coqc stopped at an earlier error")
            results.append(result)
            continue
        results.append(_judge(result, printed.get(name)))
    if run.returncode != 0 and all(r.outcome == "checked" for r in results):
        # The error lies after the last lemma: the file as a whole does not compile.
        results.append(LemmaResult(file_label, "(file)", "failed", message=_first_error(run.stderr)))
    return results


def _assumptions(names: list[str], coqc: str, workdir: Path) -> dict[str, str]:
    """`Print Assumptions` of each lemma of the compiled library Formal, by name, from a file that requires it
    without importing it: there every name Formal declares is printed with its library, Formal.x, never as
    one of the classical reals or primitives (inside the file, an axiom in its own `Module PrimFloat` was
    printed PrimFloat.cheat and taken for Coq's)."""
    probes = "".join(f'Redirect "axioms_{name}" Print Assumptions Formal.{name}.\n' for name in names)
    (workdir / "Assumptions.v").write_text("Require Formal.\n" + probes)
    _run([coqc, "-q", "-R", ".", "", "Assumptions.v"], workdir)
    return {name: out.read_text() for name in names if (out := workdir / f"axioms_{name}.out").exists()}


def _error_offset(run: subprocess.CompletedProcess, text: bytes) -> int | None:
    """Byte offset in `text` of the error coqc stopped at; None when it succeeded, -1 when the
    error has no location (a timeout, a crash)."""
    if run.returncode == 0:
        return None
    # The location printed just before "Error" (warnings carry locations too).
    error_at = run.stderr.find("Error")
    where = None
    for match in _ERROR_AT.finditer(run.stderr[:error_at] if error_at >= 0 else run.stderr):
        where = match
    if where is None:
        return -1
    line_starts = [0] + [i + 1 for i, b in enumerate(text) if b == 10]
    line = int(where.group(1))
    return line_starts[min(line, len(line_starts)) - 1] + int(where.group(2))


def check_coq_file(path: Path, coqc: str) -> list[LemmaResult]:
    """Compile one .v file with `coqc` (a copy, in a scratch folder) and return one LemmaResult per lemma it
    declares (a single failed "(file)" result when it declares none)."""
    source = Path(path).read_bytes()
    spans = _lemma_spans(source)
    if not spans:
        return [LemmaResult(path.name, "(file)", "failed", message="declares no lemma")]
    with tempfile.TemporaryDirectory(prefix="formal-") as tmp:
        return _compile_coq(source, path.name, spans, coqc, Path(tmp))


def check_gappa_file(path: Path, gappa: str, coqc: str) -> list[LemmaResult]:
    """gappa proves the script; its Coq certificate's final lemma is then compiled by coqc."""
    result = LemmaResult(path.name, path.stem, "failed")
    with tempfile.TemporaryDirectory(prefix="formal-") as tmp:
        workdir = Path(tmp)
        started = time.perf_counter()
        proved = _run([gappa, str(Path(path).resolve())], workdir)
        if proved.returncode != 0:
            result.seconds = time.perf_counter() - started
            result.message = f"gappa: {_first_error(proved.stderr)}"
            return [result]
        certificate = _run([gappa, "-Bcoq", str(Path(path).resolve())], workdir)
        source = certificate.stdout.encode()
        spans = _lemma_spans(source)
        if certificate.returncode != 0 or not spans:
            result.seconds = time.perf_counter() - started
            result.message = f"gappa -Bcoq: {_first_error(certificate.stderr)}"
            return [result]
        # The certificate's main lemma is its last one; it is probed after `End` of its section.
        final = spans[-1][0]
        checked = _compile_coq(source, path.name, [(final, 0, len(source))], coqc, workdir)[0]
        checked.name, checked.seconds = path.stem, time.perf_counter() - started
        if checked.outcome == "failed" and not checked.message.startswith("rests on"):
            checked.message = f"certificate: {checked.message}"
        return [checked]


def sources(folder: Path = FORMAL_DIR, names: list[str] | None = None) -> list[Path]:
    """The .v and .g files of the folder (all, or those listed by stem, file name or path: a shell's completion
    gives proofs/formal/collapse.v, which was refused as an unknown name)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"no folder of formal proofs at {folder}")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".v", ".g"))
    if names:
        unknown = [n for n in names if not any(_names(n, p) for p in files)]
        if unknown and _is_path(unknown[0]):
            raise BadInput(f"{unknown[0]} is not a .v or .g file of {folder}: name one of its files (collapse, "
                           "collapse.v or its path), or give the folder of yours with --formal-dir")
        if unknown:
            raise BadInput(f"no formal proof file {unknown[0]!r}; known: {', '.join(p.name for p in files)}")
        files = [p for p in files if any(_names(n, p) for n in names)]
    if not files:
        raise BadInput(f"no .v or .g file in {folder}")
    return files


def _is_path(name: str) -> bool:
    return "/" in name or os.sep in name


def _names(name: str, path: Path) -> bool:
    """Whether `name` given on the command line is the file `path`: its stem, its file name, or a path to it."""
    # os.path.realpath, not Path.resolve(), which raises on a link in a loop (a name of no file)
    return name in (path.stem, path.name) or _is_path(name) and os.path.realpath(name) == os.path.realpath(path)


def check_all(folder: Path = FORMAL_DIR, names: list[str] | None = None,
              progress: Callable[[Path], None] | None = None) -> list[LemmaResult]:
    """Check every selected file, one coqc or gappa process per core, results in file order;
    BadInput (before anything runs) when a tool is missing.  `progress(path)` is called as each
    file is done."""
    files = sources(folder, names)
    tools = require_tools(files)

    def check(path: Path) -> list[LemmaResult]:
        if path.suffix == ".v":
            found = check_coq_file(path, tools["coqc"])
        else:
            found = check_gappa_file(path, tools["gappa"], tools["coqc"])
        if progress is not None:
            progress(path)
        return found

    _TOOLS[0] = _Tools()
    with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 1)) as pool:
        try:
            return [result for per_file in pool.map(check, files) for result in per_file]
        except BaseException:  # interrupted: the pool's threads end once their tools are stopped
            _TOOLS[0].stop()
            raise
