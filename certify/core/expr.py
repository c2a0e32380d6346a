"""Bound expressions: a restricted grammar, parsed with `ast` and walked, never eval'd.

    expr := number | name | expr (+ - * / **) expr | -expr | f(expr, ...)
    f    := exp log sqrt tanh sinh cosh (one argument), min max (two or more)

Number literals are exact: "0.1" is 1/10 (read from the source text, not Python's float).
An expression is evaluated with any arithmetic backend, so the float64 screen and the ball
evaluation read the same tree.

Only printable ASCII is read (no comments `#`, no control or non-ASCII characters: a terminal
escape or a comment could show one bound and check another), nesting is at most MAX_DEPTH deep,
and the bound is printed and stored in one canonical form re-rendered from the parse (`render`),
which the checker renders the same way from its own parse.  A bound that is certainly undefined
where it is evaluated (a division by an exact zero, log of a number <= 0, sqrt of one < 0, x**y of
one <= 0, or < 0 for a positive rational constant y) is bad input, not an undecided verdict; a part without names
certainly undefined (1/0) is refused as the bound is read, as is a part whose divisor, argument or base is
numbers alone outside its domain, read exactly (D/(0.1 - 1/10): balls cannot tell that exact 0 from a near one).
A power x**y is a product when y is written as a whole number >= 0 (D**2), else exp(y log x),
with 0**y = 0 for a positive rational constant y (0.5, 1/2, 1.5): (a*D**2)**0.5 is sqrt(a*D**2).
"""

from __future__ import annotations

import ast
import functools
import warnings
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from certify.errors import BadInput, UndefinedBound, shown
from certify.core.arith import BALL
from certify.core.numbers import parse_number
from certify.core.precision import PRECISION_LIMIT, START_PRECISION, working

UNARY_FUNCTIONS = ("exp", "log", "sqrt", "tanh", "sinh", "cosh")
VARIADIC_FUNCTIONS = ("min", "max")
USER_NAMES = ("D", "a", "n", "d", "v")
MAX_LENGTH = 2000
MAX_DEPTH = 100  # operators and calls nested in one another (1 + 1 + ... counts one per +)
PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"#", "\\"}
MAX_POWER = 1024  # integer powers are products; beyond this a bound is absurd, not ambitious (the checker's cap too)

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


@dataclass(frozen=True)
class Expr:
    """A parsed bound: its canonical text and its tree, evaluated in any arithmetic backend."""
    text: str
    tree: tuple  # ("num", Fraction) | ("var", name) | ("neg", e) | (op, e1, e2) | ("call", f, (args))

    @property
    def names(self) -> set[str]:
        """The variable names the bound uses."""
        return _names(self.tree)

    def evaluate(self, ar, env: dict):
        """The bound's value in backend `ar`, the names taken from env (a mapping)."""
        return self._compiled(ar, env)

    def __getstate__(self) -> dict:
        """Pickled without the compiled closures (local functions do not pickle); they are rebuilt on use."""
        return {key: value for key, value in self.__dict__.items() if key != "_compiled"}

    @functools.cached_property
    def _compiled(self):
        """The tree as nested closures (_compile), built once per parse: an evaluation calls them
        instead of walking the tree again."""
        return _compile(self.tree)

    def __str__(self) -> str:
        return self.text


def undefined(bound: Expr, ar, env) -> tuple[str, int]:
    """Where a bound whose value came out not finite (a ball with no finite bounds) loses it, in words (_why), and the
    least precision at which it can have one where arb's exponent range denies it below (_finite_from, else 0);
    ("", 0) where every part is finite or the backend's values have no is_finite (float64).  The part named is the
    innermost whose operands are finite and whose value is not, each part evaluated by the bound's own code
    (_compile): for the reason of an undecided verdict, not on the way to one."""
    tree = _innermost_undefined(bound.tree, ar, env)
    return ("", 0) if tree is None else (_why(tree), _finite_from(tree, ar, env))


def _why(tree: tuple) -> str:
    """Why the part `tree` has no finite value: a division by a number whose enclosure contains zero, a log, square
    root or real power of a number not certainly in its domain, an overflow."""
    kind = tree[0]
    if kind == "/":
        return f"{render(tree)} divides by {render(tree[2])}, whose enclosure contains zero"
    if kind == "call" and tree[1] in ("log", "sqrt"):
        return f"{render(tree)} of a number not certainly inside its domain"
    if kind == "**" and not _whole_power(tree):
        return f"{render(tree)} with a base not certainly positive, or too large"
    return f"{render(tree)} is not finite (too large)" if _operands(tree) else \
        f"{render(tree)} is not finite on these inputs"


