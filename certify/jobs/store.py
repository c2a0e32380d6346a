"""A resumable job's folder: its parameters, the chunks committed so far, and their artefacts.

A job applies a task to chunks of the indices 0..count-1 of one set of parameters (a JSON object
with at least "format" and "count"); for each chunk the task returns one record (a JSON object
whose "i" is its index) per index, and named artefact texts (certificates, ...).  The folder:
    manifest.json         the parameters, and the chunks committed so far in order, each with its
                          first index, its number of records and the sha256 of its file, chained:
                          "chain" is sha256 over the parameters and every chunk's entry in turn, so
                          an edit, a deletion or a reordering shows
    chunks/<first>.jsonl  one JSON line per record, written after its manifest entry and never
                          changed or overwritten
    <outputs>             what the job names as its outputs: the folders of its artefacts, and its
                          other files (a summary, figures, a page)
    .lock                 locked (flock) by the one run that writes the folder, and shared by readers
                          (`certify verify`): a second run started on the folder, or a reader while a
                          run writes, is refused with one line instead of interleaving their manifests;
                          the system releases the lock when its process ends, even killed

The client alone commits, one chunk at a time: its artefacts (each write-then-rename), then its
manifest entry, then its file (write-then-rename).  A chunk listed last whose file is missing is
the one a killed run was writing: it is not decided, and a resumed run drops its entry.  So the
decided indices are exactly those of the committed chunks' records, and a task may run any number
of times (a lost worker, a killed client) with its result committed once.  A restart removes the chunk
files from the last backwards, then the rest, the manifest last: killed meanwhile, it leaves the chunks
listed last without their files, which a run drops as it drops one, and the job resumes from the others.

The folder holds nothing else: an entry at its top that is none of these, or a file in chunks/ the
manifest does not list, makes it refused when its records are read (Store.records), as the job refuses
one in an output folder that no record names (Store.refuse_unnamed): a file put there would be browsed
as the job's.  Only a killed run's hidden temporary files pass (files.temporary), and a run removes them.
Other hidden entries (files.hidden: .DS_Store, which macOS Finder leaves in every folder it shows) are
passed over wherever they are, neither refused nor removed: the job names none of its files so (its
artefacts are refused such a name, Store._artefact_path), reads none it does not name, and its pages show
none.  A folder without manifest.json that holds nothing but what a run killed before its first manifest
leaves (the lock file, temporary files, empty folders of the job: first_run_leftovers) and hidden entries is
a new folder: no run committed anything there, and a run starts the job in it, removing those leftovers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from certify import signals
from certify.core import files, jsonfile
from certify.core.arguments import Spelling
from certify.core.limits import DEFAULT
from certify.errors import BadInput

try:
    import fcntl
except ImportError:  # not POSIX: the folder is not locked, one run at a time is the user's to keep
    fcntl = None

MANIFEST = "manifest.json"
CHUNKS = "chunks"
LOCK = ".lock"
TOP = "."  # the folder itself, as an output folder of Store.refuse_unnamed


def passed_over(name: str) -> bool:
    """Whether a folder's entry is passed over by its checks: hidden (files.hidden, .DS_Store), no run's temporary."""
    return files.hidden(name) and not files.temporary(name)


def _never(name: str) -> bool:
    """A `pending` of Store.refuse_unnamed for a folder where no killed run leaves an artefact of its own."""
    return False


@dataclass(frozen=True)
class ChunkResult:
    """What a task returns for a chunk: one record per index in order, artefact texts by their path in the
    folder (e.g. "certificates/violated-000000007.json"), and notes on how it was decided where the task ran,
    for this run's summary (not kept in the folder)."""
    records: list[dict]
    artefacts: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def chunk_name(first: int) -> str:
    """The file name of the chunk starting at index `first`: nine digits, then .jsonl."""
    return f"{first:09d}.jsonl"


