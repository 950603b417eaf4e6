"""The independent oracle for holonomic operators (issue 4 item 5).

Compares the ODE operators slic-holonomic computes for continuous factors with SymPy's
`expr_to_holonomic`, an implementation written independently of ours. For each factor
below (a Hakaru program whose LAST `fn` parameter is the variable), the example binary
`holonomic/examples/operators.rs` prints our operator's coefficients in SymPy syntax;
this script then checks, with SymPy:

  1. our operator annihilates the factor: sum_k c_k f^(k) simplifies to 0 (or, where
     simplification stalls, vanishes at several random points to 40 digits);
  2. SymPy's operator annihilates it too (SymPy is checked as well: it answers
     `x**x` with the operator of `e^x`, so its answer is not taken on trust);
  3. both have the same order, and the same coefficient ratios c_k / c_n as rational
     functions of the variable (`cancel` of the difference is 0).

Factors listed as not holonomic must give a miss on our side, and SymPy must either
refuse them or answer with an operator that does not annihilate them.

Run through `tests/oracle/run` (which installs the pinned SymPy in a venv); prints one
line per factor and closes with `N passed, M failed`; exits 1 on any failure.
"""

import json
import os
import random
import subprocess
import sys

import sympy
from sympy import Symbol, cancel, diff, simplify, together
from sympy.holonomic import expr_to_holonomic
from sympy.parsing.sympy_parser import parse_expr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Factors with a holonomic operator of order 1 (products, quotients, powers, exp of
# polynomials, polynomial and rational factors, x^a, (1-x)^b, constants free of the
# variable including array entries, sums over other indices and conditionals) or of
# order 2 (sums of two hyperexponential terms).
HOLONOMIC = [
    "fn x real: exp(-x^2/2)",
    "fn mu real: fn x real: exp(-(x - mu)^2/2)",
    "fn mu real: fn s prob: fn x real: exp(-(x - mu)^2/(2*s^2)) / s",
    # the paper's eq. (7): prior and observation factor in z
    "fn mu real: fn y real: fn z real: exp(-(z - mu)^2/2) * exp(-(y - z)^2/2)",
    "fn mu real: fn y real: fn x real: exp(-(x - mu)^2/2 - (y - x)^2/2)",
    "fn m0 real: fn s0 prob: fn y1 real: fn y2 real: fn y3 real: fn mu real: "
    "exp(-(mu - m0)^2/(2*s0^2)) * exp(-(y1 - mu)^2/2) * exp(-(y2 - mu)^2/2) * exp(-(y3 - mu)^2/2)",
    "fn a prob: fn b prob: fn x real: exp(-(x - a)^2/(2*b))",
    "fn mu real: fn x real: 3 * pi * exp(-(x - mu)^2/2)",
    "fn c real: fn x real: exp(-(x - c)^2) * exp(x)",
    "fn x real: exp(3*x - x^2)",
    "fn x real: exp(x^3)",
    "fn x real: exp(x - x^4)",
    "fn a real: fn x real: exp(a * x) * x^2",
    "fn x real: x^2 * exp(-x^2)",
    "fn x real: (x^2 + 1) * exp(-x)",
    "fn x real: (x^2 + 1)^3",
    "fn x real: (x - 1)^2 / (x^2 + 2)",
    "fn x real: 1 / (1 + x^2)",
    "fn x real: 1 / (1 + x^2/3)^2",
    "fn nu prob: fn x real: real2prob(1 + x^2/nu) ** (-(nu + 1)/2)",
    "fn a prob: fn b prob: fn x prob: x ** (a - 1) * exp(-x / b)",
    "fn a prob: fn b prob: fn x prob: x ** (a - 1) * real2prob(1 - x) ** (b - 1)",
    "fn l prob: fn x prob: l * exp(-l * x)",
    "fn b prob: fn x prob: x^2 * exp(-x / b) / b^3",
    "fn x prob: x ** (3/2) * exp(-2 * x)",
    "fn x prob: sqrt(x) * exp(-x)",
    "fn x prob: x ** (1/3) * exp(-x)",
    "fn a prob: fn x prob: x ** a * exp(-x^2)",
    "fn x prob: x^2 * real2prob(1 - x)^3",
    "fn s array(real): fn x real: exp(-(x - s[0])^2/2)",
    "fn n nat: fn y array(real): fn x real: exp(-x^2 * (summate j from 0 to n: y[j])^2)",
    "fn m real: fn x real: exp(-x^2) * (if m < 0: 2 else: 3)",
    "fn x real: exp(x) + exp(2*x)",
    "fn x real: exp(-x^2/2) + exp(-(x - 1)^2/2)",
    "fn x prob: exp(-x/2) + exp(-x/3)",
]

# Factors with no holonomic operator of the kinds above.
NOT_HOLONOMIC = [
    "fn x real: 1 / (1 + exp(x))",
    "fn x prob: x ** x",
    "fn x real: exp(exp(x))",
]

FUNCTIONS = {
    name: getattr(sympy, name)
    for name in [
        "exp", "log", "sqrt", "Abs", "sign", "floor", "erf", "binomial", "gamma",
        "beta", "Min", "Max", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "asinh", "acosh", "atanh", "pi", "oo",
    ]
}

ASSUMPTIONS = {
    "positive": {"positive": True},
    "nonnegative_integer": {"integer": True, "nonnegative": True},
    "integer": {"integer": True},
    "real": {"real": True},
}


def our_operators(programs):
    """Run the example binary on the programs; one JSON answer per program."""
    cmd = ["cargo", "run", "-q", "-p", "slic-holonomic", "--example", "operators"]
    done = subprocess.run(
        cmd, cwd=ROOT, input="\n".join(programs) + "\n", capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit("the operators example failed")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(programs):
        raise SystemExit(f"{len(programs)} programs but {len(answers)} answers")
    return answers


def parse(text, names):
    return parse_expr(text, local_dict=dict(FUNCTIONS, **names))


def apply(coeffs, f, x):
    return sum(c * diff(f, x, k) for k, c in enumerate(coeffs))


def numerically_zero(expr, f, symbols, rng):
    """`expr / f` vanishes at five random points (40 significant digits)."""
    ratio = expr / f
    for _ in range(5):
        point = {}
        for s in symbols:
            if s.is_integer:
                point[s] = rng.randint(1, 4)
            elif s.is_positive:
                point[s] = sympy.Rational(rng.randint(1, 90), rng.randint(91, 120))
            else:
                point[s] = sympy.Rational(rng.randint(-90, 90), rng.randint(91, 120))
        v = ratio.subs(point).evalf(40)
        if not v.is_number or abs(v) > 1e-30:
            return False
    return True


def annihilates(coeffs, f, x, symbols, rng):
    expr = apply(coeffs, f, x)
    if cancel(together(expr / f)) == 0 or simplify(expr / f) == 0:
        return True
    return numerically_zero(expr, f, symbols, rng)


def sympy_operator(f, x):
    """SymPy's annihilator as a list of coefficients, or None when it refuses."""
    try:
        h = expr_to_holonomic(f, x)
    except Exception:  # SymPy refuses with several exception types
        return None
    ring = h.annihilator.parent.base
    return [ring.to_sympy(p) for p in h.annihilator.listofpoly]


def same_ratios(ours, theirs):
    n = len(ours) - 1
    return all(
        cancel(together(ours[k] / ours[n] - theirs[k] / theirs[n])) == 0
        for k in range(n + 1)
    )


def check(answer, holonomic, rng):
    """(ok, message) for one factor."""
    if "error" in answer:
        return False, "not read: " + answer["error"]
    names = {
        name: Symbol(name, **ASSUMPTIONS[kind]) for name, kind in answer["symbols"].items()
    }
    x = names[answer["var"]]
    f = parse(answer["f"], names)
    symbols = list(names.values())
    theirs = sympy_operator(f, x)
    theirs_valid = theirs is not None and annihilates(theirs, f, x, symbols, rng)
    if not holonomic:
        if "miss" not in answer:
            return False, f"ours gives an operator of order {answer['order']} for a non-holonomic factor"
        if theirs_valid:
            return False, "SymPy finds a valid operator where we miss"
        note = "SymPy refuses" if theirs is None else "SymPy's answer does not annihilate it"
        return True, f"miss ({answer['miss']}); {note}"
    if "miss" in answer:
        return False, f"ours: miss {answer['miss']}"
    ours = [parse(c, names) for c in answer["coeffs"]]
    if not annihilates(ours, f, x, symbols, rng):
        return False, "our operator does not annihilate the factor"
    if not theirs_valid:
        return False, "SymPy has no valid operator to compare with"
    if len(ours) != len(theirs):
        return False, f"order {len(ours) - 1}, SymPy's {len(theirs) - 1}"
    if not same_ratios(ours, theirs):
        return False, "coefficient ratios differ from SymPy's"
    return True, f"order {len(ours) - 1}, annihilates, ratios equal SymPy's"


def main():
    print(f"SymPy {sympy.__version__}")
    rng = random.Random(4)
    cases = [(p, True) for p in HOLONOMIC] + [(p, False) for p in NOT_HOLONOMIC]
    answers = our_operators([p for p, _ in cases])
    passed = failed = 0
    for (program, holonomic), answer in zip(cases, answers):
        ok, message = check(answer, holonomic, rng)
        print(f"{'ok  ' if ok else 'FAIL'} {program}\n     {message}")
        if ok:
            passed += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
