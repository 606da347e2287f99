# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# run_selftests.sh --coverage: a guest kernel with gcov counters for io_uring/
# and every other C file the series changes only (kconfig-fragments/coverage),
# the KUnit suites run at its boot and the selftests after them; the guest
# sends the counters on its console (lib/guest-gcov.sh) and Debian's lcov
# turns them into an HTML report and a text summary (lib/coverage_summary.py)
# of every function the series adds or changes.

# Every C file the series changes, relative to the tree (from the patches'
# diff headers): each is profiled and reported.
iou_coverage_series_sources() {
	sed -n 's|^diff --git a/\(.*\.c\) b/.*|\1|p' "$IOU_REPO"/patches/*.patch | sort -u
}

# Profile them outside io_uring/ (which has CONFIG_GCOV_PROFILE_URING):
# GCOV_PROFILE_<name>.o=y on make's command line reaches every directory's
# Makefile, so the tree needs no wiring; an object of the same name
# elsewhere (fs/file.o for fs/ext4/file.o) gets counters too, which the
# report leaves out.
IOU_COVERAGE_MAKE_ARGS=()
while read -r source; do
	case $source in
	io_uring/*) ;;
	*) IOU_COVERAGE_MAKE_ARGS+=("GCOV_PROFILE_$(basename "$source" .c).o=y") ;;
	esac
done < <(iou_coverage_series_sources)
# What the report keeps, relative to the tree (lcov patterns), besides every
# file the series changes; the KUnit suites themselves are left out.
IOU_COVERAGE_FILES=(io_uring/'*')

iou_coverage_prepare() {
	iou_need_packages lcov
}

iou_coverage_initramfs() {
	local rootfs=$1
	cp "$IOU_REPO/lib/guest-gcov.sh" "$rootfs/iou-gcov"
	chmod 755 "$rootfs/iou-gcov"
}

# Cut the guest's IOU-GCOV blocks (base64) out of the console log, so that
# the splat scan never reads them, into gcov-LABEL.tar.gz in the results.
iou_coverage_extract() {
	local out=$1 log=$1/console.log b64 label
	awk -v dir="$out" '
		/^IOU-GCOV-BEGIN / { file = dir "/gcov-" $2 ".b64"; printf "" >file; print; next }
		/^IOU-GCOV-END / { close(file); file = ""; print; next }
		file != "" { sub(/\r$/, ""); print >file; next }
		{ print }' "$log" >"$log.tmp"
	mv "$log.tmp" "$log"
	for b64 in "$out"/gcov-*.b64; do
		[ -f "$b64" ] || continue
		label=$(basename "$b64" .b64)
		grep -q "^IOU-GCOV-END ${label#gcov-}" "$log" ||
			iou_log "warning: the guest did not finish sending ${label#gcov-}'s counters"
		base64 -d "$b64" >"$out/$label.tar.gz" ||
			iou_log "warning: ${label#gcov-}'s counters do not decode"
		rm -f "$b64"
	done
}

# The KUnit suites' results from the guest's boot (before its /init ran),
# in the kernel's messages (kmsg.log; the console before IOU-GUEST-START
# in a run from before those had a file of their own), checked as
# run_kunit.sh checks them: no skip that lib/kunit-skips does not list, the
# suites and case counts of lib/kunit-expected-cases.
iou_coverage_kunit_results() {
	local out=$1 counts passed failed skipped
	if [ -s "$out/kmsg.log" ]; then
		sed -n '/Run \/init as init process/q;p' "$out/kmsg.log"
	else
		sed -n '/IOU-GUEST-START/q;p' "$out/console.log"
	fi | tr -d '\r' >"$out/ktap.log"
	python3 "$IOU_TREE/tools/testing/kunit/kunit.py" parse --json="$out/kunit.json" \
		"$out/ktap.log" >"$out/kunit.log" 2>&1 || true
	python3 "$IOU_REPO/lib/guest_log.py" kunit "$out/kunit.json" --ktap "$out/ktap.log" \
		--allowed-skips "$IOU_REPO/lib/kunit-skips" \
		--expected "$IOU_REPO/lib/kunit-expected-cases" --totals "$out/kunit-totals" || true
	counts=$(cat "$out/kunit-totals" 2>/dev/null || true)
	rm -f "$out/kunit-totals"
	read -r passed failed skipped <<<"${counts:-0 1 0}"
	[ $((passed + failed + skipped)) -gt 0 ] || failed=1
	echo "kunit (at the guest's boot): $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# The gcov that reads what the kernel's gcc wrote: gcov-<major> of the gcc
# named in the build's .config.
iou_coverage_gcov_tool() {
	local build=$1 version
	version=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)$/\1/p' "$build/.config")
	[ "${version:-0}" -gt 0 ] || iou_die "the coverage kernel was not built with gcc"
	if command -v "gcov-$((version / 10000))" >/dev/null; then
		echo "gcov-$((version / 10000))"
	else
		echo gcov
	fi
}

# One lcov tracefile per label: its .gcda files go next to the .gcno files in
# the build directory (the guest names them by their absolute build path).
iou_coverage_capture() {
	local build=$1 out=$2 label=$3 gcov=$4 real unpacked pattern extract=() tree
	# gcov names the sources by their physical path.
	tree=$(realpath "$IOU_TREE")
	real=$(realpath "$build")
	unpacked=$out/coverage/gcda-$label
	rm -rf "$unpacked"
	mkdir -p "$unpacked"
	tar -xzf "$out/gcov-$label.tar.gz" -C "$unpacked"
	[ -d "$unpacked$real" ] || iou_die "$label: no .gcda files under $real in the guest's data"
	find "$real" -name '*.gcda' -delete
	cp -r "$unpacked$real/." "$real/"
	rm -rf "$unpacked"
	lcov --quiet --capture --directory "$real" --gcov-tool "$gcov" \
		--rc lcov_branch_coverage=1 --test-name "$label" \
		--output-file "$out/coverage/$label-all.info" >>"$out/coverage/lcov.log" 2>&1 ||
		iou_die "lcov --capture failed for $label (log: $out/coverage/lcov.log)"
	for pattern in "${IOU_COVERAGE_FILES[@]}" "${changed_files[@]}"; do
		extract+=("$tree/$pattern")
	done
	lcov --quiet --rc lcov_branch_coverage=1 --extract "$out/coverage/$label-all.info" \
		"${extract[@]}" --output-file "$out/coverage/$label-x.info" >>"$out/coverage/lcov.log" 2>&1 ||
		iou_die "lcov --extract failed for $label (log: $out/coverage/lcov.log)"
	lcov --quiet --rc lcov_branch_coverage=1 --remove "$out/coverage/$label-x.info" \
		"$tree/io_uring/tests/*" --output-file "$out/coverage/$label.info" \
		>>"$out/coverage/lcov.log" 2>&1 ||
		iou_die "lcov --remove failed for $label (log: $out/coverage/lcov.log)"
	rm -f "$out/coverage/$label-all.info" "$out/coverage/$label-x.info"
}

# After the guest: the KUnit results, the tracefiles, the HTML report in
# coverage/html and the summary in coverage.txt. Low coverage is reported,
# not an error; missing or unreadable data is.
iou_coverage_report() {
	local build=$1 out=$2 gcov label status=0 changed_files=()
	iou_coverage_kunit_results "$out" || status=1
	gcov=$(iou_coverage_gcov_tool "$build")
	rm -rf "$out/coverage"
	mkdir -p "$out/coverage"
	# The series without the test overlay, which is the tree's last commit.
	git -C "$IOU_TREE" diff -U0 pristine HEAD~1 >"$out/coverage/series.diff"
	mapfile -t changed_files < <(git -C "$IOU_TREE" diff --name-only pristine HEAD~1)
	git -C "$IOU_TREE" diff -U0 HEAD~1 HEAD -- "${changed_files[@]}" >"$out/coverage/overlay.diff"
	iou_log "coverage: lcov ($gcov) over the guest's counters (log: $out/coverage/lcov.log)"
	for label in kunit selftests; do
		[ -f "$out/gcov-$label.tar.gz" ] ||
			iou_die "no coverage data for $label from the guest (see $out/console.log)"
		iou_coverage_capture "$build" "$out" "$label" "$gcov"
	done
	lcov --quiet --rc lcov_branch_coverage=1 --add-tracefile "$out/coverage/kunit.info" \
		--add-tracefile "$out/coverage/selftests.info" \
		--output-file "$out/coverage/total.info" >>"$out/coverage/lcov.log" 2>&1 ||
		iou_die "lcov --add-tracefile failed (log: $out/coverage/lcov.log)"
	genhtml --quiet --branch-coverage --show-details --legend \
		--title "io_uring series: KUnit + selftests" --prefix "$(realpath "$IOU_TREE")" \
		--output-directory "$out/coverage/html" "$out/coverage/total.info" \
		>>"$out/coverage/lcov.log" 2>&1 ||
		iou_die "genhtml failed (log: $out/coverage/lcov.log)"
	python3 "$IOU_REPO/lib/coverage_summary.py" --tree "$IOU_TREE" \
		--series-diff "$out/coverage/series.diff" --overlay-diff "$out/coverage/overlay.diff" \
		--total "$out/coverage/total.info" --by kunit="$out/coverage/kunit.info" \
		--by selftests="$out/coverage/selftests.info" \
		--html "$out/coverage/html/index.html" >"$out/coverage.txt" ||
		iou_die "the coverage summary failed"
	cat "$out/coverage.txt"
	return "$status"
}