def locked(folder: Path, *, shared: bool, busy: str):
    """The open lock file of `folder`, flock-ed exclusive (a run that writes: the file is made if need be)
    or shared (a reader, which writes nothing), or BadInput(busy) when another process holds it the
    other way; None when there is nothing to lock (a reader of a folder without a lock file).  Closing
    the file releases it."""
    if fcntl is None:
        return None
    path = folder / LOCK
    if path.is_symlink() or path.exists() and not path.is_file():  # a pipe's open waits for a writer, for ever
        raise BadInput(f"{path} is not a regular file (a link, a folder, a pipe or a device), which a folder's lock "
                       "file is: remove it")
    try:
        handle = open(path, "r" if shared else "a")
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(handle, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise BadInput(busy) from None
    except OSError:  # a file system without locks (some network mounts): run unlocked, as before locks
        handle.close()
        return None
    return handle


@contextmanager
def reading(folder, *, noun: str = "job"):
    """Hold the folder's lock shared while reading it: a run that writes it meanwhile (its manifest and
    chunk files change between two reads) makes the reader refused, BadInput, instead of misread."""
    folder = Path(folder)
    handle = locked(folder, shared=True, busy=f"{folder} is being written by a running {noun}; "
                    "try again once that run has stopped") if folder.is_dir() else None
    try:
        yield
    finally:
        if handle is not None:
            handle.close()


def parameters(manifest: dict) -> dict:
    """The job's parameters: the manifest without its "chunks" and "chain"."""
    return {k: v for k, v in manifest.items() if k not in ("chunks", "chain")}


def chain(manifest: dict) -> str:
    """sha256 chained over the job's parameters and each chunk entry in order."""
    head = digest(parameters(manifest))
    for entry in manifest["chunks"]:
        link = f"{head}:{entry['first']}:{entry['records']}:{entry['sha256']}"
        head = hashlib.sha256(link.encode()).hexdigest()
    return head


def digest(params: dict) -> str:
    """sha256 of a job's parameters: the job's name (the head of its chain, the prefix of its task keys)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()


def first_run_leftovers(folder: Path, outputs: tuple[str, ...]) -> list[Path] | None:
    """What a run killed before it wrote its first manifest leaves at the top of `folder` besides the lock file,
    when that is all the folder holds: the hidden temporary files of interrupted writes (files.temporary) and the
    job's folders (chunks/, those of `outputs`) holding at most such files; else None (a user's file is never
    taken for one).  Hidden entries are passed over (passed_over), left where they are but inside a folder of the
    job, removed whole.  No manifest.json: such a folder holds nothing any run committed."""
    def hidden_temporary(path: Path) -> bool:
        return path.is_file() and not path.is_symlink() and files.temporary(path.name)

    def within(path: Path) -> bool:  # what a folder of the job may hold
        return hidden_temporary(path) or passed_over(path.name) and path.is_file()

    left = []
    for path in folder.iterdir():
        if path.name == LOCK or passed_over(path.name):
            continue
        ours = path.name in (CHUNKS, *outputs) and path.is_dir() and not path.is_symlink()
        if not (hidden_temporary(path) or ours and all(within(inner) for inner in path.iterdir())):
            return None
        left.append(path)
    return left


def uncommitted(folder: Path, outputs: tuple[str, ...]) -> bool:
    """Whether `folder` is one a run began (its lock file) and was killed in before it committed anything: it holds
    nothing but first_run_leftovers (no manifest)."""
    return (folder / LOCK).is_file() and first_run_leftovers(folder, outputs) is not None


def _foreign(folder: Path, outputs: tuple[str, ...]) -> bool:
    """A folder that holds something, but no job's manifest (a killed first run's leftovers aside)."""
    return (folder.is_dir() and not (folder / MANIFEST).is_file()
            and first_run_leftovers(folder, outputs) is None)


def remove_first_run_leftovers(paths: list[Path]) -> None:
    """Remove first_run_leftovers: temporary files, and folders of nothing else."""
    for path in paths:
        if path.is_dir():
            for inner in path.iterdir():
                inner.unlink()
            path.rmdir()
        else:
            path.unlink()


def discard_begun(folder: Path, made: bool, lock) -> None:
    """Remove what a run put in a folder it found new (_foreign) while it still holds `lock`,
    then release it, and remove the folder too when the run made it (unless another run began there meanwhile):
    a run stopped by bad input writes nothing.  Hidden entries at its top are passed over (passed_over): a folder
    holding only those is new, and its .git or .DS_Store is the user's, not the run's."""
    for path in folder.iterdir():
        if path.name != LOCK and not passed_over(path.name):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    lock.close()
    with contextlib.suppress(OSError):
        (folder / LOCK).unlink()
        if made:
            folder.rmdir()


def earlier(stated, format: str) -> bool:
    """Whether a manifest's stated format is an earlier version of `format` ("name/N": the same name, a smaller N)."""
    name, _, version = format.rpartition("/")
    if not (isinstance(stated, str) and stated.startswith(name + "/")):
        return False
    old = stated[len(name) + 1:]
    return old.isascii() and old.isdigit() and version.isdigit() and int(old) < int(version)


