#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a TCG guest's vCPUs spend their time, sampled from QEMU's monitor.

  guest_profile.py sample MONITOR CONSOLE OUT
      Ask the monitor socket (IOU_QEMU_MONITOR of run_selftests.sh) for
      "info registers -a" until QEMU exits; for every vCPU write a line
      "time, lines in CONSOLE so far, cpu, CPL, halted, RIP" to OUT.
  guest_profile.py report OUT SYSTEM_MAP CONSOLE [TOP]
      Group the samples by the console line that was the last one printed
      (a benchmark prints a line as each cell ends, so each group is the
      cell after that line) and print, per group, the share of samples in
      user mode, halted, and in each of the TOP (default 15) kernel
      functions, from the build directory's System.map (no KASLR).

  guest_profile.py insns PROFILE SYSTEM_MAP [--per-op N] [--top N]
      An instruction profile (run_selftests.sh --icount --profile, whose
      QEMU plugin lib/insn_profile.c counts every instruction the vCPUs
      execute in one benchmark cell's measured time): the instructions of
      each kernel function and of user space, their share, and with
      --per-op (the cell's guest instructions per op, from its table) per
      op.

Each query stops the vCPUs for a moment, so figures printed meanwhile are a
little lower; the shares are what this is for. A run, e.g.:
  IOU_QEMU_MONITOR=/tmp/mon ./run_selftests.sh --bench --output /tmp/b &
  lib/guest_profile.py sample /tmp/mon /tmp/b/console.log /tmp/samples
The samples are taken in host time: under --icount, where the guest's
clock counts instructions, the figures are not lowered by them, but a
sample weighs a function by the host time QEMU spends on it, which is not
its instructions (helpers, TLB flushes and exceptions cost more); the
insns report counts them exactly.
"""
import bisect
import collections
import os
import re
import socket
import sys
import time

REGS = re.compile(r"RIP=([0-9a-f]+) RFL=\S+ \[.*?\] CPL=(\d) .*?HLT=(\d)")


def read_prompt(sock):
    buf = b""
    while not buf.endswith(b"(qemu) "):
        data = sock.recv(65536)
        if not data:
            raise EOFError
        buf += data
    return buf.decode(errors="replace")


def count_lines(path):
    try:
        with open(path, errors="replace") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def sample(monitor, console, out):
    while not os.path.exists(monitor):
        time.sleep(0.2)
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(monitor)
    with open(out, "w") as f:
        try:
            read_prompt(sock)
            while True:
                sock.sendall(b"info registers -a\n")
                regs = read_prompt(sock)
                now, lines = time.time(), count_lines(console)
                for cpu, m in enumerate(REGS.finditer(regs)):
                    f.write(f"{now:.3f}\t{lines}\t{cpu}\t{m.group(2)}\t"
                            f"{m.group(3)}\t{m.group(1)}\n")
                f.flush()
                time.sleep(0.005)
        except (EOFError, OSError):
            pass  # QEMU is gone
    return 0


def load_symbols(system_map):
    syms = []
    with open(system_map) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tTwW":
                syms.append((int(addr, 16), name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def report(samples, system_map, console, top):
    addrs, names = load_symbols(system_map)
    with open(console, errors="replace") as f:
        lines = f.read().split("\n")
    groups = collections.defaultdict(list)
    with open(samples) as f:
        for line in f:
            _, nlines, _, cpl, halted, rip = line.split()
            groups[int(nlines)].append((cpl, halted, int(rip, 16)))
    for nlines in sorted(groups):
        group = groups[nlines]
        total = len(group)
        label = lines[nlines - 1].strip() if 0 < nlines <= len(lines) else "?"
        user = sum(1 for cpl, _, _ in group if cpl == "3")
        halted = sum(1 for _, hlt, _ in group if hlt == "1")
        funcs = collections.Counter()
        for cpl, hlt, rip in group:
            if cpl == "0" and hlt == "0":
                i = bisect.bisect_right(addrs, rip) - 1
                funcs[names[i] if i >= 0 else hex(rip)] += 1
        print(f"== after: {label[:72]}")
        print(f"   {total} samples: user {100 * user / total:.0f}%, "
              f"halted {100 * halted / total:.0f}%")
        for name, n in funcs.most_common(top):
            print(f"   {100 * n / total:5.1f}% {name}")
    return 0


KERNEL_BASE = 0xffff800000000000


def insns(profile, system_map, per_op=None, top=40):
    """Instructions per kernel function (user space as one line) from the
    plugin's counts: each instruction's executions, given to the symbol
    it is in (System.map; a label inside a function, such as
    entry_SYSCALL_64's, counts as a symbol of its own)."""
    addrs, names = load_symbols(system_map)
    funcs = collections.Counter()
    total = 0
    with open(profile) as f:
        for line in f:
            addr, count = line.split()
            addr, count = int(addr, 16), int(count)
            total += count
            if addr < KERNEL_BASE:
                funcs["[user space]"] += count
                continue
            i = bisect.bisect_right(addrs, addr) - 1
            funcs[names[i] if i >= 0 else hex(addr)] += count
    if not total:
        print(f"{profile}: no instructions counted")
        return 1
    scale = per_op / total if per_op else None
    print(f"{profile}: {total} guest instructions counted"
          + (f", {total / per_op:.0f} ops at {per_op:g} per op" if per_op else ""))
    print(f"  {'share':>6} {'per op' if per_op else '':>7}  function")
    for name, n in funcs.most_common(top):
        op = f"{n * scale:7.0f}" if scale else ""
        print(f"  {100 * n / total:5.1f}% {op:>7}  {name}")
    rest = total - sum(n for _, n in funcs.most_common(top))
    if rest:
        op = f"{rest * scale:7.0f}" if scale else ""
        print(f"  {100 * rest / total:5.1f}% {op:>7}  ({len(funcs) - top} other functions)")
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "insns":
        per_op, top, rest = None, 40, argv[4:]
        while rest:
            if rest[0] == "--per-op" and len(rest) > 1:
                per_op = float(rest[1])
            elif rest[0] == "--top" and len(rest) > 1:
                top = int(rest[1])
            else:
                print(__doc__, file=sys.stderr)
                return 2
            rest = rest[2:]
        return insns(argv[2], argv[3], per_op, top)
    if len(argv) == 5 and argv[1] == "sample":
        return sample(*argv[2:5])
    if len(argv) in (5, 6) and argv[1] == "report":
        top = int(argv[5]) if len(argv) == 6 else 15
        return report(argv[2], argv[3], argv[4], top)
    print(__doc__, file=sys.stderr if len(argv) > 1 and argv[1] not in
          ("-h", "--help") else sys.stdout)
    return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
