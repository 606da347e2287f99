#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The gates of lib/guest_log.py, lib/mutation_check.py and
lib/perf_gate.py, each fed a log that must fail it (and a clean one that
must pass, so that a gate that fails everything is caught too). Run by
.ci/run's "gates" stage: python3 lib/test_gates.py; the last line is
"gates: N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

LIB = os.path.dirname(os.path.abspath(__file__))


def lib_tool(name, *args):
    """A lib/ program's exit status and output."""
    run = subprocess.run([sys.executable, os.path.join(LIB, name), *args],
                         capture_output=True, text=True, check=False)
    return run.returncode, run.stdout + run.stderr


def guest_log(*args):
    return lib_tool("guest_log.py", *args)


class Files:
    """Scratch files of one test."""

    def __init__(self, test):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path


def console(*program_lines, run_rc=0):
    """A run_selftests.sh console log: one kselftest program
    io_uring:prog whose output is program_lines, its result decided by
    run_rc as run_kselftest.sh does (0 ok, 4 SKIP, other not ok)."""
    top = {0: "ok 1 selftests: io_uring: prog",
           4: "ok 1 selftests: io_uring: prog # SKIP"}.get(
        run_rc, f"not ok 1 selftests: io_uring: prog # exit={run_rc}")
    return "\n".join(["IOU-GUEST-START 6.12.118+", "IOU-GUEST-CPUS 2",
                      "TAP version 13", "1..1",
                      "# selftests: io_uring: prog",
                      *[f"# {line}" for line in program_lines],
                      top, "IOU-KSELFTEST-EXIT rc=0", "IOU-GUEST-DONE", ""])


PASSING = ["TAP version 13", "1..2", "ok 1 first", "ok 2 second",
           "# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0"]


class Selftests(unittest.TestCase):
    def setUp(self):
        self.files = Files(self)
        self.expect = self.files.write("list", "io_uring:prog\n")
        self.no_skips = self.files.write("skips", "# none\n")

    def run_gate(self, log, *extra):
        path = self.files.write("console.log", log)
        return guest_log("selftests", path, "--expect", self.expect, *extra)

    def test_clean_log_passes(self):
        rc, out = self.run_gate(console(*PASSING), "--patched", "--cpus", "2",
                                "--allowed-skips", self.no_skips)
        self.assertEqual(rc, 0, out)
        self.assertIn("selftests: 1 passed, 0 failed, 0 skipped", out)

    def test_inner_not_ok_fails_despite_exit_0(self):
        rc, out = self.run_gate(console("1..2", "ok 1 first", "not ok 2 second"))
        self.assertEqual(rc, 1, out)
        self.assertIn("its output \"not ok\"", out)

    def test_nested_not_ok_fails(self):
        rc, out = self.run_gate(console("1..1", "#   not ok 3 deep case", "ok 1 outer"))
        self.assertEqual(rc, 1, out)

    def test_unlisted_skip_fails_patched_run(self):
        rc, out = self.run_gate(console("1..0 # SKIP no feature", run_rc=4),
                                "--patched", "--allowed-skips", self.no_skips)
        self.assertEqual(rc, 1, out)
        self.assertIn("skips not in lib/selftest-skips", out)

    def test_skip_passes_pristine_run(self):
        rc, out = self.run_gate(console("1..0 # SKIP no feature", run_rc=4))
        self.assertEqual(rc, 0, out)

    def test_listed_skip_passes_patched_run(self):
        skips = self.files.write("listed", "prog - the reason\n")
        rc, out = self.run_gate(console("1..0 # SKIP no feature", run_rc=4),
                                "--patched", "--allowed-skips", skips)
        self.assertEqual(rc, 0, out)

    def test_run_program_exit_4_fails_patched_run(self):
        log = console(*PASSING).replace(
            "IOU-GUEST-DONE", "IOU-RUN-BEGIN extra.sh\nIOU-RUN-END extra.sh rc=4\nIOU-GUEST-DONE")
        rc, out = self.run_gate(log, "--patched", "--allowed-skips", self.no_skips)
        self.assertEqual(rc, 1, out)

    def test_run_program_not_ok_fails_despite_exit_0(self):
        log = console(*PASSING).replace(
            "IOU-GUEST-DONE",
            "IOU-RUN-BEGIN extra.sh\n1..1\nnot ok 1 broken\nIOU-RUN-END extra.sh rc=0\nIOU-GUEST-DONE")
        rc, out = self.run_gate(log)
        self.assertEqual(rc, 1, out)

    def test_xfail_fails_patched_run_only(self):
        log = console("1..1", "ok 1 drain # XFAIL 6.12's miscount")
        rc, out = self.run_gate(log, "--patched", "--allowed-skips", self.no_skips)
        self.assertEqual(rc, 1, out)
        self.assertIn("an XFAIL in a patched run", out)
        rc, out = self.run_gate(log)
        self.assertEqual(rc, 0, out)

    def test_missing_program_fails(self):
        expect = self.files.write("list2", "io_uring:prog\nio_uring:other\n")
        path = self.files.write("console.log", console(*PASSING))
        rc, out = guest_log("selftests", path, "--expect", expect)
        self.assertEqual(rc, 1, out)

    def test_rcu_stall_in_kmsg_fails(self):
        kmsg = self.files.write("kmsg.log", "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n")
        rc, out = self.run_gate(console(*PASSING), "--kmsg", kmsg)
        self.assertEqual(rc, 1, out)

    def test_guest_with_fewer_cpus_fails(self):
        log = console(*PASSING).replace("IOU-GUEST-CPUS 2", "IOU-GUEST-CPUS 1")
        rc, out = self.run_gate(log, "--cpus", "2")
        self.assertEqual(rc, 1, out)
        self.assertIn("1 CPU(s) online", out)

    def test_unfinished_guest_fails(self):
        rc, out = self.run_gate(console(*PASSING).replace("IOU-GUEST-DONE", ""))
        self.assertEqual(rc, 1, out)


