#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation runs: each patch in mutations/ undoes one piece of the series'
# behaviour and names, in "Must-fail:" lines, the tests that must fail
# without it. The series plus the mutation is built and tested in a
# scratch copy of this repository; the run passes only if exactly those
# tests fail. A control run (the series alone) comes first and must pass.
set -euo pipefail

# shellcheck source=lib/harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.sh"

usage() {
	cat <<EOF
Usage: $0 [options] [NAME...]

For the control (the series as it is) and then each mutation
(mutations/NAME.patch; by default every one without a "Hangs:" or
"Not-caught:" line, which run only when named): copies this repository's
committed files to a scratch worktree, adds the mutation as the last
patch of the series, runs ./run_kunit.sh and ./run_selftests.sh there
and compares the tests that failed (lib/mutation_check.py) with the
mutation's "Must-fail:" lines ("May-fail:" lines name randomised tests
that may or may not meet the mutation: neither required nor extra).
Prints per mutation CAUGHT (exactly those
failed), EXTRA (others failed too), NOT-CAUGHT (a must-fail test passed)
or INFRA (no results: the mutation does not apply, a build error, a
guest that did not finish), and ends with "mutations: N caught, N extra,
N not caught, N infra; control passed|FAILED". Exits 0 only if the
control passed and every mutation was CAUGHT.

The runs share the cache: the guest kernel is rebuilt incrementally for
each, and the next ordinary run re-applies the real series. About 5
minutes per mutation. Not part of .ci/run (it does not fit CI's time);
run it after changing a patch or a test that a mutation names. Results
go to \$IOU_OUT_DIR/mutations-<date>/.

Options:
  --no-control     skip the control run
  -h, --help       this text

$(iou_env_help)
EOF
}

control=1
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-control) control=0 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) names+=("$1") ;;
	esac
	shift
done
if [ ${#names[@]} -eq 0 ]; then
	for patch in "$IOU_REPO"/mutations/*.patch; do
		[ -e "$patch" ] || iou_die "no mutations in $IOU_REPO/mutations"
		# A mutation that hangs a test until a timeout, or that no test
		# catches yet, runs only when named; its header says why.
		why=$(grep -m 1 -E '^(Hangs|Not-caught): ' "$patch" || true)
		if [ -n "$why" ]; then
			echo "$(basename "$patch" .patch): not run by default ($why)"
			continue
		fi
		names+=("$(basename "$patch" .patch)")
	done
	[ ${#names[@]} -gt 0 ] || iou_die "every mutation runs only when named"
fi
for name in "${names[@]}"; do
	[ -f "$IOU_REPO/mutations/$name.patch" ] || iou_die "no mutations/$name.patch"
done

out=$IOU_OUT_DIR/mutations-$(date +%Y%m%d-%H%M%S)
work=$(mktemp -d "${TMPDIR:-/tmp}/iou-mutations.XXXXXX")
trap 'git -C "$IOU_REPO" worktree remove --force "$work/repo" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$out"

# Run both runners in a scratch worktree of HEAD with the given extra
# patch (none for the control); their results go to $out/$label/.
run_variant() {
	local label=$1 patch=${2:-} run rc=0
	git -C "$IOU_REPO" worktree remove --force "$work/repo" >/dev/null 2>&1 || true
	git -C "$IOU_REPO" worktree add -q --detach "$work/repo" HEAD
	[ -z "$patch" ] || cp "$patch" "$work/repo/patches/0099-mutation.patch"
	for run in run_kunit run_selftests; do
		iou_log "$label: ./$run.sh (log: $out/$label/$run.log)"
		mkdir -p "$out/$label"
		(cd "$work/repo" && IOU_OUT_DIR=$out/$label "./$run.sh") \
			>"$out/$label/$run.log" 2>&1 || rc=1
		grep -E '^(kunit|selftests): ' "$out/$label/$run.log" | tail -n 1 ||
			echo "$run: no summary line"
	done
	return "$rc"
}

# The results of the last run_variant for $label.
results() {
	local label=$1
	echo --kunit "$out/$label/kunit-latest/kunit.json" \
		--console "$out/$label/selftests-latest/console.log"
}

control_result=skipped
if [ "$control" = 1 ]; then
	iou_log "control: the series without a mutation"
	if run_variant control; then
		control_result=passed
	else
		control_result=FAILED
		# shellcheck disable=SC2046 # two options and their paths
		python3 "$IOU_REPO/lib/mutation_check.py" failures $(results control) |
			sed 's/^/  failed: /' || true
	fi
	echo "control: $control_result"
fi

caught=0 extra=0 missed=0 infra=0
for name in "${names[@]}"; do
	patch=$IOU_REPO/mutations/$name.patch
	iou_log "mutation $name: $(sed -n 's/^Subject: \(\[PATCH\] \)\{0,1\}//p' "$patch")"
	run_variant "$name" "$patch" || true
	# shellcheck disable=SC2046 # two options and their paths
	verdict=$(python3 "$IOU_REPO/lib/mutation_check.py" check "$patch" $(results "$name") || true)
	printf '%s\n' "$verdict" | sed '$d'
	verdict=$(printf '%s\n' "$verdict" | tail -n 1)
	echo "$name: ${verdict%%:*}"
	case $verdict in
	CAUGHT) caught=$((caught + 1)) ;;
	EXTRA) extra=$((extra + 1)) ;;
	NOT-CAUGHT) missed=$((missed + 1)) ;;
	*) infra=$((infra + 1)) ;;
	esac
done
echo "mutations: $caught caught, $extra extra, $missed not caught, $infra infra; control $control_result"
[ "$control_result" != FAILED ] && [ "$caught" -eq ${#names[@]} ]
