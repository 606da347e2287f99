# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# run_selftests.sh --liburing: Debian's liburing source package, its test/
# programs built on the host, and the known-failures file of the gate.
# Sourced after lib/harness.sh. Kept apart from harness.sh so that it is not
# part of iou_series_hash(): changing it does not re-apply the series.

# Packages for fetching and building the source package: dpkg-dev unpacks
# it (dpkg-source); liburing's build needs only a C compiler and make.
IOU_LIBURING_PACKAGES=(dpkg-dev build-essential)
IOU_LIBURING_KNOWN=$IOU_REPO/lib/liburing-known-failures
IOU_LIBURING_SOURCES=/etc/apt/sources.list.d/iou-deb-src.sources

# apt-cache's output is read from a variable, never piped into a reader
# that stops early (grep -q, head, awk's exit): under pipefail apt-cache's
# SIGPIPE then fails the pipeline (141) although the reader found what it
# wanted ("apt-cache showsrc liburing | grep -q" said no source whenever
# apt listed it twice).

# Whether apt has a source package for liburing (a deb-src entry).
iou_liburing_has_source() {
	local sources
	sources=$(apt-cache showsrc liburing 2>/dev/null || true)
	grep -q '^Package: liburing$' <<<"$sources"
}

# The archive that serves the binary package, as "URI suite component"
# (from apt-cache policy's line for the candidate).
iou_liburing_archive() {
	local policy
	policy=$(apt-cache policy liburing-dev 2>/dev/null || true)
	awk '
		/Candidate:/ { want = $2 }
		want != "" && $1 == want { found = 1; next }
		found && /^ +[0-9]+ / { split($3, sc, "/"); print $2, sc[1], sc[2]; exit }' <<<"$policy"
}

