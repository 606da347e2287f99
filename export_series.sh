#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the whole series (patches/ plus the commit that adds kunit/ and
# selftests/) as git format-patch files, git-am-able onto the pristine
# linux-source-6.12 tree, and optionally run checkpatch.pl --strict on each.
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
                   N with errors"; exits non-zero on an error
  -h, --help       this text

$(iou_env_help)
EOF
}

out=$IOU_OUT_DIR/series
checkpatch=0
while [ $# -gt 0 ]; do
	case $1 in
	--output) out=${2:?--output needs a value}; shift ;;
	--checkpatch) checkpatch=1 ;;
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
iou_log "series written to $out:"
find "$out" -name '*.patch' | sort | sed 's#.*/#  #' >&2

[ "$checkpatch" = 1 ] || exit 0

clean=0 warned=0 errored=0 total=0
for patch in "$out"/*.patch; do
	case $patch in */0000-cover-letter.patch) continue ;; esac
	total=$((total + 1))
	# Debian's python3 first: checkpatch's spdxcheck.py needs python3-ply and python3-git.
	report=$(PATH=/usr/bin:$PATH perl "$IOU_TREE/scripts/checkpatch.pl" --strict --terse "$patch" || true)
	if grep -q ': ERROR:' <<<"$report"; then
		errored=$((errored + 1))
	elif grep -qE ': (WARNING|CHECK):' <<<"$report"; then
		warned=$((warned + 1))
	else
		clean=$((clean + 1))
	fi
	printf '%s: %s\n' "${patch##*/}" "$(tail -n 1 <<<"${report:-clean}")"
	grep -E ': (ERROR|WARNING|CHECK):' <<<"$report" | sed 's/^/    /' || true
done
echo "checkpatch: $total patches, $clean clean, $warned with warnings, $errored with errors"
[ "$errored" -eq 0 ]
