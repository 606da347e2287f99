#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a guest kernel from Debian's linux-source-6.12 with the series
# applied, build tools/testing/selftests/{io_uring,splice} against its
# headers, boot it under QEMU with a busybox initramfs and run the selftests.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"
# shellcheck source=lib/coverage.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/coverage.sh"
# shellcheck source=lib/liburing.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/liburing.sh"

IOU_GUEST_TIMEOUT=${IOU_GUEST_TIMEOUT:-}
IOU_GUEST_MEM=${IOU_GUEST_MEM:-2G}
IOU_GUEST_CPUS=${IOU_GUEST_CPUS:-2}
IOU_QEMU_MONITOR=${IOU_QEMU_MONITOR:-}
IOU_KVM=${IOU_KVM:-0}
IOU_SELFTEST_TARGETS=${IOU_SELFTEST_TARGETS:-io_uring splice}
# pollfree.t and a4c0b3decb33.t took 41-60 s with other guests running beside
# them (2026-12-07), and timed out at the 60 s this was until then.
IOU_LIBURING_TIMEOUT=${IOU_LIBURING_TIMEOUT:-120}

usage() {
	cat <<EOF
Usage: $0 [options]

Applies the series, builds the guest kernel (config: kconfig-fragments/selftests
on allnoconfig) and the selftests ($IOU_SELFTEST_TARGETS), boots QEMU (TCG)
with a busybox initramfs and an ext4 disk (a sparse 256 MiB ext4.img in the
build directory, made anew each run with mkfs.ext4 -d; the guest mounts it on
/mnt/ext4, in every mode), runs run_kselftest.sh and prints each result and
"selftests: N passed, N failed, N skipped". Fails on any failed test, a guest
timeout, a kernel panic, or a splat (BUG, WARNING, Oops, KASAN, UBSAN,
lockdep, sleeping in atomic context, hung task, RCU stall, starved RCU
kthread) in the kernel's messages. A program fails on any "not ok" line of
its output (nested or indented ones included, --run programs' too) even if
it exits 0; a patched run (not --pristine) fails on any skip (exit 4, --run
programs' included, or a case's "# SKIP") that lib/selftest-skips does not
list, and on any expected failure ("ok ... # XFAIL": 6.12's behaviour). The
guest's IOU_SERIES says whether the series is applied ("applied" or
"absent"); the tests believe it and fail if their probe disagrees.

Options:
  --run PATH...    also copy these programs or scripts into the guest and run
                   each after the suite (exit 0 pass, 4 skip, other fail);
                   takes every following argument
  --bench          run the benchmarks (selftests/*_bench: inline splice vs
                   IOSQE_ASYNC vs splice(2), ring FIONREAD vs ioctl(2)) in
                   the guest instead of the tests; their tables go to
                   bench.txt in the results folder. With --run, only the
                   programs given (e.g. a script calling splice_bench -w
                   ext4 -n 15), on wall clock
  --icount         count instructions: QEMU's -icount shift=0,sleep=off (TCG
                   only), so the guest's clock advances 1 ns per instruction
                   the vCPUs execute and stands still while they idle. With
                   --bench, the benchmarks print guest instructions per op
                   and ops per guest second, each cell run once (the counts
                   repeat); with --run, only those programs run (not the
                   suite), their output in bench.txt too. The guest gets
                   IOU_ICOUNT=1, which the benchmarks read (their -i)
  --profile        with --icount: an instruction profile of every benchmark
                   cell (lib/insn_profile.c, a QEMU plugin built on the
                   host, counts each instruction executed between the
                   markers a cell runs as its measured time starts and
                   ends): profile.N, the Nth cell to end, and
                   profile.N.txt, its instructions per function
                   (lib/guest_profile.py insns); keep it to one cell
                   (e.g. --run a script calling splice_bench -w pipe4k
                   -m inline): the profiles go in the order the cells end
  --shell          boot the same guest to an interactive shell instead; run
                   ./run_kselftest.sh (or ./run_kselftest.sh -t io_uring:splice_tee)
                   in /kselftest, leave with "exit" (powers the guest off)
  --timeout SECS   guest timeout (env IOU_GUEST_TIMEOUT, default 900, 1800
                   with --debug)
  --debug          add kconfig-fragments/debug (KASAN, KFENCE, UBSAN, lockdep,
                   atomic-sleep checks, kmemleak scanned after the tests, hung
                   tasks); built in its own directory
  --coverage       gcov for io_uring/ and every other C file the series
                   changes (kconfig-fragments/coverage, lib/coverage.sh;
                   own build directory); the
                   KUnit suites run at the guest's boot, then the selftests;
                   lcov's HTML report in coverage/html, and coverage.txt:
                   lines and branches per file, and the lines run of every
                   function the series adds or changes, "!" below 90%
  --pristine       boot Debian's 6.12 without patches/ (the tests are still
                   added), built in its own tree and build directory: today's
                   behaviour, to compare with the series
  --liburing       run liburing's own test suite instead of the selftests:
                   Debian's liburing source package (apt-get source, adding a
                   deb-src entry for the archive of the deb lines if apt has
                   none) is built on the host (static) into
                   \$IOU_CACHE_DIR/liburing/,
                   each test/*.t runs in the guest (exit 0 pass, 77 skip, other
                   fail; timeout IOU_LIBURING_TIMEOUT; dmesg checked after
                   each, a splat fails that test) and the last line is
                   "liburing: N passed, N failed, N skipped". The gate:
                   with --pristine, every failure must be listed in
                   lib/liburing-known-failures (with its reason) and fail
                   exactly as listed there: its exit status and every line
                   of its output, no other line; the results become the
                   baseline in the cache. Without --pristine, a test that
                   passed in that baseline must not fail, nor may a test
                   fail that is not listed or not as listed. A test listed
                   as flaky that fails runs once more; it fails the gate
                   only if it fails twice. Run --pristine
                   --liburing first (the patched run stops early without a
                   baseline)
  --kvm            use KVM instead of TCG (opt-in; env IOU_KVM=1)
  --output DIR     results folder (default: \$IOU_OUT_DIR/selftests-<date>,
                   or bench-<date> with --bench; bench-icount-<date> and
                   run-icount-<date> with --icount)
  -h, --help       this text

More environment:
  IOU_GUEST_MEM    guest memory (default $IOU_GUEST_MEM)
  IOU_GUEST_CPUS   guest CPUs (default $IOU_GUEST_CPUS)
  IOU_QEMU_MONITOR path of a unix socket for QEMU's monitor (default none):
                   to see where the vCPUs of a guest that hangs are, e.g.
                   "info registers -a" (RIP to a symbol: System.map in the
                   build directory); lib/guest_profile.py samples it into
                   a profile of each benchmark cell
  IOU_SELFTEST_TARGETS
                   selftest directories to build and run
                   (default "$IOU_SELFTEST_TARGETS")
  IOU_LIBURING_TIMEOUT
                   --liburing: seconds each liburing test may run
                   (default $IOU_LIBURING_TIMEOUT)

Results: console.log (the guest's first serial port: what /init and the
tests print, and the kernel log they print at the end), kmsg.log (the
kernel's messages, streamed from a second serial port, console=ttyS1, while
the guest runs: read for splats too, and what is left of a guest killed by
the timeout), config.log, build.log, selftests-build.log and results.txt
(what was printed) in the results folder; \$IOU_OUT_DIR/selftests-latest
(bench-latest, run-latest) points at the newest one. With --liburing:
liburing[-pristine]-<date>/ with console.log, kmsg.log, liburing-build.log,
results.txt and liburing-results.tsv (test, result, exit code, seconds);
\$IOU_OUT_DIR/liburing-latest points at the newest, and the pristine baseline
is liburing-results-pristine-<setup>.tsv in
\$IOU_CACHE_DIR/linux-source-<version>/, <setup> a digest of the guest's
runner and the tests' build (lib/guest-init.sh, lib/liburing.sh): a change
to either needs a new --pristine --liburing run.

$(iou_env_help)
EOF
}

mode=run
icount=0
profile=0
debug=0
coverage=0
liburing=0
out=""
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--run) shift; extra=("$@"); [ "${#extra[@]}" -gt 0 ] || iou_die "--run needs a path"; break ;;
	--shell) mode=shell ;;
	--bench) mode=bench ;;
	--icount) icount=1 ;;
	--profile) profile=1 ;;
	--debug) debug=1 ;;
	--coverage) coverage=1 ;;
	--pristine) IOU_WITH_SERIES=0 ;;
	--liburing) liburing=1 ;;
	--timeout) IOU_GUEST_TIMEOUT=${2:?--timeout needs a value}; shift ;;
	--kvm) IOU_KVM=1 ;;
	--output) out=${2:?--output needs a value}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; iou_die "unknown option: $1" ;;
	esac
	shift
done
for path in "${extra[@]}"; do
	[ -f "$path" ] || iou_die "--run: no such file: $path"
done
[ "$liburing" = 0 ] || [ "${#extra[@]}" -eq 0 ] || iou_die "--run goes with the selftests, not --liburing"
[ "$liburing" = 0 ] || [ "$mode" != bench ] || iou_die "--bench and --liburing are separate runs"

[ "$profile" = 0 ] || [ "$icount" = 1 ] || iou_die "--profile counts instructions: it needs --icount"
# --bench --run: only the programs given, neither suite nor benchmarks.
if [ "$mode" = bench ] && [ "${#extra[@]}" -gt 0 ]; then
	mode=extra
fi
if [ "$icount" = 1 ]; then
	[ "$IOU_KVM" != 1 ] || iou_die "--icount is TCG's: not with --kvm"
	[ "$liburing" = 0 ] || iou_die "--icount goes with --bench or --run, not --liburing"
	[ "$coverage" = 0 ] || iou_die "--icount goes with --bench or --run, not --coverage"
	# --run under --icount: only the programs given, not the suite.
	if [ "$mode" = run ]; then
		[ "${#extra[@]}" -gt 0 ] || iou_die "--icount goes with --bench or --run"
		mode=extra
	fi
fi
if [ "$coverage" = 1 ]; then
	[ "$mode" != bench ] || iou_die "--coverage and --bench do not go together"
	[ "$IOU_WITH_SERIES" = 1 ] || iou_die "--coverage reports on the series: not with --pristine"
	[ "$liburing" = 0 ] || iou_die "--coverage and --liburing do not go together"
fi

iou_prepare_host
[ "$coverage" = 0 ] || iou_coverage_prepare
iou_prepare_tree

variant=""
extra_fragments=()
if [ "$IOU_WITH_SERIES" != 1 ]; then
	variant+=-pristine
fi
if [ "$debug" = 1 ]; then
	extra_fragments+=(debug)
	variant+=-debug
fi
# The debug kernel's tests take about twice the plain one's time, and a
# loaded host stretches both.
IOU_GUEST_TIMEOUT=${IOU_GUEST_TIMEOUT:-$([ "$debug" = 1 ] && echo 1800 || echo 900)}
kmake_args=()
if [ "$coverage" = 1 ]; then
	extra_fragments+=(coverage)
	kmake_args+=("${IOU_COVERAGE_MAKE_ARGS[@]}")
	variant+=-coverage
fi
mapfile -t fragments < <(iou_guest_fragments "${extra_fragments[@]}")
# The pristine tree has a build directory of its own already.
build=$(iou_guest_build_dir "${variant#-pristine}")
kind=selftests
[ "$mode" = bench ] && kind=bench
[ "$mode" = extra ] && kind=run
[ "$liburing" = 0 ] || kind=liburing
# The pristine results a patched --liburing run is compared with, made
# with the same guest runner and test build (iou_liburing_setup).
baseline=$IOU_VERSION_DIR/liburing-results-pristine${variant#-pristine}-$(iou_liburing_setup).tsv
if [ "$liburing" = 1 ] && [ "$IOU_WITH_SERIES" = 1 ] && [ "$mode" = run ] && [ ! -f "$baseline" ]; then
	iou_die "no pristine liburing results ($baseline): run $0 --pristine --liburing$([ "$debug" = 1 ] && echo " --debug") first"
fi
iou_lock_build_dir "$build"
out=${out:-$IOU_OUT_DIR/$kind$variant$([ "$icount" = 0 ] || echo -icount)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$build" "$out"
ln -sfn "$(realpath "$out")" "$IOU_OUT_DIR/$kind-latest"

# Copy an ELF program's shared libraries (and its loader) into the rootfs.
copy_shared_libs() {
	local rootfs=$1 elf=$2 lib
	while read -r lib; do
		[ -e "$rootfs$lib" ] && continue
		mkdir -p "$rootfs$(dirname "$lib")"
		cp -L "$lib" "$rootfs$lib"
	done < <(ldd "$elf" 2>/dev/null | grep -oE '/[^ ]+' || true)
}

# gen_init_cpio's list format, from a directory tree; /dev/console must exist
# before init runs so that init has its stdout.
cpio_list() {
	local rootfs=$1 path rel
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	while read -r path; do
		rel=${path#"$rootfs"}
		[ -n "$rel" ] || continue
		if [ -L "$path" ]; then
			echo "slink $rel $(readlink "$path") 0777 0 0"
		elif [ -d "$path" ]; then
			echo "dir $rel $(stat -c %a "$path") 0 0"
		else
			echo "file $rel $path $(stat -c %a "$path") 0 0"
		fi
	done < <(find "$rootfs" | sort)
}

build_initramfs() {
	local rootfs=$build/rootfs path name
	rm -rf "$rootfs"
	mkdir -p "$rootfs"/{bin,proc,sys,tmp,extra}
	if [ "$liburing" = 1 ]; then
		install_liburing_tests "$rootfs/liburing"
	else
		cp -a "$build/kselftest_install" "$rootfs/kselftest"
	fi
	make -s ARCH=x86_64 O="$build" INSTALL_MOD_PATH="$rootfs" modules_install
	cp /bin/busybox "$rootfs/bin/busybox"
	# kselftest's runner needs coreutils' timeout (--foreground).
	mkdir -p "$rootfs/usr/bin"
	cp /usr/bin/timeout "$rootfs/usr/bin/timeout"
	for path in "${extra[@]}"; do
		cp "$path" "$rootfs/extra/"
	done
	cp "$IOU_REPO/lib/guest-init.sh" "$rootfs/init"
	[ "$coverage" = 0 ] || iou_coverage_initramfs "$rootfs"
	chmod 755 "$rootfs/init"
	echo "$mode" >"$rootfs/iou-mode"
	# /init exports IOU_ICOUNT=1 when the guest's clock counts instructions.
	[ "$icount" = 0 ] || echo "shift=0,sleep=off" >"$rootfs/iou-icount"
	# Whether this kernel has the series is the runner's to say, not the
	# tests' to guess: /init exports it as IOU_SERIES.
	if [ "$IOU_WITH_SERIES" = 1 ]; then
		echo applied >"$rootfs/iou-series"
	else
		echo absent >"$rootfs/iou-series"
	fi
	# Variables /init exports for the tests. KASAN and lockdep make each
	# TCP connection about ten times dearer: sendfile_many serves 1000 at
	# once on the debug kernel (10,000 on the others).
	: >"$rootfs/iou-env"
	[ "$debug" = 0 ] || echo SENDFILE_MANY_N=1000 >>"$rootfs/iou-env"
	while read -r path; do
		if [ "$(head -c 4 "$path" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			copy_shared_libs "$rootfs" "$path"
		fi
	done < <(find "$rootfs/kselftest" "$rootfs/liburing" "$rootfs/extra" "$rootfs/usr/bin" \
		-type f -perm -u+x 2>/dev/null)
	cpio_list "$rootfs" >"$build/initramfs.list"
	"$build/usr/gen_init_cpio" "$build/initramfs.list" >"$build/initramfs.cpio"
	for name in "${extra[@]}"; do
		iou_log "with --run $(basename "$name")"
	done
}

# liburing's test programs for the guest: /liburing/*.t, the list to run
# (minus the ones lib/liburing-known-failures excludes), the flaky ones
# (run again once when they fail) and the timeout.
install_liburing_tests() {
	local dir=$1 name excluded
	cp -a "$IOU_LIBURING_TESTS" "$dir"
	iou_liburing_known flaky >"$dir/iou-flaky"
	excluded=$(iou_liburing_known exclude)
	: >"$dir/iou-tests"
	for name in "$dir"/*.t; do
		name=${name##*/}
		grep -qxF "$name" <<<"$excluded" || echo "$name" >>"$dir/iou-tests"
	done
	echo "$IOU_LIBURING_TIMEOUT" >"$dir/iou-timeout"
}

# The guest's disk: an ext4 file system that lib/guest-init.sh mounts on
# /mnt/ext4 (/dev/vda), a page cache on a block device for splice_file and
# splice_bench. Made anew each run, without mounting anything, by
# mkfs.ext4 -d from a seed folder holding the marker file iou-ext4; a
# sparse file in the build directory (its lock keeps runs apart). 4 KiB
# blocks as on a real disk (mke2fs picks 1 KiB for one this small), and
# the inode tables written now rather than by the guest's ext4lazyinit
# thread while the tests run.
make_ext4_disk() {
	local seed=$build/ext4-seed
	rm -rf "$seed" "$ext4_image"
	mkdir -p "$seed"
	echo "iou-ext4: made by run_selftests.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$seed/iou-ext4"
	truncate -s 256M "$ext4_image"
	PATH=$PATH:/usr/sbin:/sbin mkfs.ext4 -q -F -b 4096 -L iou-ext4 \
		-E lazy_itable_init=0,lazy_journal_init=0 -d "$seed" "$ext4_image" ||
		iou_die "mkfs.ext4 could not make the guest's disk $ext4_image"
}

if [ "$liburing" = 1 ]; then
	iou_liburing_prepare "$out"
fi

# A pristine guest starts from the patched one's objects when it has none:
# only the files the series changes, and what includes them, are compiled.
if [ "$IOU_WITH_SERIES" = 0 ]; then
	iou_seed_build_dir "$IOU_VERSION_DIR/tree/.build-guest${variant#-pristine}" "$build" \
		"$IOU_VERSION_DIR/tree" "$IOU_TREE"
fi
cd "$IOU_TREE"
iou_configure_guest_kernel "$build" "$out/config.log" "${fragments[@]}"
iou_build_guest_kernel "$build" "$out/build.log" "${kmake_args[@]}"
if [ "$liburing" = 0 ]; then
	rm -rf "$build/kselftest_install"
	iou_run_logged "building the selftests: $IOU_SELFTEST_TARGETS" "$out/selftests-build.log" \
		make -C tools/testing/selftests ARCH=x86_64 O="$build" \
		TARGETS="$IOU_SELFTEST_TARGETS" KSFT_INSTALL_PATH="$build/kselftest_install" install
	# kselftest's make goes on past a target that fails to build; don't.
	if grep -qE ': error: |\*\*\* ' "$out/selftests-build.log"; then
		grep -m 5 -E ': error: |\*\*\* ' "$out/selftests-build.log" >&2
		iou_die "a selftest did not build (log: $out/selftests-build.log)"
	fi
fi
build_initramfs
ext4_image=$build/ext4.img
make_ext4_disk

# Two serial ports: the first (stdio, console.log) for what /init and the
# tests print, the second (kmsg.log) the kernel's console, written as the
# kernel prints (a guest killed by the timeout keeps its last report there).
# lib/guest-init.sh takes ttyS0 for /init's output when the kernel's console
# is not on it. --shell keeps the kernel's console on ttyS0, the shell's
# terminal: the 8250 driver has one console, on one port only.
kmsg=$out/kmsg.log
if [ "$mode" = shell ]; then
	cmdline="console=ttyS0 panic=-1"
else
	cmdline="console=ttyS1 panic=-1"
fi
# PCI interrupts routed from SeaBIOS's MP table (CONFIG_X86_MPPARSE in
# kconfig-fragments/selftests, which also gives the second CPU), not ACPI's
# _PRT: the debug kernel under TCG interprets _PRT's AML so slowly that
# ACPICA's 30 s loop timeout aborts it, and the virtio disk, left without an
# interrupt, hangs the boot (seen on a machine about half as fast as the
# earlier ones).
cmdline+=" pci=noacpi"
# The patched guest has the KUnit suites built in (run_kunit.sh boots the
# same kernel); they run at boot only for --coverage.
[ "$coverage" = 1 ] || cmdline+=" kunit.enable=0"
qemu=(qemu-system-x86_64 -m "$IOU_GUEST_MEM" -smp "$IOU_GUEST_CPUS" -nographic
	-no-reboot -kernel "$build/arch/x86/boot/bzImage" -initrd "$build/initramfs.cpio"
	-append "$cmdline"
	-serial mon:stdio -chardev "file,id=kmsg,path=${kmsg//,/,,}" -serial chardev:kmsg
	-drive "file=${ext4_image//,/,,},if=virtio,format=raw,cache=unsafe")
if [ "$IOU_KVM" = 1 ]; then qemu+=(-accel kvm); else qemu+=(-accel tcg); fi
# One guest nanosecond per instruction executed, none while the vCPUs idle.
[ "$icount" = 0 ] || qemu+=(-icount "shift=0,sleep=off")
if [ "$profile" = 1 ]; then
	rm -f "$out"/profile.*
	gcc -shared -fPIC -O2 -o "$out/insn_profile.so" "$IOU_REPO/lib/insn_profile.c" ||
		iou_die "the profiling plugin lib/insn_profile.c did not build"
	qemu+=(-plugin "${out//,/,,}/insn_profile.so,out=${out//,/,,}/profile")
fi
# The monitor is the one on stdio's mux (Ctrl-A c) unless a socket is asked for.
if [ -n "$IOU_QEMU_MONITOR" ]; then
	qemu+=(-monitor "unix:$IOU_QEMU_MONITOR,server,nowait")
else
	qemu+=(-monitor none)
fi

if [ "$mode" = shell ]; then
	iou_log "booting the guest to a shell (leave with: exit)"
	exec "${qemu[@]}"
fi

iou_log "booting the guest under QEMU ($([ "$IOU_KVM" = 1 ] && echo KVM || echo TCG)$([ "$icount" = 0 ] || echo ", -icount shift=0,sleep=off")), timeout ${IOU_GUEST_TIMEOUT}s (console: $out/console.log, kernel messages: $kmsg)"
rc=0
timeout --foreground -k 10 "$IOU_GUEST_TIMEOUT" "${qemu[@]}" </dev/null |
	tee "$out/console.log" | grep --line-buffered -E '^(ok|not ok) [0-9]+ |^IOU-' |
	grep --line-buffered -vE '^IOU-LIBURING-(BEGIN|DMESG)' || rc=${PIPESTATUS[0]}
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	iou_log "the guest timed out after ${IOU_GUEST_TIMEOUT}s"
fi
iou_log "results in $out"
[ "$coverage" = 0 ] || iou_coverage_extract "$out"
if [ "$profile" = 1 ]; then
	for prof in "$out"/profile.[0-9]*; do
		case $prof in *.txt) continue ;; esac
		[ -f "$prof" ] || continue
		python3 "$IOU_REPO/lib/guest_profile.py" insns "$prof" "$build/System.map" >"$prof.txt"
		iou_log "instruction profile: $prof.txt"
	done
