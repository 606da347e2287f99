#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The one-screen text summary of run_selftests.sh --coverage.

Reads lcov tracefiles (the total and one per suite), the series' diff
(pristine..HEAD~1, -U0) and the test overlay's diff (HEAD~1..HEAD, to move
line numbers onto the built tree), and prints line and branch coverage per
file, then every function the series adds or changes with the share of its
own lines that ran, "!" marking those below 90%. The functions come from the
diff: a changed line belongs to the function whose body holds it in the built
tree's source (kernel style: the body's braces in column 0). The last line
is "coverage: N functions changed, N at >=90% lines, N below".
"""
import argparse
import collections
import os
import re
import sys

TARGET = 0.9
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Record:
    """One source file's data in a tracefile, merged over its records."""

    def __init__(self):
        self.lines = collections.Counter()      # line -> count
        self.branches = collections.Counter()   # (line, block, branch) -> taken
        self.functions = {}                     # name -> first line

    def line_stats(self, first=1, last=sys.maxsize):
        found = [n for n in self.lines if first <= n <= last]
        return sum(1 for n in found if self.lines[n] > 0), len(found)

    def branch_stats(self):
        return (sum(1 for k in self.branches if self.branches[k] > 0),
                len(self.branches))


def read_info(path):
    records = collections.defaultdict(Record)
    rec = None
    with open(path) as info:
        for raw in info:
            tag, _, value = raw.rstrip("\n").partition(":")
            if tag == "SF":
                rec = records[os.path.realpath(value)]
            elif tag == "FN":
                line, name = value.split(",", 1)
                rec.functions.setdefault(name, int(line))
            elif tag == "DA":
                line, count = value.split(",")[:2]
                rec.lines[int(line)] += int(count)
                rec.lines.setdefault(int(line), 0)
            elif tag == "BRDA":
                line, block, branch, taken = value.split(",")
                key = (int(line), block, branch)
                rec.branches[key] += 0 if taken == "-" else int(taken)
                rec.branches.setdefault(key, 0)
    return records


def diff_hunks(path):
    """{file: [(old_start, old_count, new_start, new_count)]} of a -U0 diff."""
    hunks = collections.defaultdict(list)
    name = None
    with open(path, errors="replace") as diff:
        for line in diff:
            if line.startswith("+++ "):
                target = line[4:].rstrip("\n")
                name = target[2:] if target.startswith("b/") else None
                continue
            match = HUNK.match(line)
            if match and name:
                old, oldn, new, newn = match.groups()
                hunks[name].append((int(old), 1 if oldn is None else int(oldn),
                                    int(new), 1 if newn is None else int(newn)))
    return hunks


def move_line(line, hunks):
    """Line number after the overlay's hunks, None if the overlay changed it."""
    shift = 0
    for old, oldn, _, newn in hunks:
        if oldn == 0:
            if line > old:
                shift += newn
        elif line >= old + oldn:
            shift += newn - oldn
        elif line >= old:
            return None
    return line + shift


def functions_in(path):
    """[(name, first, body_open, last)] of the function definitions in a
    kernel-style C file: "{" and "}" in column 0 delimit the body, the
    signature is the run of lines above the "{" back to a blank line, a
    comment's end, a preprocessor line or the end of a statement."""
    try:
        with open(path, errors="replace") as src:
            lines = src.read().split("\n")
    except OSError:
        return []
    found = []
    for i, line in enumerate(lines):
        if not line.startswith("{"):
            continue
        j = i - 1
        while j >= 0:
            text = lines[j].rstrip()
            if (not text or text.startswith("#") or text.endswith(";")
                    or text.endswith("*/") or text.startswith("}")):
                break
            j -= 1
        signature = " ".join(lines[j + 1:i])
        match = re.search(r"([A-Za-z_]\w*)\s*\(\s*([A-Za-z_]\w*)?", signature)
        if not match:
            continue
        name = match.group(1)
        if re.match(r"(COMPAT_)?SYSCALL_DEFINE\d$", name) and match.group(2):
            name = "sys_" + match.group(2)
        found.append((name, j + 2, i + 1, body_end(lines, i) + 1))
    return found


