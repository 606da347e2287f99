#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The liburing gate of lib/guest_log.py on hand-made console logs: each case
# writes the guest's console as lib/guest-init.sh prints it, runs
# "guest_log.py liburing" with a known-failures file of its own (below, in
# the format of lib/liburing-known-failures) and checks that the gate passes
# or fails as it must, and on what. Prints each case's gate lines and ends
# "guest_log tests: N passed, N failed"; exits 1 if any case did not do
# what it must. Run by .ci/run; needs only python3.
set -euo pipefail

lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

known=$work/known-failures
cat >"$known" <<'EOF'
# Test entries: the format of lib/liburing-known-failures.
send_recv.t fail rc=1 fails every run, printing these two lines
	| test_invalid failed
	| FAIL
io_uring_register.t fail rc=1 fails every run; prints the "~" line whether it fails or not
	~ Skipping the hugepage test
	| expected -95, got -14
	| FAIL
single-issuer.t flaky rc=1 fails now and then, printing this line
	| ./single-issuer.t: submit 0
multicqes_drain.t exclude not run
EOF
# A pristine run's results, for the cases run with --baseline.
printf '# liburing ?\n# test\tresult\texit\tseconds\n' >"$work/baseline.tsv"
printf '%s\tpass\t0\t0.1\n' nop.t accept.t single-issuer.t >>"$work/baseline.tsv"
printf 'send_recv.t\tfail\t1\t0.1\n' >>"$work/baseline.tsv"
# More arguments of guest_log.py liburing for the next check.
gate_args=()

# One test's run as lib/guest-init.sh prints it: run NAME RC [LINE...].
run() {
	local name=$1 rc=$2
	shift 2
	echo "IOU-LIBURING-BEGIN $name"
	[ "$#" -eq 0 ] || printf '%s\n' "$@"
	echo
	echo "IOU-LIBURING-END $name rc=$rc secs=0.1"
	echo "IOU-LIBURING-DMESG-BEGIN $name"
	echo "[   10.000000] iou: liburing test $name"
	echo "IOU-LIBURING-DMESG-END"
}

# check DESCRIPTION passed|FAILED [GATE-LINE]: the console log on stdin
# (not a pipe into check: its counts must stay in this shell)
# (the guest's end marker added) must make the gate say passed or FAILED,
# and a FAILED gate must say GATE-LINE (a fixed string) in a gate line.
check() {
	local what=$1 want=$2 line=${3:-} rc=0 said problem=""
	{
		cat
		echo "IOU-GUEST-DONE"
	} >"$work/console.log"
	python3 "$lib/guest_log.py" liburing "$work/console.log" --known "$known" \
		--results "$work/results.tsv" "${gate_args[@]}" >"$work/out" 2>&1 || rc=$?
	said=$(sed -n 's/^  gate: \(passed\|FAILED\)$/\1/p' "$work/out")
	if [ "$said" != "$want" ]; then
		problem="the gate said ${said:-nothing}, not $want"
	elif [ "$want" = passed ] && [ "$rc" -ne 0 ]; then
		problem="exit $rc with the gate passed"
	elif [ "$want" = FAILED ] && [ "$rc" -ne 1 ]; then
		problem="exit $rc with the gate FAILED"
	elif [ -n "$line" ] && ! grep '^  gate: ' "$work/out" | grep -qF -- "$line"; then
		problem="no gate line says: $line"
	fi
	if [ -z "$problem" ]; then
		passed=$((passed + 1))
		echo "ok - $what (gate $want)"
	else
		failed=$((failed + 1))
		echo "not ok - $what: $problem"
		sed 's/^/    /' "$work/out"
	fi
	grep '^  gate: ' "$work/out" | grep -v '^  gate: \(passed\|FAILED\|compared with .*\)$' |
		sed 's/^  /    /' || true
}

# A test that passes, around every case.
pass() { run nop.t 0; }

check "a known failure exactly as pinned" passed \
	< <(pass; run send_recv.t 1 "test_invalid failed" "FAIL")
check "the pinned lines and one extra failure line" FAILED \
	"send_recv.t: fails (exit 1), not as known-failures pins it: + test_invalid failed" \
	< <(pass; run send_recv.t 1 "test_invalid failed" "test_invalid failed" "FAIL")
check "a pinned line missing" FAILED "- FAIL" \
	< <(pass; run send_recv.t 1 "test_invalid failed")
check "the pinned lines in another order" FAILED "send_recv.t: fails (exit 1), not as" \
	< <(pass; run send_recv.t 1 "FAIL" "test_invalid failed")
check "the pinned lines with another exit status" FAILED "exit 2, not 1" \
	< <(pass; run send_recv.t 2 "test_invalid failed" "FAIL")
check "the pinned lines, then a timeout" FAILED "exit 124, not 1" \
	< <(pass; run send_recv.t 124 "test_invalid failed" "FAIL")
check "trailing white space and blank lines aside" passed \
	< <(pass; run send_recv.t 1 "test_invalid failed   " "" "FAIL")
