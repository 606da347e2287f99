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
                   N with errors"; exits non-zero on an error
  --build-each     also apply the written series one patch at a time onto
                   pristine (in the scratch apply/ worktree) and, after each,
                   build vmlinux plus modules with the guest config (the
                   one with every option the series touches: io_uring, NET,
                   INET, UNIX, TMPFS, KUnit); after the last, vmlinux with
                   the guest config without INET too (the other combination
                   of options). Incremental, in the guest's build directory
                   (so ./run_selftests.sh must have run once); prints per
                   patch "applies, guest build, no-INET build, checkpatch" and
                   "series-check: N patches, N good, N bad"; exits non-zero
                   if any patch fails to apply or build (implies --checkpatch)
  -h, --help       this text

$(iou_env_help)
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

# checkpatch's verdict on one patch: clean, warnings or errors. The report
# goes to $out/<patch>.checkpatch.
checkpatch_verdict() {
	local patch=$1 report
	# Debian's python3 first: checkpatch's spdxcheck.py needs python3-ply and python3-git.
	report=$(PATH=/usr/bin:$PATH perl "$IOU_TREE/scripts/checkpatch.pl" --strict --terse "$patch" || true)
	printf '%s\n' "$report" >"$patch.checkpatch"
	if grep -q ': ERROR:' <<<"$report"; then
		echo errors
	elif grep -qE ': (WARNING|CHECK):' <<<"$report"; then
		echo warnings
	else
		echo clean
	fi
}

clean=0 warned=0 errored=0 total=0
for patch in "$out"/*.patch; do
	case $patch in */0000-cover-letter.patch) continue ;; esac
	total=$((total + 1))
	case $(checkpatch_verdict "$patch") in
	errors) errored=$((errored + 1)) ;;
	warnings) warned=$((warned + 1)) ;;
	*) clean=$((clean + 1)) ;;
	esac
	printf '%s: %s\n' "${patch##*/}" "$(tail -n 1 "$patch.checkpatch" | grep . || echo clean)"
	grep -E ': (ERROR|WARNING|CHECK):' "$patch.checkpatch" | sed 's/^/    /' || true
done
echo "checkpatch: $total patches, $clean clean, $warned with warnings, $errored with errors"
[ "$build_each" = 1 ] || [ "$errored" -eq 0 ]
[ "$build_each" = 1 ] || exit 0

# Build one config in its runner's build directory at the tree's current
# commit; the .config saved before the check is the starting point each time.
build_config() {
	local dir=$1 log=$2
	shift 2
	cp "$dir/.config.series-check" "$dir/.config"
	make -s -C "$IOU_TREE" ARCH=x86_64 O="$dir" olddefconfig >"$log" 2>&1 &&
		make -C "$IOU_TREE" ARCH=x86_64 O="$dir" -j"$IOU_JOBS" "$@" >>"$log" 2>&1
}

# Put the tree and the build directories back as the runners left them.
restore_tree() {
	local dir
	iou_git -C "$IOU_TREE" checkout -q -f --detach "$tree_head"
	for dir in "${build_dirs[@]}"; do
		[ -f "$dir/.config.series-check" ] && mv "$dir/.config.series-check" "$dir/.config"
	done
	iou_log "tree back at $(git -C "$IOU_TREE" log --oneline -1)"
}

guest_dir=$(iou_guest_build_dir "")
noinet_dir=$(iou_guest_build_dir -noinet)
build_dirs=("$guest_dir" "$noinet_dir")
# Nobody else may use the tree while it moves through the series; the tree
# lock comes before the build directories', as in the runners.
iou_lock_tree_exclusive
[ -f "$guest_dir/.config" ] || iou_die "no $guest_dir/.config: run ./run_selftests.sh once first"
for dir in "${build_dirs[@]}"; do
	iou_lock_build_dir "$dir"
done
tree_head=$(git -C "$IOU_TREE" rev-parse HEAD)
cp "$guest_dir/.config" "$guest_dir/.config.series-check"
trap restore_tree EXIT
# The other combination of options, built where the series ends: the guest
# without INET (no TCP; the KUnit suites' own config had none before they
# moved into the guest). ccache shares what INET does not change.
# shellcheck disable=SC2119 # no extra fragments
mapfile -t noinet_fragments < <(iou_guest_fragments)
printf '%s\n' "# CONFIG_INET is not set" "# CONFIG_IPV6 is not set" >"$out/noinet.config"
noinet_fragments+=("$out/noinet.config")

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
	applies=no guest=- noinet=- verdict=
	if iou_git -C "$apply" am -q "$patch" >"$logs/$n-am.log" 2>&1; then
		applies=yes
		iou_git -C "$IOU_TREE" checkout -q -f --detach "$(git -C "$apply" rev-parse HEAD)"
		iou_log "[$n] $name: building (logs: $logs/$n-*.log)"
		guest=FAILED
		build_config "$guest_dir" "$logs/$n-guest.log" vmlinux modules && guest=ok
		# One config per step keeps a cold CI run within its budget;
		# the second is built where the series ends.
		if [ "$n" = "$last" ]; then
			noinet=FAILED
			(
				cd "$IOU_TREE" &&
					iou_configure_guest_kernel "$noinet_dir" "$logs/$n-noinet-config.log" \
						"${noinet_fragments[@]}" &&
					make ARCH=x86_64 O="$noinet_dir" -j"$IOU_JOBS" vmlinux \
						>"$logs/$n-noinet.log" 2>&1
			) && noinet=ok
		fi
	else
		iou_git -C "$apply" am --abort >/dev/null 2>&1 || true
	fi
	verdict=$(checkpatch_verdict "$patch")
	printf '%-70s applies: %-3s  guest build: %-6s  no-INET build: %-6s  checkpatch: %s\n' \
		"$name" "$applies" "$guest" "$noinet" "$verdict"
	if [ "$applies" = yes ] && [ "$guest" = ok ] && [ "$noinet" != FAILED ] &&
		[ "$verdict" != errors ]; then
		good=$((good + 1))
	else
		bad=$((bad + 1))
		[ "$applies" = yes ] || break
	fi
done
echo "series-check: $n patches, $good good, $bad bad"
[ "$bad" -eq 0 ] && [ "$errored" -eq 0 ]
