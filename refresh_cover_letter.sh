#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate patches/0000-cover-letter.patch: docs/cover-letter.in with every
# figure taken from the newest results of the runners, plus the shortlog and
# diffstat git writes. Nothing in the letter is typed in by hand.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"

usage() {
	cat <<EOF
Usage: $0 [options]

Fills docs/cover-letter.in from the newest results folders in \$IOU_OUT_DIR
(kunit-*, kunit-debug-*, selftests-*, selftests-debug-*, selftests-pristine-*,
bench-*, liburing-*, liburing-pristine-*, selftests-coverage-*) and writes
patches/0000-cover-letter.patch (subject, text, shortlog, diffstat,
base-commit). Each figure names the folder it came from.

Options:
  --run            first run everything that produces a figure:
                   ./run_kunit.sh [--debug], ./run_selftests.sh [--debug]
                   [--pristine] [--bench] [--coverage], then
                   --pristine --liburing and --liburing
  --allow-missing  write the letter even if some results are missing (they
                   show as "not measured"); without it that is an error
  -h, --help       this text

$(iou_env_help)
EOF
}

run=0
allow_missing=0
while [ $# -gt 0 ]; do
	case $1 in
	--run) run=1 ;;
	--allow-missing) allow_missing=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; iou_die "unknown option: $1" ;;
	esac
	shift
done

if [ "$run" = 1 ]; then
	for args in "" --debug; do
		# shellcheck disable=SC2086 # $args is one option or none
		"$IOU_REPO/run_kunit.sh" $args
	done
	for args in "" --debug --pristine --bench --coverage "--pristine --liburing" --liburing; do
		# shellcheck disable=SC2086 # $args: options, split on purpose
		"$IOU_REPO/run_selftests.sh" $args
	done
fi

iou_prepare_host
iou_prepare_tree

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git -C "$IOU_TREE" format-patch -q --cover-letter --base=pristine -o "$scratch" pristine..HEAD
cover=$scratch/0000-cover-letter.patch
# git's placeholders: the subject and the text go in, the rest stays.
sed -n '/^\*\*\* BLURB HERE \*\*\*$/,$p' "$cover" | tail -n +2 >"$scratch/shortlog"
status=0
IOU_SIGNER="$IOU_GIT_NAME <$IOU_GIT_EMAIL>" python3 "$IOU_REPO/lib/cover_letter.py" "$IOU_REPO/docs/cover-letter.in" \
	"$IOU_OUT_DIR" "$IOU_SOURCE_VERSION" "$scratch/shortlog" >"$scratch/letter" || status=$?
if [ "$status" -ne 0 ] && [ "$allow_missing" = 0 ]; then
	iou_die "some results are missing (above): run them, or use --run or --allow-missing"
fi
subject=$(head -n 1 "$scratch/letter")
{
	sed -n '1,/^Subject: /p' "$cover" | sed "s|\*\*\* SUBJECT HERE \*\*\*|$subject|"
	sed -n '/^Subject: /,/^\*\*\* BLURB HERE/p' "$cover" | sed '1d;$d'
	tail -n +3 "$scratch/letter"
} >"$IOU_REPO/patches/0000-cover-letter.patch"
iou_log "wrote $IOU_REPO/patches/0000-cover-letter.patch"
