#!/usr/bin/env python3
"""docs/patterns.md's table of patterns is the code's table, word for word (issue 9).

    check_pattern_table.py REPO             # compare
    check_pattern_table.py --selftest REPO  # the comparison must catch drift

The code: the codes and "recognised by" strings of src/analysis/pattern.c, the hints of
src/render/pattern_words.c, in the order of enum sd_pattern (include/snapdiff/pattern.h,
the precedence). docs/patterns.md: the rows "| `code` | recognised by | hint |" of its
table (the page's one table). Every code must be in both, in the same order, with
the same wording; adjacent C string literals are joined as the compiler joins them.
"""
import os
import re
import shutil
import sys
import tempfile

DOC = "docs/patterns.md"
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


def doc_table(root):
    with open(os.path.join(root, DOC)) as f:
        section = f.read()
    return [(m.group(1), m.group(2).strip(), m.group(3).strip())
            for m in re.finditer(r"^\| `([a-z-]+)` \|([^|]*)\|([^|]*)\|$", section, re.M)]


def selftest(root):
    """Copies of the four files with one drift each: every one must fail."""
    files = [DOC, "include/snapdiff/pattern.h", "src/analysis/pattern.c",
             "src/render/pattern_words.c"]
    first = doc_table(root)[0]
    drifts = [(DOC, "| `%s` |" % first[0], "| `%s-x` |" % first[0]),
              (DOC, first[2] + " |", first[2] + " now |"),
              ("src/render/pattern_words.c", "\"the", "\"The"),
              ("src/analysis/pattern.c", "\"the blocks", "\"all blocks")]
    bad = 0
    for path, old, new in drifts:
        with tempfile.TemporaryDirectory() as tmp:
            for f in files:
                os.makedirs(os.path.dirname(os.path.join(tmp, f)), exist_ok=True)
                shutil.copy(os.path.join(root, f), os.path.join(tmp, f))
            with open(os.path.join(tmp, path)) as f:
                text = f.read()
            if old not in text:
                print("selftest: %r not in %s" % (old, path))
                bad = 1
                continue
            with open(os.path.join(tmp, path), "w") as f:
                f.write(text.replace(old, new, 1))
            saved = sys.stdout
            sys.stdout = open(os.devnull, "w")
            try:
                caught = compare(tmp) != 0
            finally:
                sys.stdout.close()
                sys.stdout = saved
            if not caught:
                print("selftest: drift in %s (%r -> %r) not caught" % (path, old, new))
                bad = 1
    print("check_pattern_table --selftest: %s" % ("FAILED" if bad else "every drift caught"))
    return bad


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--selftest":
        return selftest(sys.argv[2] if len(sys.argv) > 2 else ".")
    return compare(sys.argv[1] if len(sys.argv) > 1 else ".")


def compare(root):
    code, doc = code_table(root), doc_table(root)
    bad = 0
    if [c[0] for c in code] != [r[0] for r in doc]:
        print("codes differ (order is the precedence):\n  code:   %s\n  docs:   %s"
              % ([c[0] for c in code], [r[0] for r in doc]))
        bad = 1
    for c, r in zip(code, doc):
        for what, x, y in (("recognised by", c[1], r[1]), ("hint", c[2], r[2])):
            if c[0] == r[0] and x != y:
                print("%s: %s differs\n  code:   %s\n  docs:   %s" % (c[0], what, x, y))
                bad = 1
    if len(code) < 2:
        print("check_pattern_table: found no table in the code")
        bad = 1
    if not bad:
        print("check_pattern_table: docs/patterns.md's %d patterns match the code" % len(code))
    return bad


if __name__ == "__main__":
    sys.exit(main())