# A deb-src entry for the archive the deb lines already use, when apt has
# none for it: the matching deb822 stanzas (or one-line "deb" entries) are
# copied with Types deb-src, keeping their suites and Signed-By.
iou_liburing_need_deb_src() {
	local uri suite component files=() f
	iou_liburing_has_source && return 0
	read -r uri suite component < <(iou_liburing_archive) ||
		iou_die "no apt archive offers liburing-dev (apt-cache policy liburing-dev)"
	[ "$(id -u)" -eq 0 ] ||
		iou_die "no deb-src entry for $uri; as root add one (Types: deb-src, URIs: $uri, Suites: $suite, Components: $component) and run apt-get update"
	iou_log "adding deb-src for $uri ($suite $component) in $IOU_LIBURING_SOURCES"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$IOU_LIBURING_SOURCES" ] && files+=("$f")
	done
	{
		echo "# Added by $IOU_REPO/run_selftests.sh --liburing (apt-get source liburing)."
		# deb822 stanzas with this URI and Types deb.
		awk -v uri="$uri" '
			function flush() {
				if (has_uri && is_deb) { sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src", st); print substr(st, 2) "\n" }
				st = ""; has_uri = 0; is_deb = 0
			}
			FILENAME !~ /\.sources$/ { next }
			FNR == 1 { flush() }
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			/^Types:/ && / deb( |$)/ { is_deb = 1 }
			/^URIs:/ { for (i = 2; i <= NF; i++) if ($i == uri || $i == uri "/") has_uri = 1 }
			{ st = st "\n" $0 }
			END { flush() }' "${files[@]}"
	} >"$IOU_LIBURING_SOURCES.tmp"
	if ! grep -q '^Types: deb-src' "$IOU_LIBURING_SOURCES.tmp"; then
		# One-line format (or nothing usable): the archive apt named.
		printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n' \
			"$uri" "$suite" "$component" >>"$IOU_LIBURING_SOURCES.tmp"
	fi
	mv "$IOU_LIBURING_SOURCES.tmp" "$IOU_LIBURING_SOURCES"
	iou_log "apt-get update (for the deb-src entry)"
	apt-get update -qq >/dev/null 2>&1 || iou_log "warning: apt-get update failed"
	iou_liburing_has_source ||
		iou_die "apt still has no source for liburing (see $IOU_LIBURING_SOURCES)"
}

# Fetch (apt-get source) and build liburing's tests in the cache, once per
# Debian version of the package. Sets IOU_LIBURING_VERSION and
# IOU_LIBURING_TESTS (a folder of stripped test programs, *.t, the way
# liburing's "make runtests" names them).
iou_liburing_prepare() {
	local log_dir=$1 root=$IOU_CACHE_DIR/liburing ver dir src lock
	# A malformed known-failures file stops the run here, before any build.
	iou_liburing_known exclude >/dev/null
	iou_need_packages "${IOU_LIBURING_PACKAGES[@]}"
	iou_liburing_need_deb_src
	ver=$(apt-cache showsrc liburing 2>/dev/null | awk '/^Version:/ { print $2 }' |
		sort -V | tail -n 1 || true)
	[ -n "$ver" ] || iou_die "apt-cache showsrc liburing gives no version"
	# shellcheck disable=SC2034 # read by run_selftests.sh
	IOU_LIBURING_VERSION=$ver
	dir=$root/$ver
	mkdir -p "$root"
	exec {lock}>"$root/lock"
	if ! flock -x -n "$lock"; then
		iou_log "waiting for another run to release $root/lock"
		flock -x "$lock"
	fi
	if [ ! -f "$dir/.iou-source-done" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		# apt-get source downloads as _apt when it can write there.
		chmod 755 "$dir"
		iou_run_logged "apt-get source liburing=$ver into $dir" "$log_dir/liburing-source.log" \
			iou_liburing_fetch "$dir" "$ver"
		touch "$dir/.iou-source-done"
	fi
	src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'liburing-*' -print -quit)
	[ -n "$src" ] || iou_die "no liburing-* folder in $dir"
	IOU_LIBURING_TESTS=$dir/tests
	# The stamp names the build's recipe: a new one builds again.
	if [ ! -f "$dir/.iou-build-2-done" ]; then
		iou_run_logged "building liburing $ver and its tests (static) in $src" \
			"$log_dir/liburing-build.log" iou_liburing_build "$src" "$IOU_LIBURING_TESTS"
		touch "$dir/.iou-build-2-done"
	fi
	exec {lock}>&-
	IOU_LIBURING_COUNT=$(find "$IOU_LIBURING_TESTS" -name '*.t' | wc -l)
	iou_log "liburing $ver: $IOU_LIBURING_COUNT test programs in $IOU_LIBURING_TESTS"
}

iou_liburing_fetch() {
	cd "$1" && apt-get source -q "liburing=$2"
}

# Build liburing.a and test/*.t statically (the guest has no libc); if the
# static link fails, link dynamically and let the initramfs builder copy the
# shared libraries. The stripped programs go to $2.
iou_liburing_build() {
	local src=$1 dest=$2 t
	cd "$src" || return
	make -s clean >/dev/null 2>&1 || true
	iou_liburing_leave_out_hangs
	./configure
	make -j"$IOU_JOBS" -C src
	if ! make -j"$IOU_JOBS" -C test LDFLAGS=-static; then
		echo "static link failed; linking the tests dynamically"
		make -C test clean
		make -j"$IOU_JOBS" -C test
	fi
	rm -rf "$dest"
	mkdir -p "$dest"
	for t in test/*.t; do
		install -m 755 -s "$t" "$dest/"
	done
}

# io_uring_register.t ends with test_poll_ringfd(), a poll on the ring's own
# fd that 6.12 never completes: the test would hang until its timeout and
# tell nothing. Leave out that one call, in the unpacked source, so that the
# rest of the test runs; a liburing whose source differs stops the build.
iou_liburing_leave_out_hangs() {
	local file=test/io_uring_register.c
	grep -q 'left out by run_selftests.sh' "$file" && return 0
	grep -qP '^\tstatus \|= test_poll_ringfd\(\);$' "$file" ||
		{ echo "$file: no test_poll_ringfd() call to leave out"; return 1; }
	sed -i 's#^\tstatus |= test_poll_ringfd();$#\t/* test_poll_ringfd(): left out by run_selftests.sh, hangs on 6.12 */#' "$file"
}

# What a pristine baseline holds for: a digest of the guest's runner and
# of this file (the tests' build, the case left out), so that a patched run
# is compared only with pristine results of the same setup, and checkouts
# that share the cache with another setup keep their own baselines.
iou_liburing_setup() {
	cat "$IOU_REPO/lib/guest-init.sh" "$IOU_REPO/lib/liburing.sh" | sha256sum | cut -c1-12
}

# The tests of one kind (fail, flaky, exclude) in the known-failures file,
# one a line, read by the gate's own parser (lib/guest_log.py), which stops
# the run on a malformed file before anything is built.
iou_liburing_known() {
	python3 "$IOU_REPO/lib/guest_log.py" liburing-known "$IOU_LIBURING_KNOWN" "$1"
}
