#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which tests a run failed, and whether a mutation was caught exactly.

    mutation_check.py failures [--kunit KUNIT_JSON] [--console CONSOLE_LOG]
    mutation_check.py check PATCH [--kunit KUNIT_JSON] [--console CONSOLE_LOG]

A test is named "kunit SUITE.CASE" (a parameterised case fails if any of
its rows does) or "selftest PROGRAM CASE" (a case inside a kselftest
program) or "selftest PROGRAM" (a program that failed as a whole). The
"Must-fail:" lines of a mutation patch name the tests it must fail.

"check" prints CAUGHT when every must-fail test failed and nothing else
did, EXTRA when others failed too, NOT-CAUGHT when a must-fail test
passed, and INFRA when a result file is missing or holds no result (a
build error, a guest that did not finish); the exit status is 0 for
CAUGHT only. A program-level failure is expected when one of its cases is.
A patch with a "Not-caught:" line and no "Must-fail:" line (a known gap:
no test catches it) is NOT-CAUGHT when nothing failed, EXTRA otherwise.
"May-fail:" lines name tests whose failure is neither required nor extra:
randomised ones (a fuzzer's or a differential test's random run) that may
or may not meet the mutation in the time they have.
"""
import json
import re
import sys

# kselftest runner lines: "# not ok 3 case" inside a program,
# "not ok 8 selftests: io_uring: prog" for the program itself.
SUB_RESULT = re.compile(r"^# (not ok|ok) \d+ (\S+)")
PROGRAM_RESULT = re.compile(r"^(not ok|ok) \d+ selftests: (\S+): (\S+)")
# a program given with --run: its own TAP between these lines
EXTRA_BEGIN = re.compile(r"^IOU-RUN-BEGIN (\S+)")
EXTRA_RESULT = re.compile(r"^(not ok|ok) \d+ (\S+)")
EXTRA_END = re.compile(r"^IOU-RUN-END (\S+) rc=(\d+)")
MUST_FAIL = re.compile(r"^Must-fail: (kunit \S+|selftest \S+(?: \S+)?)\s*$")
MAY_FAIL = re.compile(r"^May-fail: (kunit \S+|selftest \S+(?: \S+)?)\s*$")


def kunit_failures(path):
    with open(path, encoding="utf-8") as f:
        root = json.load(f)
    failed, seen = set(), 0
    for suite in root.get("sub_groups", []):
        for case in suite.get("test_cases", []):
            seen += 1
            if case.get("status") not in ("PASS", "SKIP"):
                failed.add(f"kunit {suite['name']}.{case['name']}")
        for group in suite.get("sub_groups", []):  # parameterised cases
            seen += 1
            statuses = {c.get("status") for c in group.get("test_cases", [])}
            if statuses - {"PASS", "SKIP"} or not statuses:
                failed.add(f"kunit {suite['name']}.{group['name']}")
    if not seen:
        raise ValueError(f"{path}: no KUnit results")
    return failed


def selftest_failures(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [line.rstrip("\r\n") for line in f]
    failed, pending, programs, extra = set(), [], 0, None
    for line in lines:
        if extra:
            end = EXTRA_END.match(line)
            if end:
                programs += 1
                if end.group(2) != "0":
                    failed.add(f"selftest {extra}")
                extra = None
                continue
            res = EXTRA_RESULT.match(line)
            if res and res.group(1) == "not ok":
                failed.add(f"selftest {extra} {res.group(2)}")
            continue
        begin = EXTRA_BEGIN.match(line)
        if begin:
            extra = begin.group(1)
            continue
        sub = SUB_RESULT.match(line)
        if sub:
            if sub.group(1) == "not ok":
                pending.append(sub.group(2))
            continue
        prog = PROGRAM_RESULT.match(line)
        if prog:
            programs += 1
            name = prog.group(3)
            failed.update(f"selftest {name} {case}" for case in pending)
            if prog.group(1) == "not ok":
                failed.add(f"selftest {name}")
            pending = []
    if not programs:
        raise ValueError(f"{path}: no selftest results")
    return failed


def failures(args):
    failed = set()
    if args.get("kunit"):
        failed |= kunit_failures(args["kunit"])
    if args.get("console"):
        failed |= selftest_failures(args["console"])
    return failed


def named(path, pattern):
    with open(path, encoding="utf-8") as f:
        return {m.group(1) for m in map(pattern.match, f) if m}


def not_caught(path):
    with open(path, encoding="utf-8") as f:
        return any(line.startswith("Not-caught: ") for line in f)


def parse(argv):
    args, rest = {}, []
    while argv:
        opt = argv.pop(0)
        if opt in ("--kunit", "--console"):
            args[opt[2:]] = argv.pop(0)
        else:
            rest.append(opt)
    return args, rest


def main(argv):
    if not argv or argv[0] not in ("failures", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    args, rest = parse(argv[1:])
    try:
        failed = failures(args)
    except (OSError, ValueError) as err:
        print(f"INFRA: {err}")
        return 1
    if argv[0] == "failures":
        for name in sorted(failed):
            print(name)
        return 0
    expected = named(rest[0], MUST_FAIL)
    allowed = named(rest[0], MAY_FAIL)
    if not expected and not_caught(rest[0]):
        # a known gap: no test catches it (yet)
        for name in sorted(failed):
            print(f"  failed, not listed: {name}")
        print("EXTRA" if failed else "NOT-CAUGHT")
        return 1
    if not expected:
        print(f"INFRA: {rest[0]} names no Must-fail: test")
        return 1
    # a failing case fails its program too
    programs = {" ".join(e.split()[:2]) for e in expected | allowed
                if e.startswith("selftest ")}
    missed = sorted(expected - failed)
    extra = sorted(failed - expected - programs - allowed)
    for name in missed:
        print(f"  passed, must fail: {name}")
    for name in extra:
        print(f"  failed, not listed: {name}")
    if missed:
        print("NOT-CAUGHT")
        return 1
    if extra:
        print("EXTRA")
        return 1
    print("CAUGHT")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
