#!/usr/bin/env python3
"""README's table of patterns is the code's table, word for word (issue 9).

    check_pattern_table.py REPO

The code: the codes and "recognised by" strings of src/analysis/pattern.c, the hints of
src/render/pattern_words.c, in the order of enum sd_pattern (include/snapdiff/pattern.h,
the precedence). README.md: the rows "| `code` | recognised by | hint |" under
"### The diff: patterns and hints". Every code must be in both, in the same order, with
the same wording; adjacent C string literals are joined as the compiler joins them.
"""
import re
import sys

LIT = r'((?:\s*"(?:[^"\\]|\\.)*")+)'


def joined(literals):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literals)).replace('\\"', '"')


def code_table(root):
    with open(root + "/include/snapdiff/pattern.h") as f:
        order = [n for n in re.findall(r"^\s*SD_PATTERN_(\w+),", f.read(), re.M)
                 if n not in ("NONE", "COUNT")]
    with open(root + "/src/analysis/pattern.c") as f:
        rows = {m.group(1): (joined(m.group(2)), joined(m.group(3)))
                for m in re.finditer(r"\[SD_PATTERN_(\w+)\]\s*=\s*\{" + LIT + r"\s*," + LIT
                                     + r"\s*\}", f.read())}
    with open(root + "/src/render/pattern_words.c") as f:
        hints = {m.group(1): joined(m.group(2))
                 for m in re.finditer(r"\[SD_PATTERN_(\w+)\]\s*=\s*" + LIT + r"\s*,", f.read())}
    out = []
    for name in order:
        if name not in rows or name not in hints:
            sys.exit("check_pattern_table: SD_PATTERN_%s has no code or no hint" % name)
        out.append((rows[name][0], rows[name][1], hints[name]))
    return out


def readme_table(root):
    with open(root + "/README.md") as f:
        text = f.read()
    at = text.find("### The diff: patterns and hints")
    if at < 0:
        sys.exit("check_pattern_table: README.md has no '### The diff: patterns and hints'")
    section = text[at:text.find("\n### ", at + 1)]
    return [(m.group(1), m.group(2).strip(), m.group(3).strip())
            for m in re.finditer(r"^\| `([a-z-]+)` \|([^|]*)\|([^|]*)\|$", section, re.M)]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    code, readme = code_table(root), readme_table(root)
    bad = 0
    if [c[0] for c in code] != [r[0] for r in readme]:
        print("codes differ (order is the precedence):\n  code:   %s\n  README: %s"
              % ([c[0] for c in code], [r[0] for r in readme]))
        bad = 1
    for c, r in zip(code, readme):
        for what, x, y in (("recognised by", c[1], r[1]), ("hint", c[2], r[2])):
            if c[0] == r[0] and x != y:
                print("%s: %s differs\n  code:   %s\n  README: %s" % (c[0], what, x, y))
                bad = 1
    if len(code) < 2:
        print("check_pattern_table: found no table in the code")
        bad = 1
    if not bad:
        print("check_pattern_table: README's %d patterns match the code" % len(code))
    return bad


if __name__ == "__main__":
    sys.exit(main())
