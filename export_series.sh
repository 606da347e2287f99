#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the whole series (patches/ plus the commit that adds kunit/ and
# selftests/) as git format-patch files, git-am-able onto the pristine
# linux-source-6.12 tree, and optionally run checkpatch.pl --strict on each
# and check that each patch applies and builds on its own.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"

usage() {
	cat <<EOF
Usage: $0 [options]

Options:
  --output DIR     where the series goes (default: \$IOU_OUT_DIR/series,
                   here: $IOU_OUT_DIR/series); emptied first
  --checkpatch     run scripts/checkpatch.pl --strict on every patch and end
                   with "checkpatch: N patches, N clean, N with warnings,
                   N with errors, N not checked"; exits non-zero on an
                   error, or when checkpatch.pl did not run through on a
                   patch (an exit status other than 0 or 1, or 1 with no
                   finding: never counted clean)
  --build-each     also apply the written series one patch at a time onto
                   pristine (in the scratch apply worktree) and, after each,
                   build vmlinux with a small config of every option whose
                   code the series touches (kconfig-fragments/series-check:
                   io_uring, NET, INET, UNIX, TMPFS, KUnit; warnings are
                   errors); after the last, the same without INET (the other
                   combination of options) and with the KUnit suites
                   (CONFIG_IO_URING_KUNIT_TEST). Incremental, in
                   \$IOU_CACHE_DIR/.../series-check{,-noinet}; prints per
                   patch "applies, build, no-INET build, checkpatch" and
                   "series-check: N patches, N good, N bad"; exits non-zero
                   if any patch fails to apply or build, or has checkpatch
                   errors or was not checked (implies --checkpatch)
  -h, --help       this text

$(iou_env_help)
  IOU_CHECKPATCH   the checkpatch.pl to run (default: scripts/checkpatch.pl
                   of the patched tree in the cache)
EOF
}

out=$IOU_OUT_DIR/series
checkpatch=0
build_each=0
while [ $# -gt 0 ]; do
	case $1 in
	--output) out=${2:?--output needs a value}; shift ;;
	--checkpatch) checkpatch=1 ;;
	--build-each) build_each=1; checkpatch=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; iou_die "unknown option: $1" ;;
	esac
	shift
done

iou_prepare_host
iou_prepare_tree

rm -rf "$out"
mkdir -p "$out"
git -C "$IOU_TREE" format-patch -q --cover-letter --base=pristine -o "$out" pristine..HEAD
# The letter with its text and measured figures (./refresh_cover_letter.sh),
# in place of git's placeholder.
if [ -f "$IOU_REPO/patches/0000-cover-letter.patch" ]; then
	cp "$IOU_REPO/patches/0000-cover-letter.patch" "$out/0000-cover-letter.patch"
fi
iou_log "series written to $out:"
find "$out" -name '*.patch' | sort | sed 's#.*/#  #' >&2

[ "$checkpatch" = 1 ] || exit 0

IOU_CHECKPATCH=${IOU_CHECKPATCH:-$IOU_TREE/scripts/checkpatch.pl}

# checkpatch's verdict on one patch: clean, warnings, errors, or failed
# when checkpatch.pl did not run through (an exit status other than 0, or
# 1 with nothing found: a missing script or patch, a perl error); an empty
# report is clean only when checkpatch said so by its exit status. The
# report, with checkpatch's stderr, goes to $out/<patch>.checkpatch.
checkpatch_verdict() {
	local patch=$1 report rc=0
	# Debian's python3 first: checkpatch's spdxcheck.py needs python3-ply and python3-git.
	report=$(PATH=/usr/bin:$PATH perl "$IOU_CHECKPATCH" --strict --terse "$patch" 2>&1) || rc=$?
	printf '%s\n' "$report" >"$patch.checkpatch"
	if [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && ! grep -qE ': (ERROR|WARNING|CHECK):' <<<"$report"; }; then
		echo "error: checkpatch.pl did not run through (exit $rc): $IOU_CHECKPATCH" >>"$patch.checkpatch"
		echo failed
	elif grep -q ': ERROR:' <<<"$report"; then
		echo errors
	elif grep -qE ': (WARNING|CHECK):' <<<"$report"; then
		echo warnings
	else
		echo clean
	fi
}

