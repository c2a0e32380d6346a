"""`python -m certify_checker CERT [CERT ...]`: re-verify certificates with the trusted checker alone.

Exit codes as `certify verify`: 0 every certificate confirmed, 1 one rejected, 2 one unreadable.
"""

import sys

from certify_checker import verify_text


def main(paths: list[str]) -> int:
    if not paths:
        print("usage: python -m certify_checker CERT [CERT ...]", file=sys.stderr)
        return 2
    worst = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as err:
            print(f"certify_checker: error: cannot read {path}: {err}", file=sys.stderr)
            return 2
        confirmation = verify_text(text)
        print(f"{'OK' if confirmation.ok else 'REJECTED'}: {path}: {confirmation.message}")
        worst = max(worst, 0 if confirmation.ok else 1)
    return worst


sys.exit(main(sys.argv[1:]))
