#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# For each named patch: the series with that patch reverted on top of it
# (git revert), exported to a copy of this repository, then ./run_kunit.sh
# and ./run_selftests.sh run there. A patch whose revert the tests do not
# notice is a patch without a test. This is how the README's table "What
# fails without each patch" was made.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"

usage() {
	cat <<EOF
Usage: $0 [options] N...

Reverts patch N (its number in patches/, e.g. 4 or 0004) alone on top of
the series, for each N in turn, and runs ./run_kunit.sh and
./run_selftests.sh on the result in a scratch worktree of this
repository's HEAD (committed files only). They share the cache: the
guest tree is rebuilt incrementally each time, and the next ordinary
run re-applies the real series. Prints per patch
"revert does not apply", or the two runs' summary lines and their
failed, crashed or missing cases, and ends with "revert-each: N patches,
N caught, N not caught, N not revertible, N no result". "caught" means
a run printed its summary line with a failure in it; a run with no
summary line (a build error, a guest that did not finish) is "no
result", not a catch. Exits non-zero if any patch was not caught or gave
no result. Expect 2-3 minutes per patch, more when the patch touches a
widely included header. Results go to \$IOU_OUT_DIR/revert-each-<date>/.
Behaviour-only variants of the patches that cannot be reverted alone are
in mutations/ (./run_mutations.sh).

Options:
  --no-selftests   run only ./run_kunit.sh for each patch
  -h, --help       this text

$(iou_env_help)
EOF
}

with_selftests=1
patches=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-selftests) with_selftests=0 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) patches+=("$1") ;;
	esac
	shift
done
[ ${#patches[@]} -gt 0 ] || { usage >&2; exit 2; }

iou_prepare_host
iou_prepare_pristine
out=$IOU_OUT_DIR/revert-each-$(date +%Y%m%d-%H%M%S)
work=$(mktemp -d "$IOU_VERSION_DIR/revert-each.XXXXXX")
trap 'rm -rf "$work"; git -C "$IOU_REPO" worktree prune' EXIT
mkdir -p "$out"

# The series as commits on the pristine tree, one per patch.
iou_log "applying the series in $work/linux"
git clone -q --shared "$IOU_VERSION_DIR/pristine" "$work/linux"
mapfile -t series < <(iou_series_patches)
iou_git -C "$work/linux" am -q "${series[@]}"
mapfile -t commits < <(git -C "$work/linux" log --reverse --format=%H pristine..HEAD)

caught=0 missed=0 unrevertible=0 noresult=0
for n in "${patches[@]}"; do
	idx=$((10#$n - 1))
	if [ "$idx" -lt 0 ] || [ "$idx" -ge ${#commits[@]} ]; then
		iou_die "no patch $n (the series has ${#commits[@]})"
	fi
	name=$(basename "${series[$idx]}")
	iou_log "[$n] $name reverted: building and running (logs: $out/$n-*.log)"
	git -C "$work/linux" checkout -q -B "revert-$n" "${commits[-1]}"
	if ! iou_git -C "$work/linux" revert --no-edit "${commits[$idx]}" \
		>"$out/$n-revert.log" 2>&1; then
		git -C "$work/linux" revert --abort
		echo "$name: revert does not apply (later patches build on it)"
		unrevertible=$((unrevertible + 1))
		continue
	fi
	rm -rf "$work/repo"
	git -C "$IOU_REPO" worktree add -q --detach "$work/repo" HEAD
	find "$work/repo/patches" -name '[0-9]*.patch' ! -name '0000-*' -delete
	git -C "$work/linux" format-patch -q -o "$work/repo/patches" \
		"pristine..revert-$n"
	failed=0 summaries=0
	runs=(run_kunit.sh)
	[ "$with_selftests" = 1 ] && runs+=(run_selftests.sh)
	for run in "${runs[@]}"; do
		log=$out/$n-${run%.sh}.log
		(cd "$work/repo" && IOU_OUT_DIR=$out/$n "./$run") >"$log" 2>&1 ||
			failed=1
		summary=$(grep -E '^(kunit|selftests):' "$log" | tail -n 1 || true)
		[ -z "$summary" ] || summaries=$((summaries + 1))
		echo "$name: $run: ${summary:-no summary (build error?)}"
		grep -E '\[(FAILED|CRASHED)\]|^  (FAIL|MISSING) |^# not ok|error:' \
			"$log" | head -n 10 | sed 's/^/    /' || true
	done
	git -C "$IOU_REPO" worktree remove --force "$work/repo"
	if [ "$summaries" -lt ${#runs[@]} ]; then
		echo "$name: NO RESULT: a run printed no summary (see its log)"
		noresult=$((noresult + 1))
	elif [ "$failed" = 1 ]; then
		caught=$((caught + 1))
	else
		echo "$name: NOT CAUGHT: every run passed without it"
		missed=$((missed + 1))
	fi
done
echo "revert-each: ${#patches[@]} patches, $caught caught, $missed not caught, $unrevertible not revertible, $noresult no result"
[ "$missed" -eq 0 ] && [ "$noresult" -eq 0 ]
