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

Each query stops the vCPUs for a moment, so figures printed meanwhile are a
little lower; the shares are what this is for. A run, e.g.:
  IOU_QEMU_MONITOR=/tmp/mon ./run_selftests.sh --bench --output /tmp/b &
  lib/guest_profile.py sample /tmp/mon /tmp/b/console.log /tmp/samples
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


def main(argv):
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