def kunit_json(*cases):
    """kunit.py's JSON: one suite "suite" with (name, status) cases."""
    return json.dumps({"name": "main", "sub_groups": [
        {"name": "suite", "test_cases": [{"name": n, "status": s} for n, s in cases],
         "sub_groups": []}], "test_cases": []})


class KUnit(unittest.TestCase):
    def setUp(self):
        self.files = Files(self)
        self.no_skips = self.files.write("skips", "# none\n")
        self.expected = self.files.write("expected", "suite 2\n")

    def run_gate(self, *cases):
        path = self.files.write("kunit.json", kunit_json(*cases))
        return guest_log("kunit", path, "--allowed-skips", self.no_skips,
                         "--expected", self.expected)

    def test_all_pass(self):
        rc, out = self.run_gate(("a", "PASS"), ("b", "PASS"))
        self.assertEqual(rc, 0, out)

    def test_skip_fails(self):
        rc, out = self.run_gate(("a", "PASS"), ("b", "SKIP"))
        self.assertEqual(rc, 1, out)
        self.assertIn("skipped KUnit cases", out)

    def test_case_count_differs_fails(self):
        rc, out = self.run_gate(("a", "PASS"))
        self.assertEqual(rc, 1, out)
        self.assertIn("expected 2", out)

    def test_failure_fails(self):
        rc, out = self.run_gate(("a", "PASS"), ("b", "FAIL"))
        self.assertEqual(rc, 1, out)


class MutationCheck(unittest.TestCase):
    """run_mutations.sh's verdict on a mutation's results."""

    def setUp(self):
        self.files = Files(self)
        self.kunit = self.files.write("kunit.json", kunit_json(("a", "PASS"), ("b", "FAIL")))
        self.console = self.files.write("console.log", console(
            "1..2", "ok 1 first", "not ok 2 second", run_rc=1))

    def check(self, *must_fail, may_fail=()):
        patch = self.files.write("m.patch", "Subject: mutation\n\n" + "".join(
            f"Must-fail: {name}\n" for name in must_fail) + "".join(
            f"May-fail: {name}\n" for name in may_fail) + "---\n")
        return lib_tool("mutation_check.py", "check", patch, "--kunit", self.kunit,
                        "--console", self.console)

    def test_caught(self):
        rc, out = self.check("kunit suite.b", "selftest prog second")
        self.assertEqual(rc, 0, out)
        self.assertIn("CAUGHT", out)

    def test_not_caught(self):
        rc, out = self.check("kunit suite.b", "selftest prog second", "kunit suite.a")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("NOT-CAUGHT", out)

    def test_extra(self):
        rc, out = self.check("kunit suite.b")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("EXTRA", out)

    def test_may_fail_that_failed_is_not_extra(self):
        rc, out = self.check("kunit suite.b", may_fail=("selftest prog second",))
        self.assertEqual(rc, 0, out)
        self.assertIn("CAUGHT", out)

    def test_may_fail_that_passed_is_not_missed(self):
        rc, out = self.check("kunit suite.b", "selftest prog second",
                             may_fail=("kunit suite.a",))
        self.assertEqual(rc, 0, out)
        self.assertIn("CAUGHT", out)

    def test_may_fail_does_not_excuse_a_must_fail(self):
        rc, out = self.check("kunit suite.a", may_fail=("kunit suite.b",
                                                        "selftest prog second"))
        self.assertNotEqual(rc, 0, out)
        self.assertIn("NOT-CAUGHT", out)

    def test_no_results_is_infra(self):
        self.console = self.files.write("empty.log", "IOU-GUEST-START x\n")
        rc, out = self.check("kunit suite.b")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("INFRA", out)


