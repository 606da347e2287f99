#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the run_selftests.sh guest: mount what the tests need, run the
# installed kselftests and the --run extras (or give a shell), print the
# kernel log, power off. Lines starting with IOU- are read by the host.
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
# Applets where scripts look for them (kselftest's runner: /usr/bin/timeout).
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# devtmpfs has no /dev/fd or /dev/std*; run_kselftest.sh logs to /dev/stdout.
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
# The kernel's messages go to the second serial port (console=ttyS1), which
# run_selftests.sh streams into kmsg.log as they come, so that a guest
# killed by the timeout still leaves its hung-task or lockdep report
# there. /dev/console is then ttyS1 too: what /init and the tests print
# goes to the first port, the host's console.log, with no kernel message
# in its lines. (--shell has the kernel's console on ttyS0.)
if ! grep -qw ttyS0 /sys/class/tty/console/active 2>/dev/null; then
	exec </dev/ttyS0 >/dev/ttyS0 2>&1
fi
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t tmpfs tmpfs /dev/shm
ip link set lo up 2>/dev/null
hostname iou-guest
# "applied" or "absent": run_selftests.sh says whether it built the kernel
# with the series; iou_series_absent() (selftests/iou_helpers.h) believes it
# and fails a program whose probe disagrees.
IOU_SERIES=$(cat /iou-series 2>/dev/null)
export IOU_SERIES
# NAME=VALUE lines the runner wrote for the tests (run_selftests.sh says why)
if [ -f /iou-env ]; then
	while IFS= read -r assignment; do
		export "${assignment?}"
	done </iou-env
fi
# run_selftests.sh --icount: QEMU's clock counts instructions (1 ns each,
# none while idle); the benchmarks read IOU_ICOUNT and say so in their tables.
if [ -f /iou-icount ]; then
	export IOU_ICOUNT=1
fi
# On a line of its own: the firmware's last output does not end one.
echo
echo "IOU-GUEST-START $(uname -r)"
# The host checks it against QEMU's -smp: races need a second CPU.
echo "IOU-GUEST-CPUS $(grep -c '^processor' /proc/cpuinfo)"
[ -z "${IOU_ICOUNT:-}" ] || echo "IOU-ICOUNT $(cat /iou-icount): the guest's clock counts instructions"
# The ext4 disk that run_selftests.sh attaches (virtio, /dev/vda): a page
# cache on a block device for splice_file and splice_bench, which skip
# without it; this line says why it is missing.
mkdir -p /mnt/ext4
tries=0
while [ ! -b /dev/vda ] && [ "$tries" -lt 20 ]; do
	usleep 100000
	tries=$((tries + 1))
done
if ! err=$(mount -t ext4 /dev/vda /mnt/ext4 2>&1); then
	echo "IOU-EXT4 /dev/vda is not mounted on /mnt/ext4: ${err:-mount failed}"
fi

