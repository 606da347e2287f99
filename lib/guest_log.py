#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a QEMU guest's console log: kernel splats, kselftest TAP results and
the results of extra programs run with --run.

  guest_log.py splats LOG      print each splat with its backtrace; exit 1
                               if there is any
  guest_log.py selftests LOG   print every result, the splats and the final
                               "selftests: N passed, N failed, N skipped"
                               line; exit 1 on any failure, splat, panic or
                               missing end marker
  guest_log.py bench LOG       the same for a --bench run, whose programs
                               are the benchmarks; ends "bench: ..."
"""
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
    r"Call Trace:")
# kselftest's top-level TAP: "ok 1 selftests: io_uring: splice_tee # SKIP".
TOP_RESULT = re.compile(
    r"^(not ok|ok) \d+ selftests: (\S+): (\S+)(?:\s+#\s*(\w+))?")
# A test program's own TAP, as run_kselftest.sh relays it: "# ok 3 name".
SUB_RESULT = re.compile(r"^# (not ok|ok) \d+ (.*?)(?:\s+#\s*(\w+).*)?$")
EXTRA_BEGIN = re.compile(r"^IOU-RUN-BEGIN (\S+)")
EXTRA_END = re.compile(r"^IOU-RUN-END (\S+) rc=(\d+)")
GUEST_DONE = "IOU-GUEST-DONE"


def read_lines(path):
    with open(path, errors="replace") as log:
        return [line.rstrip("\r\n").replace("\r", "") for line in log]


def splat_reports(lines, context=30):
    """Each splat with the lines that follow it, up to its end marker."""
    report, until = [], -1
    for i, line in enumerate(lines):
        if SPLAT.search(line) and i > until:
            until = i + context
            report.append("----")
        if i <= until:
            report.append(line)
            if "---[ end trace" in line or "IOU-" in line:
                until = i
    return report


def verdict(status, directive):
    if directive and directive.upper() == "SKIP":
        return "skip"
    return "pass" if status == "ok" else "fail"


def selftests(lines, label="selftests"):
    counts = {"pass": 0, "fail": 0, "skip": 0}
    cases = {"pass": 0, "fail": 0, "skip": 0}
    extra_output = None
    for line in lines:
        if EXTRA_BEGIN.match(line):
            extra_output = []
            continue
        extra = EXTRA_END.match(line)
        if extra:
            rc = int(extra.group(2))
            result = "pass" if rc == 0 else "skip" if rc == 4 else "fail"
            counts[result] += 1
            print(f"  {result.upper():4} --run {extra.group(1)} (exit {rc})")
            for out in extra_output or []:
                print("       | " + out)
            extra_output = None
            continue
        if extra_output is not None:
            extra_output.append(line)
            continue
        sub = SUB_RESULT.match(line)
        if sub:
            cases[verdict(sub.group(1), sub.group(3))] += 1
            continue
        top = TOP_RESULT.match(line)
        if top:
            result = verdict(top.group(1), top.group(4))
            counts[result] += 1
            print(f"  {result.upper():4} {top.group(2)}/{top.group(3)}")
            continue
    print(f"  (test cases inside the programs: {cases['pass']} passed, "
          f"{cases['fail']} failed, {cases['skip']} skipped)")
    # The kernel's log and the guest's run itself count as one result each
    # when they go wrong, so that the totals line shows the failure.
    found = splat_reports(lines)
    if found:
        counts["fail"] += 1
        print("  FAIL kernel log: splats")
        for line in found:
            print("       | " + line)
    if not any(GUEST_DONE in line for line in lines):
        counts["fail"] += 1
        print("  FAIL guest run: did not finish (panic, hang or timeout)")
    ok = counts["fail"] == 0 and counts["pass"] + counts["skip"] > 0
    print(f"{label}: {counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped")
    return ok


def main(argv):
    if len(argv) != 3 or argv[1] not in ("splats", "selftests", "bench"):
        sys.exit(__doc__)
    lines = read_lines(argv[2])
    if argv[1] == "splats":
        found = splat_reports(lines)
        for line in found:
            print(line)
        return 1 if found else 0
    return 0 if selftests(lines, argv[1]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