def read_manifest(manifest_path: Path):
    """A job folder's manifest as JSON reads it (the default limits, which no command raises for a job's folder), None
    where it is no file (a pipe's open waits for a writer, for ever: `certify verify` of its folder hung), or the
    BadInput or OSError its reading raised, kept for the reader that says what it means (stated_format: no format;
    Store.read: a corrupt folder, or the system's error).  Its format asked, then read as its job's, its text is
    parsed once: a manifest of 600,000 chunks was parsed three times by a run resumed, four by `certify verify`."""
    return _parsed(manifest_path) if manifest_path.is_file() else None


def _parsed(manifest_path: Path):
    """read_manifest of a path that is a file, or that the reader's own error names (Store.read)."""
    try:
        return jsonfile.read(manifest_path, MANIFEST, raise_with=None)
    except (BadInput, OSError) as err:
        return err


def stated_format(manifest) -> str | None:
    """The "format" a manifest as read_manifest read it states, else None (the job's reader then says what is
    wrong)."""
    stated = manifest.get("format") if isinstance(manifest, dict) else None
    return stated if isinstance(stated, str) else None


def another_kind(stated: str | None, format: str) -> bool:
    """Whether a manifest stating `stated` is another kind of job's than one of `format` (a `model --corpus`
    run where a campaign goes): neither this format nor an earlier version of it."""
    return stated is not None and stated != format and not earlier(stated, format)


class Edited(BadInput):
    """A job folder whose manifest reads but whose chain of digests does not match its entries: edited, not
    unreadable (a reader such as verify rejects it, as it rejects an edited chunk)."""


# a run's folder and its restart as a command names them (a Store's refusals tell the user to choose another or
# to pass the restart); a job's Python API spells them its own way (out=, restart=True)
COMMAND = Spelling.command(("out", "restart"))


def choose_another(names: Spelling) -> str:
    """The advice of a refused folder, in the caller's words: "choose another --out" (out=)."""
    return f"choose another {names.option('out')}"


