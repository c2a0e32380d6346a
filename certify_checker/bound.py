"""The checker's own reading of a user bound's text: the restricted grammar and its canonical form.

A certificate states its bound in one canonical form (the engine renders it from its parse): the
checker parses the text with `ast`, renders the tree by the same rules (written here again, on
purpose) and rejects the certificate unless the two texts are equal.  So a comment (`# ...`), a
control character (a terminal escape could show one bound and hide another), a homoglyph or any
other second reading of the text never reaches the arithmetic.

Rules: printable ASCII only; numbers, the names D a n d v, + - * / **, unary minus, the functions
exp log sqrt tanh sinh cosh (one argument) and min max (two or more); at most MAX_DEPTH nested
operators.  Rendering: spaces around + and -, none elsewhere, parentheses only where the grammar
needs them; a literal is its plain decimal digits, or scientific (3.14e-5) when that is more
than 4 characters shorter.
"""

from __future__ import annotations

import ast
import functools
import warnings
from fractions import Fraction

from certify_checker.exact import rational

MAX_LENGTH, MAX_DEPTH = 2000, 100
NAMES = {"D", "a", "n", "d", "v"}
UNARY = {"exp", "log", "sqrt", "tanh", "sinh", "cosh"}
VARIADIC = {"min", "max"}
LEVEL = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.Pow: 4}
SYMBOL = {ast.Add: " + ", ast.Sub: " - ", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
NEGATION, ATOM = 3, 5


def _times_divisible(x: int, p: int) -> int:
    """The exponent of p in x > 0, by divisions by p^(2^i), largest first (one per unit took seconds for 9e-3999)."""
    squares, count = [p], 0
    while squares[-1] ** 2 <= x:
        squares.append(squares[-1] ** 2)
    for i in range(len(squares) - 1, -1, -1):
        x, count = (x // squares[i], count + 2**i) if x % squares[i] == 0 else (x, count)
    return count


def number_text(value: Fraction) -> str:
    q = value.denominator
    twos = (q & -q).bit_length() - 1
    k = -max(twos, fives := _times_divisible(q >> twos, 5))
    if q != 2**twos * 5**fives or k < -10 * MAX_LENGTH:
        raise ValueError("a literal of the bound is not a decimal")
    m = value.numerator * 10**-k // q
    zeros = _times_divisible(abs(m), 10) if m else 0
    m, k = m // 10**zeros, k + zeros
    plain = str(m * 10 ** k) if k >= 0 else f"{m // 10 ** -k}.{str(m % 10 ** -k).rjust(-k, '0')}"
    digits = str(m)
    scientific = f"{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{k + len(digits) - 1}"
    return plain if len(plain) <= len(scientific) + 4 else scientific


def _render(node, source: str, depth: int) -> tuple[str, int]:
    """(canonical text, precedence level) of a node of the grammar; ValueError outside it."""
    if depth > MAX_DEPTH:
        raise ValueError(f"the bound nests deeper than {MAX_DEPTH}")
    depth += 1
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return number_text(rational(ast.get_source_segment(source, node))), ATOM
    if isinstance(node, ast.Name) and node.id in NAMES:
        return node.id, ATOM
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        text, level = _render(node.operand, source, depth)
        if isinstance(node.op, ast.UAdd):
            return text, level
        return "-" + (text if level >= NEGATION else f"({text})"), NEGATION
    if isinstance(node, ast.BinOp) and type(node.op) in LEVEL:
        level = LEVEL[type(node.op)]
        left, left_level = _render(node.left, source, depth)
        right, right_level = _render(node.right, source, depth)
        need_left, need_right = (ATOM, NEGATION) if level == 4 else (level, level + 1)
        left = left if left_level >= need_left else f"({left})"
        right = right if right_level >= need_right else f"({right})"
        return left + SYMBOL[type(node.op)] + right, level
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
            and (node.func.id in UNARY and len(node.args) == 1 or node.func.id in VARIADIC and len(node.args) >= 2)):
        return f"{node.func.id}({', '.join(_render(arg, source, depth)[0] for arg in node.args)})", ATOM
    raise ValueError("the bound is outside the grammar (numbers, D a n d v, + - * / **, the listed functions)")


def syntax(text: str):
    """ast's tree of the text, a warning of its tokenizer ("1if") raised as the SyntaxError it warns of, not printed."""
    with warnings.catch_warnings(action="error", category=SyntaxWarning):
        return ast.parse(text, mode="eval")


def canonical(text) -> str:
    """The canonical text of a bound, or ValueError when the text is not in the grammar."""
    if not isinstance(text, str) or not 0 < len(text) <= MAX_LENGTH:
        raise ValueError("the bound is not a text of 1 to 2000 characters")
    return _canonical(text)


@functools.lru_cache(maxsize=64)  # a campaign's certificates state one bound: read once
def _canonical(text: str) -> str:
    if any(not " " <= ch <= "~" or ch in "#\\" for ch in text):
        raise ValueError("the bound holds a comment, a control or a non-ASCII character")
    try:
        return _render(syntax(text).body, text, 0)[0]
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError("the bound is not an expression of the grammar") from None
