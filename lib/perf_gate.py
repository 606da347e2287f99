#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The performance gate's ratios, from the benchmarks' --icount tables.

  perf_gate.py ratios BENCH_TXT
      print every ratio the tables give: "value<TAB>cell"
  perf_gate.py check BENCH_TXT FLOORS
      compare each ratio with its floor in FLOORS; print one line per
      floor and "perf: N ratios held, N below their floor" (", N missing"
      when a floor's cell is not in the tables); exit 1 if any is below
      or missing
  perf_gate.py update BENCH_TXT FLOORS [MARGIN]
      write FLOORS from this run: each ratio less MARGIN (default 0.02,
      2%), rounded down, with the value measured

BENCH_TXT is what splice_bench -i and ioctl_bench -i printed (bench.txt of
run_selftests.sh --icount). A ratio is ops/s of a cell over ops/s of the
cell it is compared with, which under -icount is instructions per op of
the other cell over this one's: a ratio falls when the cell takes more
instructions. Cells:
  splice_bench WORKLOAD QDn MODE/splice(2)   inline and inline reg
  splice_bench ring floor QDn NOP/getppid()
  ioctl_bench FILE METHOD/ioctl(2)           every ring row
  ioctl_bench tcp RING/URING_CMD             IORING_OP_IOCTL against
                                             SOCKET_URING_OP_SIOCINQ
  ioctl_bench - NOP.../getppid()
FLOORS: "floor measured cell" per line, '#' comments.
"""
import math
import re
import sys

SPLICE_ROW = re.compile(r"^(?P<wl>\S.*?)\s+(?P<qd>\d+)  (?P<mode>\S.*?)\s+"
                        r"(?P<ops>\d+)\s+(?P<insn>\d+)\s+[\d.]+\s+\d+$")
IOCTL_ROW = re.compile(r"^(?P<file>pipe|unix|tcp|-)\s+(?P<method>\S.*?)\s+"
                       r"(?P<ops>\d+)\s+(?P<rate>\d+)\s+(?P<insn>\d+)"
                       r"(?:\s+[\d.]+x)?$")


def read_tables(path):
    """Instructions per op of each cell: {("splice", wl, qd, mode): n} and
    {("ioctl", file, method): n}. Only tables printed in instruction
    counts (-i) are read."""
    cells = {}
    section = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip()
            # the tables' headers; in instruction counts they have insn/op
            if line.startswith("workload "):
                section = "splice" if "insn/op" in line else None
                continue
            if line.startswith("file "):
                section = "ioctl" if "insn/op" in line else None
                continue
            if line.startswith(("conns ", "IOU-", "splice_bench:", "FIONREAD:")):
                section = None
                continue
            if section == "splice":
                m = SPLICE_ROW.match(line)
                if m:
                    cells[("splice", m["wl"], int(m["qd"]), m["mode"])] = int(m["insn"])
            elif section == "ioctl":
                m = IOCTL_ROW.match(line)
                if m:
                    cells[("ioctl", m["file"], m["method"])] = int(m["insn"])
    return cells


def ratios(cells):
    """[(cell name, ratio)] in the order of the tables."""
    out = []

    def add(name, base, this):
        if base in cells and this in cells and cells[this] > 0:
            out.append((name, cells[base] / cells[this]))

    splice = [k for k in cells if k[0] == "splice"]
    for _, wl, qd, mode in splice:
        if wl == "ring floor":
            if mode == "NOP":
                add(f"splice_bench ring floor QD{qd} NOP/getppid()",
                    ("splice", wl, qd, "getppid()"), ("splice", wl, qd, mode))
        elif mode in ("inline", "inline reg"):
            add(f"splice_bench {wl} QD{qd} {mode}/splice(2)",
                ("splice", wl, qd, "splice(2)"), ("splice", wl, qd, mode))
    for _, file, method in [k for k in cells if k[0] == "ioctl"]:
        if file == "-":
            if method.startswith("NOP"):
                add(f"ioctl_bench - {method}/getppid()",
                    ("ioctl", "-", "getppid()"), ("ioctl", file, method))
        elif method != "ioctl(2)":
            add(f"ioctl_bench {file} {method}/ioctl(2)",
                ("ioctl", file, "ioctl(2)"), ("ioctl", file, method))
    add("ioctl_bench tcp ring depth 32/uring_cmd depth 32",
        ("ioctl", "tcp", "uring_cmd depth 32"), ("ioctl", "tcp", "ring depth 32"))
    add("ioctl_bench tcp ring 32, fixed, prefill/uring_cmd 32, fixed, prefill",
        ("ioctl", "tcp", "uring_cmd 32, fixed, prefill"),
        ("ioctl", "tcp", "ring 32, fixed, prefill"))
    return out


def read_floors(path):
    floors = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) != 3:
                sys.exit(f"{path}:{n}: not \"floor measured cell\": {line}")
            floors.append((parts[2], float(parts[0]), float(parts[1])))
    return floors


def check(bench, floors_path):
    measured = dict(ratios(read_tables(bench)))
    floors = read_floors(floors_path)
    held = below = missing = 0
    print(f"{'cell':<66} {'ratio':>7} {'floor':>6}")
    for name, floor, _ in floors:
        value = measured.get(name)
        if value is None:
            missing += 1
            print(f"{name:<66} {'-':>7} {floor:6.3f}  MISSING from the tables")
        elif value < floor:
            below += 1
            print(f"{name:<66} {value:7.4f} {floor:6.3f}  BELOW its floor "
                  f"({100 * (value / floor - 1):+.2f}%)")
        else:
            held += 1
            print(f"{name:<66} {value:7.4f} {floor:6.3f}  ok")
    known = {name for name, _, _ in floors}
    for name in measured:
        if name not in known:
            print(f"{name:<66} {measured[name]:7.4f} {'-':>6}  (no floor)")
    summary = f"perf: {held} ratios held, {below} below their floor"
    if missing:
        summary += f", {missing} missing"
    print(summary)
    return 1 if below or missing or not floors else 0


def update(bench, floors_path, margin):
    measured = ratios(read_tables(bench))
    if not measured:
        sys.exit(f"no --icount tables in {bench}")
    with open(floors_path, "w") as f:
        f.write(
            "# The performance gate's floors (run_perf_gate.sh): a ratio of two\n"
            "# cells of the benchmarks' --icount tables (lib/perf_gate.py says\n"
            "# which) may not fall below its floor. Written by\n"
            f"# run_perf_gate.sh --update-floors: the measured ratio less {100 * margin:g}%,\n"
            "# rounded down. Raise them as the code gets faster.\n"
            "# floor measured cell\n")
        for name, value in measured:
            floor = math.floor(value * (1 - margin) * 1000) / 1000
            f.write(f"{floor:.3f} {value:.3f} {name}\n")
    print(f"perf: {len(measured)} floors written to {floors_path} "
          f"({100 * margin:g}% below this run)")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "ratios":
        for name, value in ratios(read_tables(argv[2])):
            print(f"{value:.3f}\t{name}")
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    if len(argv) in (4, 5) and argv[1] == "update":
        return update(argv[2], argv[3], float(argv[4]) if len(argv) == 5 else 0.02)
    print(__doc__, file=sys.stderr if len(argv) > 1 and argv[1] not in
          ("-h", "--help") else sys.stdout)
    return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