class Store:
    """The folder of one job (module docstring).  Open it with Store.open (to run) or Store.read."""

    def __init__(self, folder: Path, manifest: dict, noun: str, outputs: tuple[str, ...], *, running: bool = False,
                 names: Spelling = COMMAND):
        self.folder, self.manifest, self.noun, self.outputs = folder, manifest, noun, outputs
        self.running = running  # opened by a run (whose command has --restart), not by a reader such as verify
        self.names = names  # the run's options as its refusals name them (Store.open)
        self._lock = None  # the folder's lock file, held from Store.open until close()
        self._begun = self._made = False  # Store.open began the job in an empty folder / made the folder (_discard)
        self.restarted = False  # opened by a run with the restart, which the same command run again would redo
        self._leftovers: set[Path] = set()  # a killed run's, which refuse_unnamed let pass (_discard_leftovers)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, kind, error, trace) -> None:
        if isinstance(error, BadInput) and self._begun and self._lock is not None and not self.manifest["chunks"]:
            # bad input the job itself found before it committed a chunk (a bound undefined on the first
            # configurations decided): the folder left behind refused the corrected command as "another campaign"
            discard_begun(self.folder, self._made, self._lock)
            self._lock = None
        self.close()

    def close(self) -> None:
        """Release the folder (Store.open locked it) for the next run; reading it stays possible."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, folder, params: dict, *, outputs: tuple[str, ...] = (), noun: str = "job",
             restart: bool = False, names: Spelling = COMMAND) -> "Store":
        """Create the folder of the job `params`, or resume it (the same parameters only), locked for this
        run until close() (BadInput if another run holds it).

        `outputs`: the top-level files and folders the job writes besides manifest.json and
        chunks/ (artefact folders, a summary); `restart` removes them with the previous job.  `names`: the
        run's folder and restart ("out", "restart") and its parameters as the caller writes them, for the refusals
        ({"max_bits": "--max-prec"}, or the API's "max_prec=", "restart=True"; a parameter not named is its key).
        """
        folder, params = Path(folder), jsonfile.as_read(params)  # as it reads back (lists, not tuples)
        another = choose_another(names)
        busy = (f"{folder} is in use by another certify process (one run writes a {noun} folder at a time); "
                f"wait for it to stop, or {another}")
        # The lock file is the first thing a run makes in a new folder: found, it decides before anything
        # else is looked at (a run that has just begun to fill the folder is "in use", not "not empty").
        lock = locked(folder, shared=False, busy=busy) if (folder / LOCK).is_file() else None
        try:
            if lock is None and _foreign(folder, outputs):
                raise BadInput(f"{folder} is not empty and is not a {noun} folder; {another}")
            made = not folder.exists()
            if lock is None:
                folder.mkdir(parents=True, exist_ok=True)
                lock = locked(folder, shared=False, busy=busy)
            new = not (folder / MANIFEST).exists()  # and, not foreign, the folder held only a killed first run's leftovers
            store = cls._opened(folder, params, outputs=outputs, noun=noun, restart=restart, names=names)
        except BaseException:
            if lock is not None:
                lock.close()
            raise
        store._lock = lock
        store._begun, store._made, store.restarted = new, made, restart
        return store

    @classmethod
    def _opened(cls, folder: Path, params: dict, *, outputs: tuple[str, ...], noun: str, restart: bool,
                names: Spelling) -> "Store":
        """Store.open once the folder is locked."""
        another = choose_another(names)
        manifest_path = folder / MANIFEST
        manifest = read_manifest(manifest_path)  # its format asked, then read as the job's: parsed once
        if manifest_path.is_file() and another_kind(stated := stated_format(manifest), params["format"]):
            # another job's folder is neither corrupt nor this job's to discard: --restart removed its manifest,
            # chunks and summary before the refusal that followed, which its message had invited
            raise BadInput(f"{folder} holds another kind of job, not a {noun} ({MANIFEST} of format {stated!r}); "
                           f"nothing was changed: {another}")
        if restart and manifest_path.is_file():
            # what the job does not write is not its to discard: refused before anything is removed (the folder
            # left was refused as "not a folder of the job", the job's files gone); a killed run's temporary removed
            checked = cls(folder, {}, noun, outputs, running=True, names=names)
            checked._refuse_strays()
            checked._discard_leftovers()
            checked._discard(params["format"])
        if manifest_path.is_file():
            store = cls.read(folder, params["format"], noun=noun, outputs=outputs, running=True, names=names,
                             manifest=manifest)
            stored = parameters(store.manifest)
            if stored != params:
                differ = sorted(k for k in set(stored) | set(params) if stored.get(k) != params.get(k))
                differ = list(dict.fromkeys(names.names.get(k, k) for k in differ))  # each name once
                raise BadInput(f"{folder} holds another {noun} (different {', '.join(differ)}); "
                               f"{another} or pass {names('restart')} to discard it")
            if (written := store._written()) != store.manifest["chunks"]:  # a killed run's entries of no file
                store._refuse_strays()  # before the manifest is written (through a link in its place)
                store.manifest["chunks"] = written
                store._write_manifest()
        elif (left := first_run_leftovers(folder, outputs)) is None:
            raise BadInput(f"{folder} is not empty and is not a {noun} folder; {another}")
        else:  # new, or a run was killed there before its first manifest: nothing was committed
            remove_first_run_leftovers(left)
            store = cls(folder, {**params, "chunks": []}, noun, outputs, running=True, names=names)
        (folder / CHUNKS).mkdir(parents=True, exist_ok=True)
        if not manifest_path.is_file():
            store._write_manifest()
        return store

    @classmethod
    def read(cls, folder, format: str, *, noun: str = "job", outputs: tuple[str, ...] = (),
             running: bool = False, names: Spelling = COMMAND, manifest=None) -> "Store":
        """The folder of a job of this format, its manifest's entries and chain verified (BadInput); `running`:
        read by a run that will write it (Store.open, whose `names` its refusals take), not by a reader; `manifest`:
        the manifest as read_manifest read it, where the caller has (None: read now)."""
        folder = Path(folder)
        store = cls(folder, {}, noun, outputs, running=running, names=names)
        manifest = _parsed(folder / MANIFEST) if manifest is None else manifest
        if isinstance(manifest, OSError):
            raise manifest
        if isinstance(manifest, BadInput):  # e.g. cut short: written in place by hand or by another tool
            raise store.corrupt(str(manifest)) from None
        store.manifest = manifest
        entry_ok = lambda e: (isinstance(e, dict) and set(e) == {"first", "records", "sha256"}  # noqa: E731
                              and type(e["first"]) is int and type(e["records"]) is int and isinstance(e["sha256"], str))
        if isinstance(manifest, dict) and earlier(manifest.get("format"), format):
            raise store.earlier_version(manifest["format"], format)
        if not (isinstance(manifest, dict) and manifest.get("format") == format):
            raise store.corrupt(f"{MANIFEST} is not a {noun} manifest of format {format}")
        if not (isinstance(manifest.get("chunks"), list) and all(entry_ok(e) for e in manifest["chunks"])
                and isinstance(manifest.get("chain"), str)):
            raise store.corrupt(f"{MANIFEST} does not list its chunks as {{first, records, sha256}} entries")
        if chain(manifest) != manifest["chain"]:
            raise Edited(str(store.corrupt(f"the chain of chunk digests in {MANIFEST} does not match its entries")))
        return store

    # -- reading ------------------------------------------------------------------------------

    @property
    def parameters(self) -> dict:
        """The job's parameters (the manifest without its chunks and chain)."""
        return parameters(self.manifest)

    @property
    def digest(self) -> str:
        """sha256 of the job's parameters: the job's name."""
        return digest(self.parameters)

    @property
    def count(self) -> int:
        """The number of indices 0..count-1 of the job; BadInput (corrupt folder) unless a positive integer."""
        count = self.manifest.get("count")
        if type(count) is not int or count < 1:
            raise self.corrupt(f"{MANIFEST} has no valid count")
        return count

    def corrupt(self, what: str, *, discarded: bool = True) -> BadInput:
        """The BadInput to raise for a corrupt or edited job folder, naming `what` is wrong and, to a run, how to
        start over (a reader such as verify has no restart); `discarded`: whether the restart removes what is wrong
        (it removes only what the job writes)."""
        if not self.running:
            return BadInput(f"{self.folder}: {what}; the folder is corrupt or was edited, and is not read as a {self.noun}")
        if not discarded:
            return BadInput(f"{self.folder}: {what}; the folder is corrupt or was edited, nothing was changed "
                            f"({self.names('restart')} discards only what a {self.noun} writes)")
        return BadInput(f"{self.folder}: {what}; the folder is corrupt or was edited, nothing was changed "
                        f"(move it away, or pass {self.names('restart')} to discard it)")

    def earlier_version(self, stated: str, format: str) -> BadInput:
        """The BadInput for the folder of an earlier version of certify (earlier()): not corrupt, not edited, but of a
        format this version does not read (changed to make folders tamper-evident): to a run, how to start over."""
        what = (f"{self.folder}: written by an earlier version of certify ({MANIFEST} of format {stated}; this "
                f"version reads {format} only)")
        if not self.running:
            return BadInput(f"{what}, not read as a {self.noun}; run the {self.noun} again with this version to "
                            "have one it re-derives")
        return BadInput(f"{what}; nothing was changed: to run the {self.noun} again with this version, pass "
                        f"{self.names('restart')} to discard the folder, or {choose_another(self.names)}")

    def _written(self) -> list[dict]:
        """The manifest's entries but those after the last chunk whose file exists, none of whose files exists: the
        chunk a killed run listed and had not written (the last: a commit writes its entry first), or the chunks a
        killed --restart had removed (_discard removes them from the last backwards).  None of them is decided."""
        chunks = self.manifest["chunks"]
        written = len(chunks)
        while written and not (self.folder / CHUNKS / chunk_name(chunks[written - 1]["first"])).exists():
            written -= 1
        return chunks[:written]

    def records(self, check: Callable[[dict, str], None] | None = None) -> Iterator[dict]:
        """Every committed record, chunk by chunk in the order they were committed, each chunk
        verified against its digest, each record an object whose index "i" is in range, passed
        to check(record, where) (which raises self.corrupt(...)), and appearing once; once the folder
        is found to hold nothing the job does not write, at its top and in chunks/ (module docstring)."""
        count = self.count
        entries = self._written()
        self._refuse_strays()
        self.refuse_unnamed(CHUNKS, {chunk_name(e["first"]) for e in entries}, _never,
                            unnamed=f"{MANIFEST} does not list")
        seen: set[int] = set()
        for entry in entries:
            first, named_index_met = entry["first"], False
            path = self.folder / CHUNKS / chunk_name(first)
            if not path.is_file():  # read as empty, it was said not to match its digest
                raise self.corrupt(f"{CHUNKS}/{path.name}, which {MANIFEST} lists, is "
                                   + ("not a file" if path.exists() else "missing"))
            # at most the bytes limit, far above the job's chunks (some MB): read whole and split into lines, 400 MB of
            # empty lines took 4.2 GB and 9 s to be refused
            with open(path, "rb") as handle:
                data = files.head(handle, DEFAULT.bytes + 1)
            if len(data) > DEFAULT.bytes:
                raise self.corrupt(f"{CHUNKS}/{path.name} is larger than the limit of {DEFAULT.bytes} bytes")
            if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise self.corrupt(f"{CHUNKS}/{path.name} does not match its digest in {MANIFEST}")
            try:  # its digest redone over bytes that are no text: edited, as a chunk whose digest differs
                lines = data.decode("utf-8").splitlines()
            except UnicodeDecodeError as err:
                raise self.corrupt(f"{CHUNKS}/{path.name} is not UTF-8 text ({err.reason} at byte {err.start})") from None
            if len(lines) != entry["records"]:
                raise self.corrupt(f"{CHUNKS}/{path.name} holds {len(lines)} records, the manifest says {entry['records']}")
            for number, line in enumerate(lines, 1):
                where = f"{CHUNKS}/{path.name} line {number}"
                record = jsonfile.loads(line, f"{self.folder / where}", raise_with=None)
                if not isinstance(record, dict) or type(record.get("i")) is not int:
                    raise self.corrupt(f"{where} is not a record with an integer index i")
                if not 0 <= record["i"] < count:
                    raise self.corrupt(f"{where}: index {record['i']} is outside 0..{count - 1}")
                if check is not None:
                    check(record, where)
                if record["i"] in seen:
                    raise self.corrupt(f"index {record['i']} is recorded twice")
                seen.add(record["i"])
                named_index_met = named_index_met or record["i"] == first
                yield record
            if not named_index_met:  # a run names a chunk by an index it decided: else a run would find that index
                # to decide and, its artefacts written, stop on the chunk file its commit would overwrite
                raise self.corrupt(f"{CHUNKS}/{path.name} holds no record of index {first}, which names it")

    def refuse_unnamed(self, output: str, named: set[str], pending: Callable[[str], bool], *,
                       unnamed: str = "no record names") -> None:
        """Refuse the folder (self.corrupt, naming the entry: "... is a file `unnamed`", or a folder) when the
        output folder `output` (TOP: the folder itself) holds an entry whose name is not in `named` (the names the records
        give): a certificate no record names would be browsed as one the job found.  Hidden entries are passed
        over (passed_over).  Two kinds are a killed run's and pass: the hidden temporary file of an interrupted
        write (files.temporary), and a name for which `pending(name)` says it is the artefact of an index not yet
        decided, which a run killed between writing a chunk's artefacts and committing it leaves.  A run removes
        those before it writes anything (_discard_leftovers: once every check has passed, so that a refusal changes
        nothing), and decides the index again, writing anew what it keeps: none outlives the run."""
        folder = self.folder / output
        left = []
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if path.name in named and path.is_symlink():  # a run writes through it, a reader reads what it names
                raise self.corrupt(f"{PurePosixPath(output, path.name)} is a link, which no {self.noun} writes "
                                   "(remove it)", discarded=output != TOP)
            if path.name in named or passed_over(path.name):
                continue
            if not (path.is_file() and (files.temporary(path.name) or pending(path.name))):
                what = "folder" if path.is_dir() and not path.is_symlink() else "file"  # said so, as `rm` needs -r
                # --restart removes chunks/ and the output folders whole, but at the top only what the job writes
                raise self.corrupt(f"{PurePosixPath(output, path.name)} is a {what} {unnamed} (remove that {what})",
                                   discarded=output != TOP)
            left.append(path)
        if self.running:
            self._leftovers.update(left)

    def _refuse_strays(self) -> None:
        """Refuse the folder (refuse_unnamed) when its top holds an entry the job does not write: beside its summary
        and figures, a file would be browsed as one of them (a job's report page shows every figure there).  Also
        when one it writes is a link (refuse_unnamed): a run writes through it, to what it names (a summary.json
        linked to a file elsewhere had that file overwritten by a resumed run's summary), and a restart is not to
        remove that."""
        self.refuse_unnamed(TOP, {MANIFEST, CHUNKS, LOCK, *self.outputs}, _never, unnamed=f"no {self.noun} writes")

    def _discard_leftovers(self) -> None:
        """Remove what refuse_unnamed let pass as a killed run's leftovers: called before the run writes anything."""
        for path in sorted(self._leftovers):
            path.unlink(missing_ok=True)
        self._leftovers.clear()

    def _discard(self, format: str) -> None:
        """Remove the job in the folder, its manifest last, for a restart: a run killed meanwhile leaves one the next
        run reads, with or without the restart.  The chunk files go first, from the last committed backwards: the
        manifest then lists chunks of which the last ones have no file (_written), and the artefacts left are of
        indices no record decides (refuse_unnamed passes them).  An unreadable manifest gives no order to keep."""
        with contextlib.suppress(BadInput):
            for entry in reversed(self.read(self.folder, format, outputs=self.outputs).manifest["chunks"]):
                (self.folder / CHUNKS / chunk_name(entry["first"])).unlink(missing_ok=True)
        for name in (CHUNKS, *self.outputs):
            path = self.folder / name
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        (self.folder / MANIFEST).unlink()

    def decided(self, check: Callable[[dict, str], None] | None = None) -> set[int]:
        """The indices of every committed record (the folder verified as by records())."""
        return {record["i"] for record in self.records(check)}

    # -- committing ---------------------------------------------------------------------------

    def _write_manifest(self) -> None:
        self.manifest["chain"] = chain(self.manifest)
        files.replace(self.folder / MANIFEST, jsonfile.dumps(self.manifest))

    def _artefact_path(self, name: str) -> Path:
        """The path of an artefact, which must lie in one of the job's output folders."""
        parts = PurePosixPath(name).parts
        if (len(parts) < 2 or parts[0] not in self.outputs or PurePosixPath(name).is_absolute()
                or any(p in ("", ".", "..") for p in parts)):
            raise ValueError(f"a task named the artefact {name!r}, not a path inside {', '.join(self.outputs)}")
        if any(files.hidden(p) for p in parts):  # the folder's checks would pass over it (module docstring)
            raise ValueError(f"a task named the artefact {name!r}, a hidden name")
        return self.folder.joinpath(*parts)

    def commit(self, first: int, result: ChunkResult) -> None:
        """Commit a chunk (module docstring): artefacts, manifest entry, records; never overwrite one."""
        self._discard_leftovers()
        lines = "".join(json.dumps(record) + "\n" for record in result.records)
        path = self.folder / CHUNKS / chunk_name(first)
        if path.exists():
            raise self.corrupt(f"{CHUNKS}/{path.name} exists already and would be overwritten")
        for name, text in result.artefacts.items():
            target = self._artefact_path(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            files.replace(target, text)
        with signals.deferred():  # the entry and its file are written together, or (killed) the file is missing
            self.manifest["chunks"].append({"first": first, "records": len(result.records),
                                            "sha256": hashlib.sha256(lines.encode("utf-8")).hexdigest()})
            self._write_manifest()
            files.replace(path, lines)

    def write(self, name: str, text: str) -> None:
        """Write one of the job's top-level outputs (a summary) atomically."""
        if name not in self.outputs:
            raise ValueError(f"{name!r} is not one of the outputs {', '.join(self.outputs)}")
        self._discard_leftovers()
        files.replace(self.folder / name, text)