# Excerpts of splice_bench -i and ioctl_bench -i (run_perf_gate.sh's guest).
ICOUNT_TABLES = """\
splice_bench: kernel 6.12.118+ x86_64, 0.05 guest s per cell, 1 round
workload               QD  mode         ops/guest-s  insn/op MB/guest-s  wrk
pipe->pipe 4K          32  inline           1171606      854     4798.9    0
pipe->pipe 4K          32  inline reg       1229089      814     5034.3    0
pipe->pipe 4K          32  splice(2)        1641501      609     6723.6    0
ring floor              1  NOP              1255159      797        0.0    0
ring floor              1  getppid()        4854160      206        0.0    0
FIONREAD: ioctl(2) against IORING_OP_IOCTL, kernel 6.12.118+
0.05 guest s (10^9 instructions) per row

file  method                                ops  ops/guest-s   insn/op  / ioctl(2)
tcp   ioctl(2)                           101664      2033160       492       1.00x
tcp   ring depth 32                       87168      1743562       574       0.86x
tcp   uring_cmd depth 32                  93472      1869759       535       0.92x
"""

PERF_FLOORS = """\
# floor measured cell
0.678 0.714 splice_bench pipe->pipe 4K QD32 inline/splice(2)
0.711 0.749 splice_bench pipe->pipe 4K QD32 inline reg/splice(2)
0.245 0.258 splice_bench ring floor QD1 NOP/getppid()
0.814 0.857 ioctl_bench tcp ring depth 32/ioctl(2)
0.885 0.932 ioctl_bench tcp ring depth 32/uring_cmd depth 32
"""


class PerfGate(unittest.TestCase):
    """lib/perf_gate.py check: run_perf_gate.sh's verdict."""

    def setUp(self):
        self.files = Files(self)
        self.floors = self.files.write("floors", PERF_FLOORS)

    def check(self, tables):
        path = self.files.write("bench.txt", tables)
        return lib_tool("perf_gate.py", "check", path, self.floors)

    def test_ratios_at_their_floors_pass(self):
        rc, out = self.check(ICOUNT_TABLES)
        self.assertEqual(rc, 0, out)
        self.assertIn("perf: 5 ratios held, 0 below their floor", out)

    def test_slower_inline_cell_fails(self):
        # 45 instructions more per inline splice: 854 -> 899
        rc, out = self.check(ICOUNT_TABLES.replace(
            "1171606      854", "1112929      899"))
        self.assertEqual(rc, 1, out)
        self.assertIn("perf: 4 ratios held, 1 below their floor", out)

    def test_slower_ioctl_fails_against_uring_cmd(self):
        rc, out = self.check(ICOUNT_TABLES.replace(
            "87168      1743562       574", "80000      1600000       625"))
        self.assertEqual(rc, 1, out)
        self.assertIn("2 below their floor", out)

    def test_missing_cell_fails(self):
        rc, out = self.check(ICOUNT_TABLES.replace("tcp   uring_cmd", "tcp   other"))
        self.assertEqual(rc, 1, out)
        self.assertIn("1 missing", out)

    def test_wall_clock_tables_are_not_read(self):
        rc, out = self.check(ICOUNT_TABLES.replace("insn/op", "spread"))
        self.assertEqual(rc, 1, out)
        self.assertIn("5 missing", out)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"gates: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
