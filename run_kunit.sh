#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build Debian's linux-source-6.12 with the series applied and run the
# series' KUnit suites under QEMU with tools/testing/kunit/kunit.py.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"

IOU_KUNIT_TIMEOUT=${IOU_KUNIT_TIMEOUT:-600}
IOU_KVM=${IOU_KVM:-0}

usage() {
	cat <<EOF
Usage: $0 [options] [FILTER_GLOB]

Applies patches/ and the tests (kunit/, selftests/) to Debian's
linux-source-6.12, builds the guest kernel of run_selftests.sh with the
suites built in (kconfig-fragments/selftests + kunit) incrementally, boots it
under QEMU (TCG, two vCPUs) with "kunit.py exec", then prints
"kunit: N passed, N failed, N skipped".
FILTER_GLOB selects suites or tests, as kunit.py takes it: 'io_uring_sqe*'.

Options:
  --debug          add kconfig-fragments/debug (KASAN, KFENCE, UBSAN, lockdep,
                   atomic-sleep checks, hung tasks): the kernel of
                   run_selftests.sh --debug
  --kvm            boot with KVM instead of TCG (opt-in; env IOU_KVM=1)
  --timeout SECS   guest timeout (env IOU_KUNIT_TIMEOUT, default $IOU_KUNIT_TIMEOUT)
  --output DIR     results folder (default: \$IOU_OUT_DIR/kunit-<date>)
  --update-expected
                   write lib/kunit-expected-cases from this run's suites and
                   case counts (every suite: no FILTER_GLOB), then check the
                   run against it; commit the file after adding or removing
                   KUnit cases or parameter rows
  -h, --help       this text

The run fails on a failed or crashed case, a kernel splat, no case run, a
skipped case that lib/kunit-skips does not list (it lists none: the suites
run on the series' kernel, where nothing they test is missing; each skip is
printed with its reason), and suites or case counts (a parameterised case
counts its rows) that differ from lib/kunit-expected-cases (with a
FILTER_GLOB of suites, only the suites it selects are compared; with one of
cases, none).

Results: kunit.py's output (kunit.log), the raw KTAP (ktap.log), kunit.py's
JSON (kunit.json), the build log (build.log), the checks of skips and case
counts (checks.txt), the kernel splats (splats.log) and the totals line
(summary.txt) in the results folder;
\$IOU_OUT_DIR/kunit-latest points at the newest one.

$(iou_env_help)
EOF
}

filter_glob=""
debug=0
out=""
update_expected=0
expected_cases=$IOU_REPO/lib/kunit-expected-cases
while [ $# -gt 0 ]; do
	case $1 in
	--kvm) IOU_KVM=1 ;;
	--debug) debug=1 ;;
	--timeout) IOU_KUNIT_TIMEOUT=${2:?--timeout needs a value}; shift ;;
	--output) out=${2:?--output needs a value}; shift ;;
	--update-expected) update_expected=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; iou_die "unknown option: $1" ;;
	*) [ -z "$filter_glob" ] || iou_die "only one filter glob"; filter_glob=$1 ;;
	esac
	shift
done
[ "$update_expected" = 0 ] || [ -z "$filter_glob" ] ||
	iou_die "--update-expected counts every suite: no FILTER_GLOB"

iou_prepare_host
iou_prepare_tree

variant=""
extra_fragments=()
if [ "$debug" = 1 ]; then
	variant=-debug
	extra_fragments+=(debug)
fi
# The suites are built into the guest kernel of run_selftests.sh (its
# fragments plus kconfig-fragments/kunit), in its build directory: one kernel
# for both runners, and kunit.py boots it. kunit.py's own "config" step
# would make a kernel of its own from olddefconfig.
build=$(iou_guest_build_dir "$variant")
mapfile -t fragments < <(iou_guest_fragments "${extra_fragments[@]}")
iou_lock_build_dir "$build"
out=${out:-$IOU_OUT_DIR/kunit$variant-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$build" "$out"
ln -sfn "$(realpath "$out")" "$IOU_OUT_DIR/kunit-latest"

kunit=(python3 tools/testing/kunit/kunit.py)
common=(--arch=x86_64 --build_dir="$build")

cd "$IOU_TREE"
iou_configure_guest_kernel "$build" "$out/config.log" "${fragments[@]}"
iou_build_guest_kernel "$build" "$out/build.log"

# Two vCPUs, as the selftests guest has: the io-wq suite runs a worker's
# sleep hook on one CPU while the other holds a lock.
exec_args=("${common[@]}" --timeout="$IOU_KUNIT_TIMEOUT" --json="$out/kunit.json"
	--qemu_args="-smp 2")
[ "$IOU_KVM" = 1 ] && exec_args+=(--qemu_args="-accel kvm")
[ -n "$filter_glob" ] && exec_args+=("$filter_glob")

iou_log "booting the KUnit kernel under QEMU ($([ "$IOU_KVM" = 1 ] && echo KVM || echo TCG))"
status=0
"${kunit[@]}" exec "${exec_args[@]}" 2>&1 | tee "$out/kunit.log" || status=$?
cp "$build/test.log" "$out/ktap.log" 2>/dev/null || true

# Count leaf test cases (parameters included) by status from kunit.py's JSON,
# and check the skips and the suites' case counts. Each broken rule counts as
# one more failed result, so that the totals line shows it.
checks=(--ktap "$out/ktap.log" --allowed-skips "$IOU_REPO/lib/kunit-skips"
	--expected "$expected_cases" --totals "$out/totals")
[ -z "$filter_glob" ] || checks+=(--filter "$filter_glob")
[ "$update_expected" = 0 ] || checks+=(--write-expected "$expected_cases")
python3 "$IOU_REPO/lib/guest_log.py" kunit "$out/kunit.json" "${checks[@]}" |
	tee "$out/checks.txt" || true
summary=$(cat "$out/totals" 2>/dev/null || true)
rm -f "$out/totals"
read -r passed failed skipped <<<"${summary:-0 1 0}"
# A splat fails the run even when every test passed; it counts as one more
# failed result too.
if ! python3 "$IOU_REPO/lib/guest_log.py" splats "$out/ktap.log" >"$out/splats.log"; then
	echo "kernel splats in the KUnit kernel's log (whole log: $out/ktap.log):"
	sed 's/^/  /' "$out/splats.log"
	failed=$((failed + 1))
fi
iou_log "results in $out"
echo "kunit: $passed passed, $failed failed, $skipped skipped" | tee "$out/summary.txt"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ $((passed + skipped)) -eq 0 ]; then
	exit 1
fi
