"""Progress on stderr for the long commands: one helper, so every command shows it, and silences it, alike.

Bars (tqdm) are drawn when stderr is a terminal, or always once `configure(True)` (`--progress`);
`configure(False)` (`-q`) silences bars and the plain progress lines of `line`.  Plain lines
(one per section of `certify run`) are printed whenever progress is not silenced, terminal or
not, since a log file benefits from them too.  Nothing here goes to stdout: results stay parseable.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm

_mode: bool | None = None  # True: always, False: never, None: bars only when stderr is a terminal


def configure(show: bool | None) -> None:
    """True forces progress, False silences it, None: bars only on a terminal."""
    global _mode
    _mode = show


def bars_shown() -> bool:
    """Whether progress bars are drawn: as configured (--progress / -q), else when stderr is a terminal."""
    if _mode is None:
        return sys.stderr.isatty()
    return _mode


def bar(iterable=None, *, total: float | None = None, desc: str | None = None, unit: str = "it",
        show: bool | None = None, **options) -> tqdm:
    """A tqdm bar on stderr (over `iterable`, or updated by hand up to `total`) that disappears when
    done; `show` overrides the configured mode (a library caller's own choice), else it is drawn
    when bars_shown()."""
    from tqdm import tqdm  # here: commands without bars (claims, graph) start without loading tqdm

    options.setdefault("leave", False)
    # redraw whenever mininterval has passed: tqdm's default waits for as many steps as passed between its last two
    # draws, so a bar that slows down (a region proof's last boxes) stood still for seconds behind its work
    options.setdefault("miniters", 0)
    visible = bars_shown() if show is None else show
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=not visible,
                dynamic_ncols=True, **options)


def line(text: str) -> None:
    """One progress line on stderr (unless silenced)."""
    if _mode is not False:
        print(text, file=sys.stderr, flush=True)
