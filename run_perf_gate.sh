#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The performance gate: the benchmarks' instruction counts (QEMU -icount)
# on the series' kernel, whose ratios may not fall below the floors in
# lib/perf-floors.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IOU_PERF_SECONDS=${IOU_PERF_SECONDS:-0.05}
IOU_PERF_MARGIN=${IOU_PERF_MARGIN:-0.02}
floors=$repo/lib/perf-floors

usage() {
	cat <<EOF
Usage: $0 [options]

Boots the guest kernel of ./run_selftests.sh under QEMU's -icount
shift=0,sleep=off (./run_selftests.sh --icount --run: the guest's clock
counts instructions, so a cell's figure is its instructions per op and
repeats from run to run) and runs the cells whose work is all in the
benchmark's own thread:
  splice_bench -i -w pipe4k,pipe64k,nop -m inline,inline-reg,splice,nop,getppid
                   (pipe -> pipe 4 KiB and 64 KiB at QD 1 and 32: inline,
                   inline with registered files, splice(2); NOPs through
                   the ring and getppid())
  ioctl_bench -i   (FIONREAD on a pipe, AF_UNIX and TCP: ioctl(2) and every
                   ring row, URING_CMD SIOCINQ, getppid(), NOPs)
not the rows that use io-wq or other threads (async, the TCP and sendfile
workloads, proxy_bench), whose counts leave out idle time and wake-up
latency. From the tables, lib/perf_gate.py computes each ratio (ops/s of a
cell over ops/s of the cell it is compared with: splice(2), ioctl(2),
getppid() or URING_CMD) and compares it with its floor in the floors file;
one line per ratio, then "perf: N ratios held, N below their floor". Fails
if a ratio is below its floor or missing, the guest run failed, or a
benchmark failed.

Options:
  --floors FILE    the floors (default lib/perf-floors: "floor measured
                   cell" per line)
  --update-floors  write the floors file from this run instead of checking:
                   each ratio less the margin (IOU_PERF_MARGIN), rounded down
  --from DIR       check DIR/bench.txt of an earlier run (a results folder
                   of this script or of run_selftests.sh --icount) instead
                   of booting a guest
  --seconds S      measured guest seconds per cell (env IOU_PERF_SECONDS,
                   default $IOU_PERF_SECONDS, i.e. $(awk "BEGIN { print $IOU_PERF_SECONDS * 1e9 }") instructions;
                   splice_bench adds a warm-up of 0.1 s per cell)
  --output DIR     results folder (default: \$IOU_OUT_DIR/perf-<date>):
                   run_selftests.sh's files, bench.txt (the tables) and
                   perf.txt (the gate's lines)
  -h, --help       this text

Environment:
  IOU_PERF_SECONDS as --seconds
  IOU_PERF_MARGIN  --update-floors: how far below the measured ratio a floor
                   goes (default $IOU_PERF_MARGIN, 2%)
  IOU_OUT_DIR      where results go (default: <repo>/out)
  and those of ./run_selftests.sh (--help), which builds and boots the
  guest: IOU_CACHE_DIR, IOU_JOBS, IOU_GUEST_TIMEOUT, IOU_GUEST_MEM,
  IOU_GUEST_CPUS, IOU_LINUX_SOURCE_VERSION
EOF
}

log() { printf '[%s] perf: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

update=0
from=""
out=""
while [ $# -gt 0 ]; do
	case $1 in
	--floors) floors=${2:?--floors needs a file}; shift ;;
	--update-floors) update=1 ;;
	--from) from=${2:?--from needs a folder}; shift ;;
	--seconds) IOU_PERF_SECONDS=${2:?--seconds needs a value}; shift ;;
	--output) out=${2:?--output needs a folder}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option: $1" ;;
	esac
	shift
done
awk -v s="$IOU_PERF_SECONDS" 'BEGIN { exit !(s > 0) }' ||
	die "--seconds must be a positive number: $IOU_PERF_SECONDS"
[ "$update" = 1 ] || [ -f "$floors" ] || die "no floors file: $floors"

start=$SECONDS
if [ -n "$from" ]; then
	out=$from
	[ -f "$out/bench.txt" ] || die "no bench.txt in $from"
else
	out=${out:-${IOU_OUT_DIR:-$repo/out}/perf-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$out"
	out=$(realpath "$out")
	# The guest's part: both benchmarks, one after the other; the
	# IOU- lines are what run_selftests.sh shows while the guest runs.
	guest=$out/perf-gate
	cat >"$guest" <<EOF
#!/bin/sh
# Written by run_perf_gate.sh: the gate's cells, in the --icount guest.
dir=/kselftest/io_uring
echo "IOU-PERF splice_bench: the pipe and ring floor cells, $IOU_PERF_SECONDS guest s each"
\$dir/splice_bench -i -d $IOU_PERF_SECONDS -w pipe4k,pipe64k,nop -m inline,inline-reg,splice,nop,getppid || rc=1
echo "IOU-PERF ioctl_bench: every row, $IOU_PERF_SECONDS guest s each"
\$dir/ioctl_bench -i -d $IOU_PERF_SECONDS || rc=1
echo "IOU-PERF done"
exit \${rc:-0}
EOF
	chmod +x "$guest"
	log "building and booting the guest with --icount (results: $out)"
	rc=0
	"$repo/run_selftests.sh" --icount --output "$out/guest" --run "$guest" >&2 || rc=$?
	cp "$out/guest/bench.txt" "$out/bench.txt" 2>/dev/null || true
	[ "$rc" = 0 ] || die "the --icount guest run failed (exit $rc; $out/guest/results.txt)"
	log "guest run done in $((SECONDS - start))s"
fi

if [ "$update" = 1 ]; then
	python3 "$repo/lib/perf_gate.py" update "$out/bench.txt" "$floors" "$IOU_PERF_MARGIN"
	exit
fi
rc=0
python3 "$repo/lib/perf_gate.py" check "$out/bench.txt" "$floors" | tee "$out/perf.txt" || rc=$?
log "$((SECONDS - start))s in all"
exit "$rc"