# Bits of precision beyond p at which _finite_from reads arb's range at p: sinh and cosh give up at 2 (p + 4) bits of
# argument rather than exp's 2 p (measured at 64 to 1000 bits), well within it.
RANGE_MARGIN = 64


def _finite_from(tree: tuple, ar, env) -> int:
    """The least precision at which the part `tree`, the innermost of a bound with no finite value, can have one
    where arb's exponent range denies it below: exp of a number x >= 2^(2 (p + RANGE_MARGIN)), sinh or cosh of one of
    either sign, or a real power exp(y log x) of such an exponent (_real_power).  arb_exp gives [+/- inf] for an
    argument of 2^max(128, 2 p) or more at p bits (FLINT's MAGLIM), whatever its midpoint and radius there (it takes
    the ball's upper end when wide), sinh and cosh a few bits later; and every operation of a bound gives no finite
    value on a ball of infinite radius.  So no precision up to p gives the bound a value.  0 where nothing is known
    (another part, or an argument not certainly that large); at most PRECISION_LIMIT + 1."""
    if not (tree[0] == "call" and tree[1] in ("exp", "sinh", "cosh") or tree[0] == "**" and not _whole_power(tree)):
        return 0
    if tree[0] == "**":  # exp(y log x)
        x = _compile(tree[2])(ar, env) * ar.apply("log", _compile(tree[1])(ar, env))
    else:
        x = _compile(tree[2][0])(ar, env)
    if not isinstance(x, arb) or not x.is_finite():
        return 0
    size = max(x.lower(), -x.upper()) if tree[1] in ("sinh", "cosh") else x.lower()  # exp's x, or the least |x|
    if not size > 0:
        return 0
    mantissa, exponent = size.man_exp()
    bits = int(exponent) + int(mantissa).bit_length() - 1  # size >= 2^bits
    return max(0, min(bits // 2 - RANGE_MARGIN, PRECISION_LIMIT) + 1)


def _operands(tree: tuple) -> list[tuple]:
    """The parts a part of the tree is computed from, left to right."""
    kind = tree[0]
    return [] if kind in ("num", "var") else [tree[1]] if kind == "neg" else list(tree[2]) if kind == "call" \
        else [tree[1], tree[2]]


def _innermost_undefined(tree: tuple, ar, env) -> tuple | None:
    """The first part of `tree` (left to right, innermost first) whose operands are finite and whose value is not, or
    None (also where the backend's values have no is_finite)."""
    for part in _operands(tree):
        if (found := _innermost_undefined(part, ar, env)) is not None:
            return found
    test = getattr(_compile(tree)(ar, env), "is_finite", None)
    return None if test is None or test() else tree


def _whole_power(tree: tuple) -> bool:
    """A power x**k written with a whole number k: a product (_compile), never an exp."""
    return tree[2][0] == "num" and tree[2][1].denominator == 1


def parse(text: str, names=USER_NAMES) -> Expr:
    """The tree of a bound over `names`; its text is the canonical rendering of the tree.  Parsed once
    per text and set of names (an Expr is immutable), so a campaign or an escalation of precision
    does not parse its bound again."""
    if not isinstance(text, str):  # from Python: bound=1 was "empty", which it is not
        raise BadInput(f"a bound is a string (an expression such as '2*D'), not {type(text).__name__}")
    return _parse(text, frozenset(names))


@functools.lru_cache(maxsize=256)
def _parse(text: str, names: frozenset) -> Expr:
    if not text.strip():
        raise BadInput("the bound expression is empty")
    if len(text) > MAX_LENGTH:
        raise BadInput(f"the bound expression is longer than {MAX_LENGTH} characters")
    if "#" in text:
        raise BadInput("bound: comments (#) are not allowed")
    if "^" in text:  # Python's ^ is exclusive or: a D^2 would not mean a power
        raise BadInput("bound: '^' is not a power here: use ** for powers, e.g. a*D**2")
    if unreadable := sorted(set(text) - PRINTABLE):
        raise BadInput(f"bound: the character {unreadable[0]!r} is not allowed (printable ASCII only)")
    source = text.strip()
    try:
        tree = _build(_syntax(source), source, tuple(sorted(names)), 0)
    except SyntaxError as err:
        raise BadInput(f"bound {source!r}: syntax error ({err.msg})") from None
    except (RecursionError, MemoryError):
        raise BadInput(f"bound: nested deeper than {MAX_DEPTH}") from None
    canonical = render(tree)
    if len(canonical) > MAX_LENGTH:  # what certificates state and the checker reads: spaces around + and -, ", "
        raise BadInput(f"the bound's canonical form is {len(canonical)} characters long, more than {MAX_LENGTH} "
                       "(it writes a space around each + and -, and after each comma)")
    _exactly_defined(tree)
    _constants_defined(tree)
    return Expr(text=canonical, tree=tree)


def _constants_defined(tree: tuple) -> None:
    """UndefinedBound (bad input) where a part of the bound without names is certainly undefined (1/0, log(0),
    sqrt(-1), 0**-1): undefined whatever the configuration, it is refused before any (a campaign records a drawn
    configuration where a part with names is undefined as undecided there: certify.search.campaign.decided)."""
    if _names(tree):
        for part in _operands(tree):
            _constants_defined(part)
        return
    with working(START_PRECISION):
        _compile(tree)(BALL, {})


def _exactly_defined(tree: tuple) -> None:
    """UndefinedBound where a division, log, square root or real power is outside its domain by an operand of numbers
    alone under + - * / (its divisor, argument or base), read exactly: 0.1 - 1/10 is exactly 0 yet a ball around 0 at
    every precision, so in balls D/(0.1 - 1/10) is never certainly undefined, as D/(1 - 1) is.  The exact value's ball
    is exact where it is 0 and clear of 0 elsewhere, so the backend's own tests of the domain judge it."""
    for part in _operands(tree):
        _exactly_defined(part)
    kind = tree[0]
    if kind == "/":
        operand, outside = tree[2], BALL.certainly_zero
    elif kind == "call" and tree[1] in ("log", "sqrt"):
        operand, outside = tree[2][0], functools.partial(BALL.outside_domain, tree[1])
    elif kind == "**" and not _whole_power(tree):
        operand, outside = tree[1], functools.partial(BALL.outside_domain, _power_domain(tree)[0])
    else:
        return
    value = rational_constant(operand)
    if value is not None:
        with working(START_PRECISION):
            if outside(BALL.number(value)):
                raise _undefined(tree)


def _syntax(source: str):
    """The syntax tree of the text.  A warning of Python's tokenizer (a number run into a keyword: "1if", "0x1for")
    is raised as the syntax error it warns of: printed, it was a line on stderr before the one of bad input."""
    with warnings.catch_warnings(action="error", category=SyntaxWarning):
        return ast.parse(source, mode="eval").body


def _build(node, source: str, names: tuple[str, ...], depth: int) -> tuple:
    if depth > MAX_DEPTH:
        raise BadInput(f"bound: nested deeper than {MAX_DEPTH}")
    depth += 1
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return ("num", parse_number(ast.get_source_segment(source, node), "bound literal"))
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise BadInput(f"bound: unknown name {node.id!r}; the bound may use {', '.join(names)}")
        return ("var", node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _build(node.operand, source, names, depth)
        return ("neg", inner) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        tree = (_BINARY[type(node.op)], _build(node.left, source, names, depth),
                _build(node.right, source, names, depth))
        power = rational_constant(tree[2]) if tree[0] == "**" else None
        if power is not None and abs(power) > MAX_POWER:
            written = shown(ast.get_source_segment(source, node.right))  # not the 4000 digits of 1e4000
            raise BadInput(f"bound: the exponent {written} is larger than {MAX_POWER} in absolute value")
        return tree
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        if name not in UNARY_FUNCTIONS + VARIADIC_FUNCTIONS:
            raise BadInput(f"bound: unknown function {name!r}; allowed: {', '.join(UNARY_FUNCTIONS + VARIADIC_FUNCTIONS)}")
        arity_ok = len(node.args) == 1 if name in UNARY_FUNCTIONS else len(node.args) >= 2
        if not arity_ok:
            wanted = "one argument" if name in UNARY_FUNCTIONS else "two or more arguments"
            raise BadInput(f"bound: {name}() takes {wanted}")
        return ("call", name, tuple(_build(arg, source, names, depth) for arg in node.args))
    segment = ast.get_source_segment(source, node) or type(node).__name__
    raise BadInput(f"bound: {segment!r} is not allowed (numbers, names, + - * / **, and the listed functions)")


# Precedence levels of the rendering: a sum binds weakest, then products, a minus sign, powers, atoms.
_LEVEL = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "**": 4}
_ATOM = 5


def _level(tree: tuple) -> int:
    return _LEVEL.get(tree[0], _ATOM)


def _multiplicity(x: int, p: int) -> int:
    """The largest e with p^e dividing x > 0: a division by each p^(2^i) up to x's size, largest first (the binary
    digits of e), not one by p for each unit of e."""
    powers = [p]
    while powers[-1] ** 2 <= x:
        powers.append(powers[-1] ** 2)
    count = 0
    for i in reversed(range(len(powers))):
        quotient, remainder = divmod(x, powers[i])
        if remainder == 0:
            x, count = quotient, count + (1 << i)
    return count


def render_number(value: Fraction) -> str:
    """A literal's canonical text: plain digits, or scientific (3.14e-5) when that is more than 4
    characters shorter.
    Literals are decimals, so the value is m 10^k for integers m, k, found from the powers of 2, 5 and 10 that
    divide them (_multiplicity): a step a power of ten took seconds for a bound of literals 9e-3999."""
    twos = (value.denominator & -value.denominator).bit_length() - 1
    fives = _multiplicity(value.denominator >> twos, 5)
    k = -max(twos, fives)
    if value.denominator != 2**twos * 5**fives or k < -10 * MAX_LENGTH:  # literals never are: never a loop on one
        raise BadInput(f"bound: the number {value} has no decimal form")
    m = value.numerator * 10**-k // value.denominator
    zeros = _multiplicity(abs(m), 10) if m else 0
    m, k = m // 10**zeros, k + zeros
    plain = str(m * 10 ** k) if k >= 0 else f"{m // 10 ** -k}.{str(m % 10 ** -k).rjust(-k, '0')}"
    digits = str(m)
    scientific = f"{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{k + len(digits) - 1}"
    return plain if len(plain) <= len(scientific) + 4 else scientific


def render(tree: tuple) -> str:
    """The canonical text of a tree: parsing it gives the same tree back (parentheses only where
    the grammar needs them; spaces around + and -, none elsewhere)."""
    kind = tree[0]
    if kind == "num":
        return render_number(tree[1])
    if kind == "var":
        return tree[1]
    if kind == "call":
        return f"{tree[1]}({', '.join(render(arg) for arg in tree[2])})"

    def wrapped(sub: tuple, least: int) -> str:
        text = render(sub)
        return text if _level(sub) >= least else f"({text})"

    if kind == "neg":
        return "-" + wrapped(tree[1], _LEVEL["neg"])
    level = _LEVEL[kind]
    if kind == "**":  # right-associative; the exponent may carry a sign (2**-1)
        return f"{wrapped(tree[1], _ATOM)}**{wrapped(tree[2], _LEVEL['neg'])}"
    joiner = f" {kind} " if level == 1 else kind
    return f"{wrapped(tree[1], level)}{joiner}{wrapped(tree[2], level + 1)}"


def _names(tree: tuple) -> set[str]:
    kind = tree[0]
    if kind == "var":
        return {tree[1]}
    if kind == "num":
        return set()
    if kind == "neg":
        return _names(tree[1])
    if kind == "call":
        return set().union(*(_names(arg) for arg in tree[2]))
    return _names(tree[1]) | _names(tree[2])


def integer_power(x, k: int):
    """x**k for an integer k >= 0 by repeated products (arb's pow is nan on balls around 0)."""
    result, base = None, x
    while k:
        if k & 1:
            result = base if result is None else result * base
        base = base * base
        k >>= 1
    return x * 0 + 1 if result is None else result


def rational_constant(tree: tuple) -> Fraction | None:
    """The exact value of a tree of numbers, unary minus and + - * / (0.5, 1/2, -3/2), else None (a name, a call,
    a power, or a division by zero)."""
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "neg":
        inner = rational_constant(tree[1])
        return None if inner is None else -inner
    if kind not in ("+", "-", "*", "/"):
        return None
    left, right = rational_constant(tree[1]), rational_constant(tree[2])
    if left is None or right is None or (kind == "/" and right == 0):
        return None
    return left + right if kind == "+" else left - right if kind == "-" else left * right if kind == "*" \
        else left / right


def _one_minus_exp(tree: tuple) -> bool:
    """1 - exp(u), evaluated as -expm1(u) (Arithmetic.one_minus_exp), as the checker does (certify_checker.formula)."""
    return tree[1] == ("num", 1) and tree[2][0] == "call" and tree[2][1] == "exp"


def _power_domain(tree: tuple) -> tuple[str, str, str]:
    """(domain, what is outside it, the exponent's kind) of a real power x**y (_real_power): a positive rational
    constant y reads as sqrt does (x >= 0), any other y as log (x > 0)."""
    power = rational_constant(tree[2])
    if power is not None and power > 0:
        return "sqrt", "< 0", "a power that is not a whole number"
    return "log", "<= 0", "a power that is not a positive rational number"


def _undefined(tree: tuple) -> UndefinedBound:
    """The bad input of a part certainly undefined: a division by zero, a log or square root outside its domain, a
    real power of a base outside its domain (_power_domain)."""
    if tree[0] == "/":
        return UndefinedBound(f"the bound is undefined: {render(tree)} divides by zero")
    if tree[0] == "call":
        return UndefinedBound(f"the bound is undefined: {render(tree)} takes an argument outside its domain")
    _, needs, condition = _power_domain(tree)
    return UndefinedBound(f"the bound is undefined: {render(tree)} with a base {needs} and {condition}")


def _real_power(tree: tuple, left):
    """x**y for y other than a whole number written as one: exp(y log x).  A positive rational constant y
    reads as sqrt does: defined for x >= 0, 0**y = 0 (so (a*D**2)**0.5 is sqrt(a*D**2), which a region
    proof evaluates at D = 0); any other y needs x > 0.  A ball that reaches below 0 (or, for the
    others, contains 0) has a log that is not finite, so its power is not finite: it closes nothing."""
    power = rational_constant(tree[2])
    positive = power is not None and power > 0
    exponent = _compile(tree[2])
    domain = _power_domain(tree)[0]

    def real_power(ar, env):
        base = left(ar, env)
        if ar.outside_domain(domain, base):
            raise _undefined(tree)
        if positive and ar.certainly_zero(base):
            return base  # the exact 0 of the backend: y > 0
        if positive and hasattr(ar, "positive_power"):  # a backend with its own rule (certify.prove.forward)
            return ar.positive_power(base, power)
        return ar.apply("exp", exponent(ar, env) * ar.apply("log", base))
    return real_power


def _compile(tree: tuple):
    """f(ar, env): the value of `tree` in backend `ar`, the names taken from env; operands left to right.
    A bound certainly undefined where it is evaluated is bad input (module docstring)."""
    kind = tree[0]
    # numbers alone under unary minus and + - * / (a literal, 1/3 - 1/3) are read exactly, as one number: 0.1 - 1/10 is
    # the exact 0, whose root is 0 (as sqrt(1 - 1) is), never a ball around 0 at every precision
    value = rational_constant(tree)
    if value is not None:
        return lambda ar, env: ar.number(value)  # in Ball, at the precision of the evaluation
    if kind == "var":
        name = tree[1]
        return lambda ar, env: env[name]
    if kind == "neg":
        inner = _compile(tree[1])
        return lambda ar, env: -inner(ar, env)
    if kind == "call":
        function, args = tree[1], [_compile(arg) for arg in tree[2]]
        if function in VARIADIC_FUNCTIONS:
            def extreme(ar, env):
                return (ar.maximum if function == "max" else ar.minimum)(ar.stack([f(ar, env) for f in args]))
            return extreme
        (argument,) = args

        def call(ar, env):
            x = argument(ar, env)
            if ar.outside_domain(function, x):
                raise _undefined(tree)
            return ar.apply(function, x)
        return call
    left = _compile(tree[1])
    if kind == "**":
        exponent = tree[2]
        if exponent[0] == "num" and exponent[1].denominator == 1 and exponent[1] >= 0:
            power = exponent[1].numerator
            return lambda ar, env: integer_power(left(ar, env), power)
        return _real_power(tree, left)
    right = _compile(tree[2])
    if kind == "+":
        return lambda ar, env: left(ar, env) + right(ar, env)
    if kind == "-":
        if _one_minus_exp(tree):  # (1 - exp(-a D^2)) D at D_t ~ 10^-30000 lost every digit to the subtraction
            exponent = _compile(tree[2][2][0])
            return lambda ar, env: ar.one_minus_exp(exponent(ar, env))
        return lambda ar, env: left(ar, env) - right(ar, env)
    if kind == "*":
        return lambda ar, env: left(ar, env) * right(ar, env)

    def divide(ar, env):
        numerator, denominator = left(ar, env), right(ar, env)
        if ar.certainly_zero(denominator):
            raise _undefined(tree)
        return numerator / denominator
    return divide