# liburing's tests make their working files in the current directory, and
# run from there as ./<name> (timeout.t execs ./exec-target.t): a folder on
# the ext4 disk holding a link to each program of /liburing, so that they
# work on a disk file system, not on the initramfs' tmpfs (there, on 6.12,
# eeed8b54e0df.t's RWF_NOWAIT read got -EOPNOTSUPP and 500f9fbadef8.t's
# IOPOLL O_DIRECT writes skipped; both pass on ext4). No disk, no run: the
# tests would be on tmpfs again.
liburing_workdir() {
	local disk
	disk=$(grep ' /mnt/ext4 ext4 ' /proc/mounts)
	if [ -z "$disk" ]; then
		echo "IOU-LIBURING-SETUP /mnt/ext4 is not mounted: liburing's tests not run"
		return 1
	fi
	mkdir -p /mnt/ext4/liburing && cd /mnt/ext4/liburing || return 1
	ln -sf /liburing/*.t .
	echo "IOU-LIBURING-CWD $PWD, on $disk"
}

if [ "$(cat /iou-mode)" = shell ]; then
	if [ -d /liburing ]; then
		liburing_workdir
		echo "liburing's tests are in /liburing, run from $PWD: ./nop.t; the list run is /liburing/iou-tests"
	else
		cd /kselftest || exit
		echo "kselftests are in /kselftest: ./run_kselftest.sh [-t io_uring:splice_tee]"
	fi
	echo "extra programs (--run) are in /extra; exit powers the guest off"
	setsid cttyhack sh -l
	reboot -f
fi

# The kernel's messages are on the other port (kmsg.log); the whole kernel
# log is printed here too at the end.
# A --coverage kernel: the counters of the boot, when the KUnit suites ran,
# go to the host first; the tests start from zero (lib/guest-gcov.sh).
[ -x /iou-gcov ] && /iou-gcov kunit

# liburing's tests the way its runtests.sh runs them (in liburing_workdir):
# exit 0 pass, 77 skip, other fail, 124 timed out. The
# kernel's messages since the previous test follow each one, so that the host
# pins a splat on the test that caused it. A test listed in iou-flaky that
# fails runs once more, with the same markers: the host reads both runs.
run_liburing() {
	local limit name rc
	limit=$(cat /liburing/iou-timeout)
	# No brk randomization (stack and mmap stay random): the syzkaller
	# reproducers map 16 MB MAP_FIXED at 0x20000000, and x86_64 puts a
	# static program's brk heap, which holds glibc's TLS, anywhere in the
	# 1 GB above its .bss: about 1 run in 60 they overwrite their own TLS
	# and crash.
	echo 1 >/proc/sys/kernel/randomize_va_space
	echo "IOU-LIBURING-DMESG-BEGIN (boot)"
	dmesg -c
	echo "IOU-LIBURING-DMESG-END"
	while read -r name; do
		rc=0
		run_liburing_test "$name" "$limit" || rc=$?
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && grep -qxF "$name" /liburing/iou-flaky; then
			run_liburing_test "$name" "$limit" || true
		fi
	done </liburing/iou-tests
}

# One run of one liburing test (name, timeout) between the host's markers;
# returns the test's exit status.
run_liburing_test() {
	local name=$1 limit=$2 start end rc
	echo "IOU-LIBURING-BEGIN $name"
	echo "iou: liburing test $name" >/dev/kmsg
	start=$(cut -d' ' -f1 /proc/uptime)
	/usr/bin/timeout -s INT -k 10 "$limit" "./$name" </dev/null 2>&1
	rc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	# On a line of its own even if the test's output did not end one.
	echo
	echo "IOU-LIBURING-END $name rc=$rc secs=$(awk "BEGIN { print $end - $start }")"
	echo "IOU-LIBURING-DMESG-BEGIN $name"
	dmesg -c
	echo "IOU-LIBURING-DMESG-END"
	return "$rc"
}

if [ -d /liburing ]; then
	liburing_workdir && run_liburing
elif [ "$(cat /iou-mode)" = extra ]; then
	# --icount --run: only the programs given.
	:
elif [ "$(cat /iou-mode)" = bench ]; then
	# The benchmarks instead of the tests, each reported like an extra.
	for prog in /kselftest/io_uring/*_bench; do
		[ -x "$prog" ] && ln -s "$prog" /extra/
	done
else
	# The host checks the plan and this status: a runner killed halfway
	# (the OOM killer in a KASAN guest) must not pass for a short run.
	# Every test gets io_uring's 300 s (tools/testing/selftests/splice
	# sets 5 s, which the debug kernel under TCG overran on a slow host:
	# short_splice_read.sh, still making progress); the guest's own
	# timeout bounds the whole run.
	cd /kselftest && ./run_kselftest.sh --override-timeout 300
	echo "IOU-KSELFTEST-EXIT rc=$?"
fi
for prog in /extra/*; do
	[ -f "$prog" ] || continue
	name=${prog##*/}
	echo "IOU-RUN-BEGIN $name"
	chmod +x "$prog"
	(cd /tmp && timeout 600 "$prog")
	echo "IOU-RUN-END $name rc=$?"
done
[ -x /iou-gcov ] && /iou-gcov selftests
# A debug kernel: look for leaks once the tests are done. kmemleak reports
# only objects that stayed unreferenced over two scans.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 5
	echo scan >/sys/kernel/debug/kmemleak
	echo "IOU-KMEMLEAK-BEGIN"
	cat /sys/kernel/debug/kmemleak
	echo "IOU-KMEMLEAK-END"
fi
echo "IOU-DMESG-BEGIN"
dmesg
echo "IOU-DMESG-END"
echo "IOU-GUEST-DONE"
reboot -f
