#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a QEMU guest's console log: kernel splats, kselftest TAP results and
the results of extra programs run with --run; and KUnit's results.

  guest_log.py splats LOG...   print each splat with its backtrace; exit 1
                               if there is any
  guest_log.py selftests LOG [--expect LIST] [--allowed-skips FILE]
               [--patched] [--cpus N] [--kmsg KMSG]
                               print every result, the splats and the final
                               "selftests: N passed, N failed, N skipped"
                               line; exit 1 on any failure, splat, panic or
                               missing end marker; a program fails on a
                               "not ok" line anywhere in its output (nested
                               or indented, --run programs' too), whatever
                               its exit status; with --expect (kselftest-
                               list.txt), on a program without a result, an
                               incomplete TAP plan or a runner exit status
                               missing or non-zero; with --allowed-skips
                               (lib/selftest-skips, patched runs), on a skip
                               it does not list (a program's exit 4, --run
                               programs' included, or a case's "# SKIP");
                               with --patched (the series is applied), on
                               an "ok ... # XFAIL" (6.12's known failure);
                               with --cpus, when the guest brought up
                               another number of CPUs (IOU-GUEST-CPUS);
                               KMSG (kmsg.log, the kernel's messages as the
                               guest ran) is read for splats too
  guest_log.py bench LOG [--kmsg KMSG]
                               the same for a --bench run, whose programs
                               are the benchmarks; ends "bench: ..."
  guest_log.py liburing LOG --known FILE --results TSV [--baseline TSV]
               [--timeout SECS] [--version VER] [--kmsg KMSG] [--cpus N]
                               run_selftests.sh --liburing: each liburing
                               test's result (a splat in the kernel messages
                               after a test fails it), the gate, and
                               "liburing: N passed, N failed, N skipped";
                               writes the results to TSV. The gate fails on a
                               failure that --known does not list and, with
                               --baseline (a pristine run's TSV), on a test
                               that passed there and fails here; with KMSG,
                               on a splat there that no test's dmesg has.
                               A fail or flaky entry of --known is matched
                               by the test's exit status and its whole
                               output: the lines the entry pins, in that
                               order, and no other
  guest_log.py liburing-known FILE fail|flaky|exclude
                               the tests of that kind in FILE
                               (lib/liburing-known-failures), one a line;
                               exits with a message on a malformed FILE
  guest_log.py kunit JSON [--ktap KTAP] [--allowed-skips FILE]
               [--expected FILE] [--filter GLOB] [--write-expected FILE]
               [--totals FILE]
                               kunit.py's JSON results: with --allowed-skips
                               (lib/kunit-skips), fail on a skipped case it
                               does not list, printing the reason from KTAP
                               (the raw log); with --expected
                               (lib/kunit-expected-cases), on suites or case
                               counts that differ from it (only the suites
                               GLOB selects; none compared if it selects
                               cases); --write-expected writes that file
                               from this run first; --totals gets "passed
                               failed skipped", each rule broken one more
                               failure
"""
import argparse
import collections
import difflib
import fnmatch
import json
import os
import re
import sys

# What a kernel prints when something went wrong, whatever the test said.
SPLAT = re.compile(
    r"BUG:|WARNING:|Oops|KASAN:|UBSAN:|KFENCE:|kernel BUG at|Kernel panic|"
    r"general protection fault|possible recursive locking|"
    r"possible circular locking|inconsistent lock state|"
    r"suspicious RCU usage|INFO: lockdep|"
    r"sleeping function called from invalid context|"
    r"blocked for more than \d+ seconds|unreferenced object 0x|"
    # RCU stalls: "rcu: INFO: rcu_sched self-detected stall on CPU",
    # "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", and the
    # grace-period kthread that did not run: "rcu: rcu_preempt kthread
    # starved for 10502 jiffies!".
    r"rcu: INFO: |self-detected stall|detected stalls on|kthread starved|"
    r"Call Trace:")
# kselftest's top-level TAP: "ok 1 selftests: io_uring: splice_tee # SKIP".
TOP_RESULT = re.compile(
    r"^(not ok|ok) \d+ selftests: (\S+): (\S+)(?:\s+#\s*(\w+))?")
# Any TAP result line, after any depth of "#" and indentation: a test
# program's own, as run_kselftest.sh relays it, "# ok 3 name", "# ok 4 name
# # SKIP why", "# ok 5 # XFAIL why" (ksft_test_result_xfail() puts the
# directive right after the number), nested "# # not ok 1 name" or
# "#     ok 2 name". Groups: prefix, status, name, directive, reason.
TAP_RESULT = re.compile(
    r"^([#\s]*)(not ok|ok) \d+(?: +|$)(.*?)\s*(?:#\s*(\w*)(.*))?$")
# run_kselftest.sh's plan of each collection, "1..7", and its exit status.
TOP_PLAN = re.compile(r"^1\.\.(\d+)\s*$")
RUNNER_EXIT = re.compile(r"^IOU-KSELFTEST-EXIT rc=(\d+)")
EXTRA_BEGIN = re.compile(r"^IOU-RUN-BEGIN (\S+)")
# Searched, not matched: a program's output may not end its last line.
EXTRA_END = re.compile(r"IOU-RUN-END (\S+) rc=(\d+)")
# What the guest prints after the tests: the kernel's log, kmemleak's
# report (and, with --coverage, the counters): no TAP of a test in there.
DUMP_BEGIN = re.compile(r"^IOU-(DMESG|KMEMLEAK|GCOV)-BEGIN")
GUEST_DONE = "IOU-GUEST-DONE"
# /init's count of the CPUs the guest brought up.
GUEST_CPUS = re.compile(r"^IOU-GUEST-CPUS (\d+)")
# Lines of a failed program's output printed with its result.
PROGRAM_TAIL = 15


def read_lines(path):
    with open(path, errors="replace") as log:
        return [line.rstrip("\r\n").replace("\r", "") for line in log]


# A user program's fault that the kernel logs (show_unhandled_signals):
# "traps: prog[123] general protection fault ip:... error:0 in ...". The
# program's exit status reports it; it is not a kernel splat.
USER_TRAP = re.compile(r"traps: \S+\[\d+\] ")


def splat_reports(lines, context=30):
    """Each splat with the lines that follow it, up to its end marker."""
    report, until = [], -1
    for i, line in enumerate(lines):
        if SPLAT.search(line) and i > until and not USER_TRAP.search(line):
            until = i + context
            report.append("----")
        if i <= until:
            report.append(line)
            if "---[ end trace" in line or "IOU-" in line:
                until = i
    return report


def kernel_splats(console, kmsg=None):
    """The splats of a guest run: the console's and, when the kernel's
    messages were streamed to a file of their own (kmsg), that file's.
    The console's lines that kmsg has too (the dmesg the guest prints at
    the end) are read once."""
    if kmsg is None:
        return splat_reports(console)
    known = set(kmsg)
    return splat_reports(kmsg) + splat_reports(
        [line for line in console if line not in known])


def verdict(status, directive):
    if directive and directive.upper() == "SKIP":
        return "skip"
    # ksft_test_result_xfail(): a known failure, not ours (said in the line).
    if directive and directive.upper() == "XFAIL" and status == "ok":
        return "xfail"
    return "pass" if status == "ok" else "fail"


def table_rows(path):
    """(line number, first two words and the rest) of each line of a
    lib/ table, blank lines and # comments left out."""
    with open(path) as f:
        for num, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                yield num, line.split(None, 2)


def read_allowed_skips(path):
    """lib/selftest-skips: "<program> <case glob> <reason>" per line; "-" as
    the case stands for the program's own skip (exit 4)."""
    allowed = []
    for num, parts in table_rows(path):
        if len(parts) < 3:
            sys.exit(f"{path}:{num}: want \"program case-glob reason\"")
        allowed.append(tuple(parts))
    return allowed


def skip_allowed(allowed, program, case):
    return any(prog == program and fnmatch.fnmatchcase(case, glob)
               for prog, glob, _ in allowed)


def tap_line(line, inner):
    """A TAP result line as (status, name, directive, reason), or None.
    inner: the line is a program's own output, where any depth of "#" and
    indentation before the result counts (kselftest's runner puts "# "
    before each line of the program's, kselftest_harness's nested
    results add their own "# " or indentation); otherwise only a line at
    column 0."""
    match = TAP_RESULT.match(line)
    if not match or (match.group(1) and not inner):
        return None
    return match.group(2), match.group(3), match.group(4), \
        (match.group(5) or "").strip()


def guest_cpus_problem(lines, want):
    """Why the guest did not run on the CPUs QEMU was given, or None: a
    kernel that brings up one CPU of two (ACPI's MADT ignored, no MP
    table) runs every race of the tests on one."""
    for line in lines:
        found = GUEST_CPUS.match(line)
        if found:
            got = int(found.group(1))
            return None if got == want else f"{got} CPU(s) online, QEMU gave it {want} (-smp)"
    return "no IOU-GUEST-CPUS line: the guest's CPUs are not known"


def selftests(lines, label="selftests", expected=None, allowed_skips=None,
              kmsg=None, kmsg_path="kmsg.log", patched=False, cpus=None):
    """expected: the "collection:program" entries the runner was given (its
    plan must be complete, its exit status seen); allowed_skips: when given
    (a patched run), a skip that it does not list is a failure; patched:
    an expected failure ("ok ... # XFAIL", 6.12's behaviour that the series
    fixes) is a failure too; cpus: the guest must have brought up that
    many CPUs; kmsg: the
    kernel's messages streamed to a file of their own (kmsg.log), read for
    splats with the console.

    A program fails on a "not ok" line anywhere in its output (outside a
    SKIP, an "ok ... # XFAIL" is not one), whatever its exit status: the
    kselftest runner's own result line, any nested result of the program
    ("# not ok 3 foo", "# # not ok 1 bar", "#     not ok 2 baz") or, for a
    --run program, a result line of its output at any depth."""
    counts = {"pass": 0, "fail": 0, "skip": 0}
    cases = {"pass": 0, "fail": 0, "skip": 0, "xfail": 0}
    extra_output = None
    pending_skips = []
    pending_fails = []
    orphan_fails = []
    unlisted_skips = []
    seen = set()
    plans = []
    runner_rc = None
    program_tail = collections.deque(maxlen=PROGRAM_TAIL)
    # The boot (before /init says IOU-GUEST-START) and the kernel log and
    # leak report the guest prints at the end are the kernel's, not TAP.
    started = not any("IOU-GUEST-START" in line for line in lines)
    dump = None

    def check_skips(program):
        for case, skip_line in pending_skips:
            if allowed_skips is not None and not skip_allowed(allowed_skips, program, case):
                unlisted_skips.append(f"{program} {case}: {skip_line.strip()}")

    def inner_result(line):
        """Count a program's own result line; remember its skips and
        failures until the program's result."""
        tap = tap_line(line, inner=True)
        if not tap:
            return
        result = verdict(tap[0], tap[2])
        cases[result] += 1
        if result == "skip":
            pending_skips.append((tap[1] or "?", line))
        elif result == "fail":
            pending_fails.append(line.strip())
        elif result == "xfail" and patched:
            pending_fails.append(line.strip() + "  <- an XFAIL in a patched run")

    for line in lines:
        if not started:
            started = "IOU-GUEST-START" in line
            continue
        if dump:
            if line.startswith(dump):
                dump = None
            continue
        block = DUMP_BEGIN.match(line)
        if block and extra_output is None:
            dump = f"IOU-{block.group(1)}-END"
            continue
        if EXTRA_BEGIN.match(line):
            # What no program's result took (a runner that stopped
            # halfway) is not this --run program's.
            orphan_fails += pending_fails
            check_skips("?")
            pending_skips, pending_fails = [], []
            extra_output = []
            continue
        extra = EXTRA_END.search(line)
        if extra and extra_output is not None:
            if line[:extra.start()]:
                extra_output.append(line[:extra.start()])
            for out in extra_output:
                inner_result(out)
            rc = int(extra.group(2))
            program = extra.group(1)
            result = "pass" if rc == 0 else "skip" if rc == 4 else "fail"
            if result == "skip":
                pending_skips.append(("-", f"--run {program} exited {rc} (a skip)"))
            why = ""
            if pending_fails and result != "fail":
                result, why = "fail", ", but a result in its output is \"not ok\""
            counts[result] += 1
            print(f"  {result.upper():4} --run {program} (exit {rc}{why})")
            for out in extra_output:
                print("       | " + out)
            check_skips(program)
            pending_skips, pending_fails = [], []
            extra_output = None
            continue
        if extra_output is not None:
            extra_output.append(line)
            continue
        runner = RUNNER_EXIT.match(line)
        if runner:
            runner_rc = int(runner.group(1))
            continue
        plan = TOP_PLAN.match(line)
        if plan:
            plans.append([int(plan.group(1)), 0])
            continue
        top = TOP_RESULT.match(line)
        if top:
            result = verdict(top.group(1), top.group(4))
            if result == "skip":
                pending_skips.append(("-", line))
            if pending_fails and result != "fail":
                result = "fail"
            counts[result] += 1
            seen.add(f"{top.group(2)}:{top.group(3)}")
            if plans:
                plans[-1][1] += 1
            note = ""
            if pending_fails and top.group(1) == "ok":
                note = " (its exit status says ok, its output \"not ok\")"
            print(f"  {result.upper():4} {top.group(2)}/{top.group(3)}{note}")
            for fail_line in pending_fails:
                print("       | " + fail_line)
            if result == "fail":
                # What it printed last says why (a replay line, an
                # assertion), where only this output is kept (CI's log).
                print("       | --- its last lines:")
                for out in program_tail:
                    print("       | " + out)
            program_tail.clear()
            check_skips(top.group(3))
            pending_skips, pending_fails = [], []
            continue
        # Any other result line: a program's own, or a "not ok" of the
        # guest's that no program's result follows (counted below).
        inner_result(line)
        program_tail.append(line.rstrip())
    print(f"  (test cases inside the programs: {cases['pass']} passed, "
          f"{cases['fail']} failed, {cases['skip']} skipped, "
          f"{cases['xfail']} known failures)")
    # Results that no program's result line followed: the runner was
    # killed, or something else printed them; a failure either way.
    orphan_fails += pending_fails
    if orphan_fails:
        counts["fail"] += 1
        print("  FAIL \"not ok\" with no program's result after it:")
        for fail_line in orphan_fails:
            print("       | " + fail_line)
    if pending_skips:
        check_skips("?")
    # A skip in a patched run that lib/selftest-skips does not list hides a
    # feature the series should have: one failure, naming each skip.
    if unlisted_skips:
        counts["fail"] += 1
        print("  FAIL skips not in lib/selftest-skips (a patched run may skip only those):")
        for skip in unlisted_skips:
            print("       | " + skip)
    if expected is not None:
        # The runner's plan: every program it was given has a result, each
        # plan is complete, and the runner's exit status was seen.
        missing = [name for name in expected if name not in seen]
        short = [f"1..{want} with {got} results" for want, got in plans if got != want]
        if missing or short or not plans:
            counts["fail"] += 1
            print("  FAIL kselftest runner: results missing: "
                  + ", ".join(missing + short or ["no TAP plan"]))
        if runner_rc is None:
            counts["fail"] += 1
            print("  FAIL kselftest runner: its exit status was not printed (killed?)")
        elif runner_rc != 0 and counts["fail"] == 0:
            counts["fail"] += 1
            print(f"  FAIL kselftest runner: exit {runner_rc} with no failed test")
    # The kernel's log and the guest's run itself count as one result each
    # when they go wrong, so that the totals line shows the failure.
    found = kernel_splats(lines, kmsg)
    if found:
        counts["fail"] += 1
        print("  FAIL kernel log: splats"
              + (f" (the kernel's messages: {kmsg_path})" if kmsg is not None else ""))
        for line in found:
            print("       | " + line)
    cpus_problem = cpus and guest_cpus_problem(lines, cpus)
    if cpus_problem:
        counts["fail"] += 1
        print(f"  FAIL guest: {cpus_problem}")
    if not any(GUEST_DONE in line for line in lines):
        counts["fail"] += 1
        print("  FAIL guest run: did not finish (panic, hang or timeout)"
              + (f"; the kernel's last messages ({kmsg_path}):" if kmsg else ""))
        for line in (kmsg or [])[-15:]:
            print("       | " + line)
    ok = counts["fail"] == 0 and counts["pass"] + counts["skip"] > 0
    print(f"{label}: {counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped")
    return ok


LB_BEGIN = re.compile(r"^IOU-LIBURING-BEGIN (\S+)")
LB_END = re.compile(r"IOU-LIBURING-END (\S+) rc=(\d+) secs=(\S+)")
LB_DMESG_BEGIN = re.compile(r"^IOU-LIBURING-DMESG-BEGIN (.*)")
LB_DMESG_END = "IOU-LIBURING-DMESG-END"
# Exit codes of timeout(1): the test ran out of time (SIGINT, then SIGKILL).
TIMED_OUT = (124, 137)
KNOWN_KINDS = ("fail", "flaky", "exclude")
# lib/liburing-known-failures: an entry "<test> <kind> ..." and, under a
# fail or flaky one, its output lines, indented: "| <line>" a line that
# marks the failure, "~ <line>" one the test prints whether it fails or not.
KNOWN_ENTRY = re.compile(r"^(\S+)\s+(\S+)\s+(.+)$")
KNOWN_RC = re.compile(r"^rc=(\d+)\s+(.+)$")
KNOWN_LINE = re.compile(r"^\s+([|~]) (.*\S)\s*$")


class Known:
    """An entry of lib/liburing-known-failures: kind, reason and, for a
    fail or flaky entry, the exit status and the exact output lines of the
    failure it stands for (lines), and the lines the test may print too
    whether it fails or not (also)."""

    def __init__(self, kind, reason, rc=None):
        self.kind, self.reason, self.rc = kind, reason, rc
        self.lines, self.also = [], []


def read_known(path):
    """lib/liburing-known-failures as {test: Known}. Each entry is a line
    "<test> fail|flaky rc=<exit status> <reason>", followed by every line
    of output that marks the failure, each indented "| <line>", and those
    it prints whether it fails or not, "~ <line>"; or "<test> exclude
    <reason>" (not run, no lines). Blank lines and lines starting with #
    are left out."""
    known, entry = {}, None
    with open(path) as f:
        for num, line in enumerate(f, 1):
            where = f"{path}:{num}"
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line[0].isspace():
                output = KNOWN_LINE.match(line)
                if not output:
                    sys.exit(f"{where}: want an output line, indented "
                             "\"| <line>\" or \"~ <line>\"")
                if entry is None or entry.kind == "exclude":
                    sys.exit(f"{where}: an output line belongs under a "
                             "fail or flaky entry")
                marker, text = output.groups()
                (entry.lines if marker == "|" else entry.also).append(text)
                continue
            parts = KNOWN_ENTRY.match(line.strip())
            if not parts or parts.group(2) not in KNOWN_KINDS:
                sys.exit(f"{where}: want \"<test> fail|flaky|exclude "
                         "...\"")
            name, kind, reason = parts.groups()
            if name in known:
                sys.exit(f"{where}: {name} is listed twice")
            rc = None
            if kind != "exclude":
                failure = KNOWN_RC.match(reason)
                if not failure:
                    sys.exit(f"{where}: want \"{name} {kind} "
                             "rc=<exit status> <reason>\"")
                rc, reason = int(failure.group(1)), failure.group(2)
            entry = known[name] = Known(kind, reason, rc)
    return known


def output_lines(out):
    """A test's output as the gate compares it with the pinned lines:
    trailing white space cut, blank lines left out (the guest's runner
    ends each test's output with one)."""
    return [line.rstrip() for line in out if line.strip()]


def failure_mismatch(entry, rc, out):
    """How a failure differs from the one a fail or flaky entry pins: []
    when it is that failure; else "exit N, not M", "+ <line>" for each line
    printed but not pinned (any line but the entry's "~" lines counts as a
    failure line) and "- <line>" for each pinned line not printed, in the
    order of the output."""
    diff = []
    if rc != entry.rc:
        diff.append("did not finish" if rc is None
                    else f"exit {rc}, not {entry.rc}")
    got = [line for line in output_lines(out) if line not in entry.also]
    matcher = difflib.SequenceMatcher(a=entry.lines, b=got, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "equal":
            diff += ["- " + line for line in entry.lines[a0:a1]]
            diff += ["+ " + line for line in got[b0:b1]]
    return diff


def read_results(path):
    results, version = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("# liburing "):
                version = line.split()[2]
            if line.startswith("#") or not line.strip():
                continue
            name, result, _ = line.split("\t", 2)
            results[name] = result
    return results, version


def liburing_tests(lines):
    """Per test: name, exit code (None if it never ended), seconds, its
    output and its kernel messages; plus the log lines outside any test
    (boot, the final dmesg and kmemleak reports)."""
    tests, outside, cur, section = [], [], None, None
    for line in lines:
        begin = LB_BEGIN.match(line)
        if begin:
            cur = {"name": begin.group(1), "rc": None, "secs": None,
                   "out": [], "dmesg": []}
            tests.append(cur)
            section = "out"
            continue
        end = LB_END.search(line)
        if end and cur is not None and section == "out":
            head = line[:end.start()]
            if head:
                cur["out"].append(head)
            cur["rc"], cur["secs"] = int(end.group(2)), float(end.group(3))
            while cur["out"] and not cur["out"][-1].strip():
                cur["out"].pop()
            section = None
            continue
        dmesg = LB_DMESG_BEGIN.match(line)
        if dmesg:
            section = "dmesg" if cur and dmesg.group(1) == cur["name"] \
                else "boot"
            continue
        if line == LB_DMESG_END:
            section = None
            continue
        if section == "out":
            cur["out"].append(line)
        elif section == "dmesg":
            cur["dmesg"].append(line)
        else:
            outside.append(line)
    return tests, outside


def test_runs(tests):
    """The runs of each test, in the order the tests first ran: one, or
    two for a flaky test that failed and ran again."""
    runs = {}
    for t in tests:
        runs.setdefault(t["name"], []).append(t)
    return runs


def run_outcome(t, timeout):
    """One run's result ("pass", "fail", "skip"), why it failed, and the
    splats in its kernel messages (which fail it whatever its exit)."""
    rc = t["rc"]
    splats = splat_reports(t["dmesg"] + (t["out"] if rc is None else []))
    if rc is None:
        return "fail", "did not finish (the guest died or hung)", splats
    if splats:
        return "fail", f"kernel splat (exit {rc})", splats
    if rc in TIMED_OUT:
        return "fail", f"timed out after {timeout}s", splats
    if rc == 0:
        return "pass", "", splats
    if rc == 77:
        return "skip", "", splats
    return "fail", f"exit {rc}", splats


# The line lib/guest-init.sh writes to /dev/kmsg before each liburing test.
KMSG_TEST = re.compile(r"iou: liburing test (\S+)")


def liburing(lines, args, kmsg=None):
    known = read_known(args.known)
    baseline, base_version = {}, None
    if args.baseline:
        baseline, base_version = read_results(args.baseline)
        if args.version and base_version and base_version != args.version:
            print(f"  the baseline is liburing {base_version}, this run "
                  f"{args.version}: rerun --pristine --liburing")
            return False
    known_file = os.path.basename(args.known)
    tests, outside = liburing_tests(lines)
    counts = {"pass": 0, "fail": 0, "skip": 0}
    gate = []
    rows = []
    for name, runs in test_runs(tests).items():
        entry = known.get(name)
        kind = entry.kind if entry else None
        outcomes = [run_outcome(t, args.timeout) for t in runs]
        # A flaky test that failed ran again: its second run is its result.
        result, why, _ = outcomes[-1]
        first, first_why, _ = outcomes[0]
        counts[result] += 1
        rows.append((name, result, runs[-1]["rc"], runs[-1]["secs"]))
        mismatch = [failure_mismatch(entry, t["rc"], t["out"])
                    if outcome[0] == "fail" and kind in ("fail", "flaky") else []
                    for t, outcome in zip(runs, outcomes)]
        notes = [""] * len(runs)
        problem = None
        rerun = kind == "flaky" and first == "fail"
        if any(splats for _, _, splats in outcomes):
            notes = ["SPLAT: a kernel bug whatever the test says" if splats
                     else "" for _, _, splats in outcomes]
            problem = "kernel splat"
        elif len(runs) > (2 if rerun else 1):
            notes[-1] = f"RAN {len(runs)} TIMES"
            problem = (f"ran {len(runs)} times (only a flaky test that "
                       "failed runs again, once)")
        elif rerun and mismatch[0]:
            notes[0] = (f"NOT the flaky failure that {known_file} pins:"
                        " + printed, not pinned; - pinned, not printed")
            problem = (f"fails ({first_why}), not as {known_file} pins it:"
                       f" {'; '.join(mismatch[0])}")
        elif rerun and len(runs) == 1:
            notes[0] = "known flaky failure, NOT RUN AGAIN"
            problem = "failed (the known flaky failure) and was not run again"
        elif rerun and result == "fail":
            notes[0] = "known flaky failure; run again:"
            notes[1] = "FAILED AGAIN"
            problem = f"failed twice (the known flaky failure, then {why})"
        elif rerun:
            notes[0] = f"known flaky: {entry.reason}; run again:"
            notes[1] = f"{'passed' if result == 'pass' else 'skipped'} when run again"
        elif result == "fail":
            if baseline.get(name) == "pass":
                notes[0] = "REGRESSION: passed on pristine"
                problem = f"passed on pristine, fails here ({why})"
            elif kind == "fail" and not mismatch[0]:
                notes[0] = f"known: {entry.reason}"
            elif kind == "fail":
                notes[0] = (f"NOT the known failure that {known_file} pins:"
                            " + printed, not pinned; - pinned, not printed")
                problem = (f"fails ({why}), not as {known_file} pins it:"
                           f" {'; '.join(mismatch[0])}")
            else:
                notes[0] = f"NEW: not in {known_file}"
                problem = f"fails ({why}) and is not a known failure"
        elif kind == "fail":
            notes[0] = "known failure passed this time"
        if result == "skip" and baseline.get(name) == "pass" and not problem:
            # liburing's tests turn an -EINVAL from a new opcode path into
            # a skip: what passed on pristine must pass here.
            notes[-1] = "REGRESSION: passed on pristine, skipped here"
            problem = "passed on pristine, skipped here"
        if problem:
            gate.append(f"{name}: {problem}")
        for i, (t, (res, res_why, splats)) in enumerate(zip(runs, outcomes)):
            secs = "" if t["secs"] is None else f", {t['secs']:.1f}s"
            detail = ("run again, " if i else "") + f"{res_why}{secs}".lstrip(", ")
            print(f"  {res.upper():4} {name} ({detail.rstrip(', ')})"
                  + (f" [{notes[i]}]" if notes[i] else ""))
            if res == "fail":
                for out in t["out"][-15:]:
                    print("       | " + out)
                for line in mismatch[i][:20]:
                    print("       " + line)
                for line in splats:
                    print("       ! " + line)
    ran = {t["name"] for t in tests}
    excluded = sorted(n for n, entry in known.items() if entry.kind == "exclude")
    # Every test of the baseline that is still to run must have run.
    for name in sorted(set(baseline) - ran - set(excluded)):
        counts["fail"] += 1
        print(f"  FAIL {name} [MISSING: in the pristine baseline, not run here]")
        gate.append(f"{name}: ran on pristine, no result here")
    for name in excluded:
        print(f"  EXCL {name} [not run: {known[name].reason}]")
    found = splat_reports(outside)
    if found:
        counts["fail"] += 1
        gate.append("kernel log outside the tests: splats")
        print("  FAIL kernel log: splats outside the tests")
        for line in found:
            print("       | " + line)
    # The kernel's messages streamed to their own file: a splat there that
    # no test's dmesg block printed (the guest hung or died before it
    # could) fails the gate, pinned on the test that was running.
    if kmsg is not None:
        console = set(lines)
        # Lines the console has too are blanked, not dropped: a report
        # keeps its lines together.
        fresh = [line if line not in console else "" for line in kmsg]
        found = [line for line in splat_reports(fresh) if line]
        if found:
            running = "(boot)"
            for line, new in zip(kmsg, fresh):
                marker = KMSG_TEST.search(line)
                if marker:
                    running = marker.group(1)
                if SPLAT.search(new) and not USER_TRAP.search(new):
                    break
            counts["fail"] += 1
            gate.append(f"splats in {args.kmsg} that no test's dmesg has"
                        f" (the first while {running} ran)")
            print(f"  FAIL kernel messages: splats that no test's dmesg has, "
                  f"the first while {running} ran ({args.kmsg})")
            for line in found:
                print("       | " + line)
    if not any(GUEST_DONE in line for line in lines):
        counts["fail"] += 1
        gate.append("the guest run did not finish")
        print("  FAIL guest run: did not finish (panic, hang or timeout)")
    if not tests:
        gate.append("no liburing test ran")
    cpus_problem = args.cpus and guest_cpus_problem(lines, args.cpus)
    if cpus_problem:
        gate.append(f"guest: {cpus_problem}")
    with open(args.results, "w") as f:
        f.write(f"# liburing {args.version or '?'}\n")
        f.write("# test\tresult\texit\tseconds\n")
        for name, result, rc, secs in rows:
            f.write(f"{name}\t{result}\t{'' if rc is None else rc}\t"
                    f"{'' if secs is None else secs}\n")
    total = sum(t["secs"] or 0 for t in tests)
    print(f"  ({len(ran)} tests run in {total:.0f}s, {len(excluded)} excluded;"
          f" results: {args.results})")
    if args.baseline:
        print(f"  gate: compared with {args.baseline}")
    for problem in gate:
        print(f"  gate: {problem}")
    print("  gate: " + ("FAILED" if gate else "passed"))
    print(f"liburing: {counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped")
    return not gate


# KUnit (run_kunit.sh, and the boot of run_selftests.sh --coverage): the
# results of kunit.py's JSON, the reasons of skips from the raw KTAP, the
# skip allowlist and the expected suites with their case counts.
KTAP_TIME = re.compile(r"^\[[\s\d.]+\] ?")
KTAP_SUBTEST = re.compile(r"^(\s*)# Subtest: (.*?)\s*$")
KTAP_RESULT = re.compile(r"^(\s*)(?:not ok|ok) \d+ (?:- )?(.*?)(?: # SKIP(.*))?$")
EXPECTED_HEADER = """\
# The KUnit suites a full ./run_kunit.sh runs, each with its number of test
# cases as kunit.py counts them: a parameterised case counts its rows, not
# itself. A run must match it exactly (a suite missing or extra, or another
# count, fails the run; with a filter glob, only the suites it selects).
# Written by ./run_kunit.sh --update-expected from a run: regenerate it
# that way after adding or removing cases or rows, and commit it.
"""


def kunit_leaves(group, path=()):
    """(path, status) of every leaf of kunit.py's JSON: (suite, case) or
    (suite, case, row) for a parameterised case's rows."""
    for case in group.get("test_cases", []):
        yield path + (case["name"],), case["status"]
    for sub in group.get("sub_groups", []):
        yield from kunit_leaves(sub, path + (sub["name"],))


def ktap_skip_reasons(lines):
    """{path: reason} of every "# SKIP" result of a raw KTAP log (console
    timestamps dropped), the path named as in kunit_leaves()."""
    reasons, stack = {}, []
    for line in lines:
        line = KTAP_TIME.sub("", line, count=1)
        header = KTAP_SUBTEST.match(line)
        if header:
            depth = len(header.group(1))
            while stack and stack[-1][0] >= depth:
                stack.pop()
            stack.append((depth, header.group(2)))
            continue
        result = KTAP_RESULT.match(line)
        if not result:
            continue
        depth = len(result.group(1))
        while stack and stack[-1][0] > depth:
            stack.pop()
        if result.group(3) is not None:
            path = tuple(name for _, name in stack) + (result.group(2),)
            reasons[path] = result.group(3).strip() or "(no reason given)"
    return reasons


def read_expected_cases(path):
    """lib/kunit-expected-cases: "<suite> <cases>" per line."""
    expected = {}
    for num, parts in table_rows(path):
        if len(parts) != 2 or not parts[1].isdigit():
            sys.exit(f"{path}:{num}: want \"suite number-of-cases\"")
        expected[parts[0]] = int(parts[1])
    return expected


def suite_counts(leaves):
    counts = {}
    for path, _ in leaves:
        # A suite with no case at all is a leaf of its own (kunit.py's
        # "0 tests run!"): it counts none.
        counts[path[0]] = counts.get(path[0], 0) + (len(path) > 1)
    return counts


def shown(path):
    """A lib/ file's name as the repository's, any other path as given."""
    parent, name = os.path.split(os.path.abspath(path))
    return "lib/" + name if os.path.basename(parent) == "lib" else path


def kunit(args):
    """Print what a KUnit run's results break of the rules and write the
    totals "passed failed skipped" (each broken rule one more failure) to
    args.totals; True if the run passed."""
    totals = {"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0}
    try:
        with open(args.json) as f:
            leaves = list(kunit_leaves(json.load(f)))
    except (OSError, ValueError) as err:
        print(f"  FAIL kunit.py's results: {args.json}: {err}")
        leaves, totals["ERROR"] = [], 1
    for _, status in leaves:
        totals[status] = totals.get(status, 0) + 1
    problems = 0
    counts = suite_counts(leaves)
    if args.write_expected:
        if totals["ERROR"] or not leaves:
            print(f"  FAIL {shown(args.write_expected)} not written: "
                  + ("a suite crashed, its count is not known"
                     if leaves else "no results"))
            problems += 1
            if args.expected == args.write_expected:
                args.expected = None
        else:
            with open(args.write_expected, "w") as f:
                f.write(EXPECTED_HEADER)
                for suite in sorted(counts):
                    f.write(f"{suite} {counts[suite]}\n")
            print(f"  wrote {shown(args.write_expected)}: {len(counts)} suites, "
                  f"{sum(counts.values())} cases (commit it)")
    skipped = [path for path, status in leaves if status == "SKIP"]
    if skipped and args.allowed_skips is not None:
        allowed = read_allowed_skips(args.allowed_skips)
        reasons = {}
        if args.ktap:
            reasons = ktap_skip_reasons(read_lines(args.ktap))
        unlisted = []
        for path in skipped:
            case = ".".join(path[1:])
            if not (skip_allowed(allowed, path[0], path[1] if len(path) > 1 else "-")
                    or skip_allowed(allowed, path[0], case or "-")):
                unlisted.append(f"{'.'.join(path)}: SKIP "
                                f"{reasons.get(path, '(reason not in the KTAP log)')}")
        if unlisted:
            problems += 1
            print(f"  FAIL skipped KUnit cases that {shown(args.allowed_skips)} does not list"
                  " (a patched run may skip only those):")
            for line in unlisted:
                print("       | " + line)
    if args.expected and not os.path.exists(args.expected):
        problems += 1
        print(f"  FAIL {shown(args.expected)} is missing: write it with"
              " ./run_kunit.sh --update-expected")
    elif args.expected:
        expected = read_expected_cases(args.expected)
        name = shown(args.expected)
        glob = args.filter or "*"
        if "." in glob:
            print(f"  (case counts not compared with {name}: the filter "
                  f"{glob} selects cases, not suites)")
        else:
            want = {s: n for s, n in expected.items() if fnmatch.fnmatchcase(s, glob)}
            counts = {s: n for s, n in counts.items() if fnmatch.fnmatchcase(s, glob)}
            wrong = []
            for suite in sorted(set(want) | set(counts)):
                if suite not in counts:
                    wrong.append(f"{suite}: not run (expected {want[suite]} cases)")
                elif suite not in want:
                    wrong.append(f"{suite}: {counts[suite]} cases, not in {name}")
                elif counts[suite] != want[suite]:
                    wrong.append(f"{suite}: {counts[suite]} cases, expected {want[suite]}")
            print(f"  (suites: {len(counts)} run with {sum(counts.values())} cases;"
                  f" {name}: {len(want)} with {sum(want.values())}"
                  + ("" if glob == "*" else f" matching {glob}") + ")")
            if wrong:
                problems += 1
                print(f"  FAIL suites or case counts differ from {name} (if the"
                      " change is meant, regenerate it: ./run_kunit.sh"
                      " --update-expected, and commit it):")
                for line in wrong:
                    print("       | " + line)
    failed = totals["FAIL"] + totals["ERROR"] + problems
    if args.totals:
        with open(args.totals, "w") as f:
            f.write(f"{totals['PASS']} {failed} {totals['SKIP']}\n")
    return failed == 0 and totals["PASS"] + totals["SKIP"] > 0


def read_kmsg(path):
    """The kernel's messages streamed to a file of their own, or None when
    not given or not there (a run from before they were)."""
    if not path:
        return None
    try:
        return read_lines(path)
    except FileNotFoundError:
        return None


def main(argv):
    if len(argv) == 4 and argv[1] == "liburing-known":
        if argv[3] not in KNOWN_KINDS:
            sys.exit(f"guest_log.py liburing-known: want one of {KNOWN_KINDS}")
        for name, entry in read_known(argv[2]).items():
            if entry.kind == argv[3]:
                print(name)
        return 0
    if len(argv) >= 3 and argv[1] == "liburing":
        parser = argparse.ArgumentParser(prog="guest_log.py liburing")
        parser.add_argument("log")
        parser.add_argument("--known", required=True)
        parser.add_argument("--cpus", type=int)
        parser.add_argument("--results", required=True)
        parser.add_argument("--baseline")
        parser.add_argument("--timeout", default="?")
        parser.add_argument("--version")
        parser.add_argument("--kmsg")
        args = parser.parse_args(argv[2:])
        return 0 if liburing(read_lines(args.log), args, read_kmsg(args.kmsg)) else 1
    if len(argv) >= 3 and argv[1] in ("selftests", "bench"):
        parser = argparse.ArgumentParser(prog="guest_log.py " + argv[1])
        parser.add_argument("log")
        parser.add_argument("--expect")
        parser.add_argument("--allowed-skips")
        parser.add_argument("--kmsg")
        parser.add_argument("--patched", action="store_true")
        parser.add_argument("--cpus", type=int)
        args = parser.parse_args(argv[2:])
        expected = None
        if args.expect:
            with open(args.expect) as f:
                expected = [line.strip() for line in f if line.strip()]
        allowed = read_allowed_skips(args.allowed_skips) if args.allowed_skips else None
        return 0 if selftests(read_lines(args.log), argv[1], expected, allowed,
                              read_kmsg(args.kmsg), args.kmsg, args.patched,
                              args.cpus) else 1
    if len(argv) >= 3 and argv[1] == "kunit":
        parser = argparse.ArgumentParser(prog="guest_log.py kunit")
        parser.add_argument("json")
        parser.add_argument("--ktap")
        parser.add_argument("--allowed-skips")
        parser.add_argument("--expected")
        parser.add_argument("--filter")
        parser.add_argument("--write-expected")
        parser.add_argument("--totals")
        return 0 if kunit(parser.parse_args(argv[2:])) else 1
    if len(argv) < 3 or argv[1] != "splats":
        sys.exit(__doc__)
    found = []
    for path in argv[2:]:
        found += splat_reports(read_lines(path))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