CODE_NOISE = re.compile(r'//.*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def body_end(lines, start):
    """Index of the line that closes the body opened at lines[start],
    counting braces outside comments, strings and character constants."""
    depth = 0
    comment = False
    for k in range(start, len(lines)):
        text = lines[k]
        if comment:
            if "*/" not in text:
                continue
            text = text.split("*/", 1)[1]
            comment = False
        text = CODE_NOISE.sub("", text)
        if "/*" in text:
            text, comment = text.split("/*", 1)[0], True
        depth += text.count("{") - text.count("}")
        if depth <= 0:
            return k
    return len(lines) - 1


def changed_lines(series, overlay):
    """{file: set of built-tree lines the series added or changed}. A pure
    deletion counts as a change of the line above it when that line and the
    one below are in the same function; that is checked later."""
    changed = collections.defaultdict(set)
    deletions = collections.defaultdict(set)
    for name, hunks in series.items():
        for _, _, new, newn in hunks:
            if newn == 0:
                deletions[name].add(new)
            for line in range(new, new + newn):
                changed[name].add(line)
    moved = collections.defaultdict(set)
    moved_del = collections.defaultdict(set)
    for src, dst in ((changed, moved), (deletions, moved_del)):
        for name, lines in src.items():
            for line in lines:
                at = move_line(line, overlay.get(name, []))
                if at is not None:
                    dst[name].add(at)
    return moved, moved_del


def pct(hit, found):
    if not found:
        return "    -"
    # Rounded down, so that 89.96% does not print as 90.0 next to a "!".
    return f"{int(hit * 1000 / found) / 10:5.1f}"


def pcts(hit, found):
    return f"{pct(hit, found)}%" if found else "-"


def ratio(hit, found):
    return f"{hit:>4}/{found:<4} {pct(hit, found)}%" if found else "no data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True)
    parser.add_argument("--series-diff", required=True)
    parser.add_argument("--overlay-diff", required=True)
    parser.add_argument("--total", required=True)
    parser.add_argument("--by", action="append", default=[],
                        help="LABEL=tracefile of one suite")
    parser.add_argument("--html", default="")
    args = parser.parse_args()

    tree = os.path.realpath(args.tree)
    total = read_info(args.total)
    by = [(label, read_info(path)) for label, path in
          (item.split("=", 1) for item in args.by)]
    series = diff_hunks(args.series_diff)
    overlay = diff_hunks(args.overlay_diff)
    changed, deleted = changed_lines(series, overlay)

    def rel(path):
        return os.path.relpath(path, tree)

    print("Coverage of the series' code: KUnit suites at boot, then the selftests")
    if args.html:
        print(f"HTML report: {args.html}")
    print()

    # Per file: those the series changes in full, the others two a line.
    files = sorted(total, key=rel)
    mine = [f for f in files if rel(f) in series]
    others = [f for f in files if rel(f) not in series and f.endswith(".c")]
    print(f"{'file (* changed by the series)':34} {'lines':>16} {'branches':>16}")
    sums = [0, 0, 0, 0]
    for path in mine + others:
        lh, lf = total[path].line_stats()
        bh, bf = total[path].branch_stats()
        for k, v in enumerate((lh, lf, bh, bf)):
            sums[k] += v
    for path in mine:
        lh, lf = total[path].line_stats()
        bh, bf = total[path].branch_stats()
        print(f"* {rel(path):32} {ratio(lh, lf):>16} {ratio(bh, bf):>16}")
    cells = []
    for path in others:
        lh, lf = total[path].line_stats()
        bh, bf = total[path].branch_stats()
        cells.append(f"{rel(path):26}{pcts(lh, lf):>7} {pcts(bh, bf):>6}")
    if cells:
        print(f"  other files ({len(cells)}), lines% branches%:")
        for k in range(0, len(cells), 2):
            print("  " + "   ".join(cells[k:k + 2]))
    print(f"  {'total of these files':32} {ratio(sums[0], sums[1]):>16} {ratio(sums[2], sums[3]):>16}")
    print()

    # The functions the series adds or changes.
    rows = []
    for name in sorted(series):
        lines = changed.get(name, set())
        dels = deleted.get(name, set())
        path = os.path.join(tree, name)
        for func, first, body, last in functions_in(path):
            touched = any(first <= n <= last for n in lines) or any(
                first <= n < last for n in dels)
            if not touched:
                continue
            new = all(n in lines for n in range(first, last + 1))
            rec = total.get(os.path.realpath(path))
            hit, found = rec.line_stats(first, last) if rec else (0, 0)
            # Of those, the lines the series itself wrote.
            mine = [n for n in (rec.lines if rec else ()) if n in lines
                    and first <= n <= last]
            own = (sum(1 for n in mine if rec.lines[n] > 0), len(mine))
            suites = []
            for _, records in by:
                r = records.get(os.path.realpath(path))
                suites.append(r.line_stats(first, last) if r else (0, 0))
            why = ""
            if not found:
                why = "file not profiled" if rec is None else "no line records: inlined"
            rows.append((name, func, first, new, hit, found, own, suites, why))

    labels = [label for label, _ in by]
    print("functions the series adds (+) or changes (~): the share of their own "
          "lines run, ! below 90%;")
    print("changed: of those the lines the series wrote; then the share run by "
          "each suite alone")
    head = f"  {'function':24} {'file:line':24} {'lines run':>16} {'changed':>8}"
    for label in labels:
        head += f" {label:>9}"
    print(head)
    good = nodata = 0
    for name, func, first, new, hit, found, own, suites, why in rows:
        ok = found and hit * 10 >= found * 9
        good += 1 if ok else 0
        nodata += 0 if found else 1
        mark = ("+" if new else "~") + (" " if ok else "!")
        row = (f"{mark}{func:24} {name + ':' + str(first):24} {ratio(hit, found):>16}"
               f" {pcts(*own):>8}")
        for shit, sfound in suites:
            row += f" {pcts(shit, sfound):>9}"
        if why:
            row += f"  ({why})"
        print(row)
    print(f"coverage: {len(rows)} functions changed, {good} at >=90% lines, "
          f"{len(rows) - good} below" +
          (f" ({nodata} of them without line data)" if nodata else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