clean=0 warned=0 errored=0 unchecked=0 total=0
for patch in "$out"/*.patch; do
	case $patch in */0000-cover-letter.patch) continue ;; esac
	total=$((total + 1))
	case $(checkpatch_verdict "$patch") in
	failed) unchecked=$((unchecked + 1)) ;;
	errors) errored=$((errored + 1)) ;;
	warnings) warned=$((warned + 1)) ;;
	*) clean=$((clean + 1)) ;;
	esac
	printf '%s: %s\n' "${patch##*/}" "$(tail -n 1 "$patch.checkpatch" | grep . || echo clean)"
	grep -E ': (ERROR|WARNING|CHECK):' "$patch.checkpatch" | sed 's/^/    /' || true
done
echo "checkpatch: $total patches, $clean clean, $warned with warnings, $errored with errors, $unchecked not checked"
if [ "$unchecked" -gt 0 ]; then
	echo "error: checkpatch.pl did not run through on $unchecked patches (reports: $out/*.checkpatch)"
fi
[ "$build_each" = 1 ] || [ $((errored + unchecked)) -eq 0 ]
[ "$build_each" = 1 ] || exit 0

# The series is built where it is applied, in the scratch apply worktree,
# with a small config of its own (kconfig-fragments/series-check): the
# runners' tree and build directories are left alone. Nobody may apply the
# series there meanwhile: hold the tree lock as iou_prepare_tree does.
check_dir=$IOU_VERSION_DIR/series-check
noinet_dir=$IOU_VERSION_DIR/series-check-noinet
iou_lock_tree_exclusive
iou_lock_build_dir "$check_dir"
iou_lock_build_dir "$noinet_dir"
check_fragments=("$IOU_REPO/kconfig-fragments/series-check")
# Without INET, the KUnit suites are built too (they arrive with the last
# patch, the only one built this way): their TCP and UDP rows skip at run
# time there, but they must compile and link. With INET the kunit stage
# builds them.
printf '%s\n' "# CONFIG_INET is not set" "# CONFIG_IPV6 is not set" \
	"CONFIG_IO_URING_KUNIT_TEST=y" >"$out/noinet.config"
noinet_fragments=("${check_fragments[@]}" "$out/noinet.config")

# Configure (when a fragment changed) and build vmlinux in a build directory
# from the apply worktree's current commit.
build_check_kernel() {
	local dir=$1 log=$2
	shift 2
	(
		cd "$IOU_APPLY_DIR" &&
			iou_configure_guest_kernel "$dir" "$log.config" "$@" &&
			make ARCH=x86_64 O="$dir" -j"$IOU_JOBS" vmlinux >"$log" 2>&1
	)
}

apply=$IOU_APPLY_DIR
iou_git -C "$apply" am --abort >/dev/null 2>&1 || true
iou_git -C "$apply" checkout -q -f --detach pristine
iou_git -C "$apply" clean -q -fdx
good=0 bad=0 n=0
logs=$out/build-each
mkdir -p "$logs"
last=$(find "$out" -maxdepth 1 -name '*.patch' ! -name '0000-cover-letter.patch' | wc -l)
for patch in "$out"/*.patch; do
	case $patch in */0000-cover-letter.patch) continue ;; esac
	n=$((n + 1))
	name=${patch##*/}
	applies=no build=- noinet=- verdict=
	if iou_git -C "$apply" am -q "$patch" >"$logs/$n-am.log" 2>&1; then
		applies=yes
		iou_log "[$n] $name: building (logs: $logs/$n-*.log)"
		build=FAILED
		build_check_kernel "$check_dir" "$logs/$n-build.log" "${check_fragments[@]}" &&
			build=ok
		# The no-INET combination is built once, where the series ends.
		if [ "$n" = "$last" ]; then
			noinet=FAILED
			[ "$build" = ok ] &&
				iou_seed_build_dir "$check_dir" "$noinet_dir" "$apply" "$apply"
			build_check_kernel "$noinet_dir" "$logs/$n-noinet.log" \
				"${noinet_fragments[@]}" && noinet=ok
		fi
	else
		iou_git -C "$apply" am --abort >/dev/null 2>&1 || true
	fi
	verdict=$(checkpatch_verdict "$patch")
	printf '%-70s applies: %-3s  build: %-6s  no-INET build: %-6s  checkpatch: %s\n' \
		"$name" "$applies" "$build" "$noinet" "$verdict"
	if [ "$applies" = yes ] && [ "$build" = ok ] && [ "$noinet" != FAILED ] &&
		[ "$verdict" != errors ] && [ "$verdict" != failed ]; then
		good=$((good + 1))
	else
		bad=$((bad + 1))
		[ "$applies" = yes ] || break
	fi
done
echo "series-check: $n patches, $good good, $bad bad"
[ "$bad" -eq 0 ] && [ $((errored + unchecked)) -eq 0 ]
