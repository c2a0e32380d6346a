"""The formulas of claims and bounds, evaluated in balls: the restricted grammar of certify's bounds (numbers read
exactly, + - * / **, exp log sqrt tanh sinh cosh min max), compiled once per text.  Inequality certificates, the
windows of Wu et al.'s claims and region proofs (on region_bounds.Dual, intervals with a slope) evaluate them here.
"""

from __future__ import annotations

import ast
import functools
import operator
from fractions import Fraction

from flint import arb

from certify_checker import centred
from certify_checker.exact import ball, rational


FUNCTIONS = {"exp", "log", "sqrt", "tanh", "sinh", "cosh", "min", "max"}
MAX_POWER = 1024


def _real_power(base, exponent):
    """x ** y for y neither a constant integer >= 0 (products) nor a positive rational constant (_positive_power):
    exp(y log x), not finite where a ball of x reaches 0 or below."""
    return (exponent * base.log()).exp()


def _positive_power(base, exponent):
    """x ** y for a positive rational constant y (not a whole number written as one): defined for x >= 0 as
    sqrt is, 0 ** y = 0 at an exact 0 (a bound's D = 0), else exp(y log x)."""
    if not isinstance(base, arb):  # a region proof's jet (region_bounds.Dual): its own rule, p x**(p - 1)
        return base.power(exponent)
    return base if base == 0 else _real_power(base, exponent)


OPERATIONS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: _real_power}


def evaluate(text: str, env, expm1: bool = True) -> arb:
    """Evaluate a formula of the restricted grammar (numbers exact, ** with integer powers by products); expm1: 1 - exp(u)
    as -expm1(u) (_one_minus_exp), else as the subtraction it is written as (what certificates written before certify
    evaluated it so state: inequality.verify judges their accuracy by it)."""
    return _compiled(text.strip(), expm1)(env)


@functools.lru_cache(maxsize=256)
def _compiled(source: str, expm1: bool):
    """The formula as a function of env, built once per text (the claims' formulas recur in every
    certificate): each node of its syntax tree becomes a closure over its operands' closures."""
    return _compile(ast.parse(source, mode="eval").body, source, expm1)


def _compile(node, source: str, expm1: bool):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        number = ast.get_source_segment(source, node)  # read exactly, not as binary64
        return lambda env: ball(number)
    if (value := _rational_constant(node, source)) is not None:  # numbers alone read exactly, as one number, as
        return lambda env: ball(value)  # certify does: 1/3 - 1/3 is the exact 0 (whose root is 0), not a ball around it
    if isinstance(node, ast.Name):
        name = node.id
        return lambda env: env(name)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _compile(node.operand, source, expm1)
        return (lambda env: -operand(env)) if isinstance(node.op, ast.USub) else operand
    if expm1 and _one_minus_exp(node, source):
        exponent = _compile(node.right.args[0], source, expm1)
        return lambda env: _one_minus_exp_of(exponent(env))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATIONS:
        left, power = _compile(node.left, source, expm1), node.right
        if (isinstance(node.op, ast.Pow) and isinstance(power, ast.Constant) and type(power.value) is int
                and power.value >= 0):
            if power.value > MAX_POWER:  # a product per unit of the exponent: D**10**9 would never end
                raise ValueError(f"formula {source!r}: exponent {power.value} above {MAX_POWER}")
            return lambda env: _power(left(env), power.value)
        right, operation = _compile(power, source, expm1), OPERATIONS[type(node.op)]
        if isinstance(node.op, ast.Pow) and (constant := _rational_constant(power, source)) is not None:
            if abs(constant) > MAX_POWER:
                raise ValueError(f"formula {source!r}: exponent {constant} above {MAX_POWER} in absolute value")
            operation = _positive_power if constant > 0 else operation
        return lambda env: operation(left(env), right(env))  # arguments run left to right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        name, args = node.func.id, [_compile(a, source, expm1) for a in node.args]
        if name in ("min", "max"):
            return lambda env: _extremum(name, [arg(env) for arg in args])
        (arg,) = args
        return lambda env: getattr(arg(env), name)()
    raise ValueError(f"formula {source!r}: {ast.dump(node)[:60]} is not allowed")


def _one_minus_exp(node, source: str) -> bool:
    """1 - exp(u): evaluated as -expm1(u), as certify evaluates it (certify.core.expr), so that (1 - exp(-a D^2)) D
    keeps its relative accuracy where a D^2 is far below 2^-precision (a stack collapsed to D_t ~ 10^-30000).  The 1
    read exactly: 1.0000000000000000001 is 1.0 in binary64, and read as 1 it made a false bound hold."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.right, ast.Call)
            and isinstance(node.right.func, ast.Name) and node.right.func.id == "exp" and len(node.right.args) == 1
            and not node.right.keywords and isinstance(node.left, ast.Constant)
            and _rational_constant(node.left, source) == 1)


def _one_minus_exp_of(x):
    """1 - exp(x): -expm1(x) of a ball; of a region proof's jet (region_bounds.Dual) by exp's own rule."""
    return -centred.expm1(x) if isinstance(x, arb) else 1 - x.exp()


def _rational_constant(node, source: str) -> Fraction | None:
    """The exact value of numbers under unary minus and + - * / (0.5, 1/2, -3/2), else None (a name, a call,
    a power, or a division by zero)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return rational(ast.get_source_segment(source, node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _rational_constant(node.operand, source)
        return None if inner is None else -inner if isinstance(node.op, ast.USub) else inner
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))):
        return None
    left, right = _rational_constant(node.left, source), _rational_constant(node.right, source)
    if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
        return None
    return OPERATIONS[type(node.op)](left, right)


def _power(base, exponent: int):
    """base ** exponent as repeated products (exponent <= MAX_POWER).  x**0 is 1 only where x is defined, as in
    certify (x * 0 + 1): a base that is not finite (log(-1), 1/0) stays so, or log(-1)**0*D read as D."""
    if exponent == 0:
        return base * 0 + 1
    result = arb(1)
    for _ in range(exponent):
        result = result * base
    return result


def _extremum(name: str, values: list):
    result = values[0]
    for value in values[1:]:
        if not isinstance(value, arb):  # a number type of the caller's (region proofs' Dual) leads
            result, value = value, result
        result = result.min(value) if name == "min" else result.max(value)
    return result
