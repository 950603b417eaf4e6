#!/usr/bin/env python3
"""Writes the three generated files of corpus/bad/ (deterministic, stdlib only).

Run from anywhere: `python3 corpus/bad/generate.py`. The outputs are committed too;
rerunning must reproduce them byte for byte.

- nonutf8.hk: a well-formed program whose comment holds bytes that are not UTF-8.
- deep-nesting.hk: `return` of 1 wrapped in 20,000 pairs of parentheses: a reader
  must refuse it with a depth-limit error, never overflow its stack.
- long-line.hk: `return 1 + 1 + ... + 1` with 100,000 terms on one line: valid; it
  must give return 100000 (flat operator chains, no deep recursion).
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
DEPTH = 20_000
TERMS = 100_000


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as fh:
        fh.write(data)


def main():
    write(
        "nonutf8.hk",
        b"# expect: not valid utf-8\n"
        b"# why: the comment on line 4 holds the bytes 0xff 0xfe, which are not valid UTF-8;\n"
        b"#   the file must be refused with a clear encoding error, not a panic or garbage\n"
        b"# a comment with bad bytes: \xff\xfe here\n"
        b"fn x real:\n"
        b"    y <~ normal(x, 1)\n"
        b"    return y\n",
    )
    write(
        "deep-nesting.hk",
        b"# expect: nests too deeply\n"
        b"# why: 20,000 nested parentheses; the reader must stop at its depth limit with an\n"
        b"#   error, never overflow the stack\n"
        + b"return "
        + b"(" * DEPTH
        + b"1"
        + b")" * DEPTH
        + b"\n",
    )
    write(
        "long-line.hk",
        b"# expect: ok\n"
        b"# why: valid: one line holding a sum of 100,000 terms; it must parse and simplify to\n"
        b"#   return 100000 (a flat chain: no recursion per operand)\n"
        + b"return "
        + b" + ".join([b"1"] * TERMS)
        + b"\n",
    )


if __name__ == "__main__":
    main()