check "a known failure that passes" passed \
	< <(pass; run send_recv.t 0)
check "a known failure with the line it prints anyway" passed \
	< <(pass; run io_uring_register.t 1 "Skipping the hugepage test" "expected -95, got -14" "FAIL")
check "a known failure without the line it prints anyway" passed \
	< <(pass; run io_uring_register.t 1 "expected -95, got -14" "FAIL")
check "a known failure with one more failure line" FAILED \
	"io_uring_register.t: fails (exit 1), not as known-failures pins it: + expected Unknown error -95, but call succeeded" \
	< <(pass; run io_uring_register.t 1 "Skipping the hugepage test" \
		"expected Unknown error -95, but call succeeded" "expected -95, got -14" "FAIL")
check "a failure that is not listed" FAILED "accept.t: fails (exit 1) and is not a known failure" \
	< <(pass; run accept.t 1 "accept failed")

# A flaky test: a failure runs again (lib/guest-init.sh), and only a second
# failure, or a first one that is not the one pinned, fails the gate.
check "a flaky test that passes" passed \
	< <(pass; run single-issuer.t 0)
check "a flaky test that fails as pinned, then passes" passed \
	< <(pass; run single-issuer.t 1 "./single-issuer.t: submit 0"; run single-issuer.t 0)
check "a flaky test that fails twice" FAILED "single-issuer.t: failed twice" \
	< <(pass; run single-issuer.t 1 "./single-issuer.t: submit 0"
		run single-issuer.t 1 "./single-issuer.t: submit 0")
check "a flaky test that fails as pinned and is not run again" FAILED \
	"single-issuer.t: failed (the known flaky failure) and was not run again" \
	< <(pass; run single-issuer.t 1 "./single-issuer.t: submit 0")
check "a flaky test that fails another way, then passes" FAILED \
	"single-issuer.t: fails (exit 1), not as known-failures pins it: - ./single-issuer.t: submit 0; + ./single-issuer.t: wait fail -4" \
	< <(pass; run single-issuer.t 1 "./single-issuer.t: wait fail -4"; run single-issuer.t 0)
check "a test that is not flaky run twice" FAILED "send_recv.t: ran 2 times" \
	< <(pass; run send_recv.t 1 "test_invalid failed" "FAIL"; run send_recv.t 0)

# With the pristine baseline: what passed there must pass here.
gate_args=(--baseline "$work/baseline.tsv")
check "the baseline's tests, as there" passed \
	< <(pass; run accept.t 0; run single-issuer.t 0; run send_recv.t 1 "test_invalid failed" "FAIL")
check "a test that passed on pristine fails" FAILED "accept.t: passed on pristine, fails here (exit 1)" \
	< <(pass; run accept.t 1 "accept failed"; run single-issuer.t 0; run send_recv.t 1 "test_invalid failed" "FAIL")
check "a test that passed on pristine is skipped" FAILED "accept.t: passed on pristine, skipped here" \
	< <(pass; run accept.t 77; run single-issuer.t 0; run send_recv.t 1 "test_invalid failed" "FAIL")
check "a flaky test that fails as pinned, then is skipped" FAILED \
	"single-issuer.t: passed on pristine, skipped here" \
	< <(pass; run accept.t 0; run single-issuer.t 1 "./single-issuer.t: submit 0"
		run single-issuer.t 77; run send_recv.t 1 "test_invalid failed" "FAIL")
check "a test of the baseline that did not run" FAILED "accept.t: ran on pristine, no result here" \
	< <(pass; run single-issuer.t 0; run send_recv.t 1 "test_invalid failed" "FAIL")
gate_args=()

# The file itself: a malformed one stops the run.
malformed() {
	local what=$1 rc=0
	cat >"$work/bad"
	python3 "$lib/guest_log.py" liburing-known "$work/bad" exclude >"$work/out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		passed=$((passed + 1))
		echo "ok - malformed known-failures file refused: $what"
		sed 's/^/    /' "$work/out"
	else
		failed=$((failed + 1))
		echo "not ok - malformed known-failures file accepted: $what"
	fi
}
malformed "a fail entry without rc=" < <(printf 'a.t fail test_invalid failed\n')
malformed "an output line under an exclude entry" < <(printf 'a.t exclude hangs\n\t| a line\n')
malformed "an output line without \"| \" or \"~ \"" < <(printf 'a.t fail rc=1 why\n\ta line\n')
malformed "an unknown kind" < <(printf 'a.t sometimes rc=1 why\n')
malformed "a test listed twice" < <(printf 'a.t fail rc=1 why\na.t exclude why\n')
if python3 "$lib/guest_log.py" liburing-known "$lib/liburing-known-failures" exclude >/dev/null; then
	passed=$((passed + 1))
	echo "ok - lib/liburing-known-failures reads"
else
	failed=$((failed + 1))
	echo "not ok - lib/liburing-known-failures does not read"
fi

echo "guest_log tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