fi
if [ "$mode" = bench ] || [ "$mode" = extra ]; then
	sed -n '/^IOU-RUN-BEGIN/,/^IOU-RUN-END/p' "$out/console.log" | tr -d '\r' |
		{ grep -v '^IOU-RUN-BEGIN' || true; } | sed 's/^IOU-RUN-END \(.*\)/(\1)\n/' >"$out/bench.txt"
	python3 "$IOU_REPO/lib/guest_log.py" bench "$out/console.log" --kmsg "$kmsg" \
		--cpus "$IOU_GUEST_CPUS" |
		tee "$out/results.txt"
	exit
elif [ "$liburing" = 0 ]; then
	status=0
	checks=(--expect "$build/kselftest_install/kselftest-list.txt" --kmsg "$kmsg"
		--cpus "$IOU_GUEST_CPUS")
	# Only the pristine run may skip what the series brings.
	# and only it may have 6.12's expected failures (XFAIL).
	[ "$IOU_WITH_SERIES" != 1 ] || checks+=(--patched --allowed-skips "$IOU_REPO/lib/selftest-skips")
	python3 "$IOU_REPO/lib/guest_log.py" selftests "$out/console.log" "${checks[@]}" |
		tee "$out/results.txt" || status=$?
	if [ "$coverage" = 1 ]; then
		iou_coverage_report "$build" "$out" | tee -a "$out/results.txt"
	fi
	exit "$status"
fi
gate=(--known "$IOU_LIBURING_KNOWN" --timeout "$IOU_LIBURING_TIMEOUT"
	--version "$IOU_LIBURING_VERSION" --results "$out/liburing-results.tsv" --kmsg "$kmsg"
	--cpus "$IOU_GUEST_CPUS")
if [ "$IOU_WITH_SERIES" = 1 ]; then
	gate+=(--baseline "$baseline")
fi
rc=0
python3 "$IOU_REPO/lib/guest_log.py" liburing "$out/console.log" "${gate[@]}" |
	tee "$out/results.txt" || rc=$?
# A finished pristine run becomes the baseline of the patched runs.
if [ "$IOU_WITH_SERIES" != 1 ] && grep -q IOU-GUEST-DONE "$out/console.log"; then
	cp "$out/liburing-results.tsv" "$baseline"
	iou_log "baseline for the patched --liburing runs: $baseline"
fi
exit "$rc"
