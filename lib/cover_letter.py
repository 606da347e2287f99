#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill docs/cover-letter.in with measured figures from the results folders.

  cover_letter.py TEMPLATE OUT_DIR SOURCE_VERSION SHORTLOG_FILE > letter

Every @NAME@ in the template is replaced by a figure read from the newest
results folder of its kind under OUT_DIR (what the runners wrote there), and
the letter says which folder each figure came from. A figure whose results
are missing is reported on stderr and the exit status is 1.
"""
import glob
import os
import re
import subprocess
import sys


def newest(out_dir, pattern):
    """The newest results folder matching pattern (by name: they are dated)."""
    found = sorted(glob.glob(os.path.join(out_dir, pattern)))
    found = [d for d in found if os.path.isdir(d) and not os.path.islink(d)]
    return found[-1] if found else None


def last_line(path, prefix):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.startswith(prefix)]
    except OSError:
        return None
    return lines[-1] if lines else None


def totals(out_dir, pattern, filename, prefix):
    folder = newest(out_dir, pattern)
    if not folder:
        return None
    line = last_line(os.path.join(folder, filename), prefix)
    if not line:
        return None
    return f"{line[len(prefix):].strip()}  ({os.path.basename(folder)})"


def bench_section(out_dir, program):
    """One benchmark program's output from the newest --bench run."""
    folder = newest(out_dir, "bench-2*")
    if not folder:
        return None
    try:
        text = open(os.path.join(folder, "bench.txt"), errors="replace").read()
    except OSError:
        return None
    # bench.txt: each program's output, then "(<name> rc=N)".
    chunks = re.split(r"^\((\S+) rc=(\d+)\)$", text, flags=re.M)
    for i in range(1, len(chunks) - 1, 3):
        if chunks[i] == program and chunks[i + 1] == "0":
            body = chunks[i - 1].strip("\n")
            return "\n".join("  " + l for l in body.splitlines()) + \
                f"\n  ({os.path.basename(folder)})"
    return None


def sendfile_many(out_dir):
    """sendfile_many's summary line from the newest plain selftest run."""
    folder = newest(out_dir, "selftests-2*")
    if not folder:
        return None
    try:
        text = open(os.path.join(folder, "console.log"), errors="replace").read()
    except OSError:
        return None
    # ksft_print_msg() under run_kselftest.sh: "# # 10000 sendfiles of ..."
    found = re.findall(r"^(?:# )+(\d+ sendfiles of .*)$", text, flags=re.M)
    result = re.findall(r"^(ok|not ok) \d+ selftests: io_uring: sendfile_many", text,
                        flags=re.M)
    if not found or not result:
        return None
    return f"{result[-1]}: {found[-1].strip()}  ({os.path.basename(folder)})"


def coverage(out_dir):
    folder = newest(out_dir, "selftests-coverage-2*")
    if not folder:
        return None
    try:
        text = open(os.path.join(folder, "coverage.txt"), errors="replace").read()
    except OSError:
        return None
    # the HTML report's path is this machine's, not the reader's
    lines = [l for l in text.strip("\n").splitlines()
             if not l.startswith("HTML report: ")]
    return "\n".join("  " + l for l in lines) + \
        f"\n  ({os.path.basename(folder)})"


def man_page(repo):
    env = dict(os.environ, MANWIDTH="72")
    page = subprocess.run(["man", "-l", os.path.join(repo, "docs/io_uring_enter-series.2")],
                          capture_output=True, text=True, env=env, check=True).stdout
    plain = subprocess.run(["col", "-b"], input=page, capture_output=True,
                           text=True, check=True).stdout
    return "\n".join(("  " + l).rstrip() for l in plain.splitlines())


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    template, out_dir, version, shortlog = argv[1:]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(template)))
    figures = {
        "SOURCE_VERSION": version,
        "BENCH_COMMAND": "./run_selftests.sh --bench",
        "SPLICE_BENCH": bench_section(out_dir, "splice_bench"),
        "PROXY_BENCH": bench_section(out_dir, "proxy_bench"),
        "IOCTL_BENCH": bench_section(out_dir, "ioctl_bench"),
        "KUNIT_TOTALS": totals(out_dir, "kunit-2*", "summary.txt", "kunit:"),
        "KUNIT_DEBUG_TOTALS": totals(out_dir, "kunit-debug-2*", "summary.txt", "kunit:"),
        "SELFTESTS_TOTALS": totals(out_dir, "selftests-2*", "results.txt", "selftests:"),
        "SELFTESTS_DEBUG_TOTALS": totals(out_dir, "selftests-debug-2*", "results.txt",
                                         "selftests:"),
        "SELFTESTS_PRISTINE_TOTALS": totals(out_dir, "selftests-pristine-2*",
                                            "results.txt", "selftests:"),
        "LIBURING_TOTALS": totals(out_dir, "liburing-2*", "results.txt", "liburing:"),
        "LIBURING_PRISTINE_TOTALS": totals(out_dir, "liburing-pristine-2*", "results.txt",
                                           "liburing:"),
        "SENDFILE_MANY": sendfile_many(out_dir),
        "COVERAGE": coverage(out_dir),
        "MAN_PAGE": man_page(repo),
        "SIGNER": os.environ.get("IOU_SIGNER"),
    }
    text = open(template).read()
    missing = []

    def fill(match):
        value = figures.get(match.group(1))
        if value is None:
            missing.append(match.group(1))
            return f"[{match.group(1)}: not measured]"
        return value

    text = re.sub(r"@([A-Z_]+)@", fill, text)
    sys.stdout.write(text)
    sys.stdout.write("\n" + open(shortlog).read())
    for name in missing:
        print(f"cover letter: no results for @{name}@", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
