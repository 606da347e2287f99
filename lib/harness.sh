# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by run_kunit.sh, run_selftests.sh and export_series.sh: installs what
# is missing, unpacks Debian's linux-source-6.12 into a cache outside the
# repository, keeps a pristine git copy of it, and applies the series plus the
# test overlay to a build tree without touching files the series did not
# change, so that kernel builds stay incremental.

# The Debian version of linux-source-6.12 this project is tested on.
readonly IOU_PINNED_LINUX_SOURCE_VERSION="6.12.118-1~deb12u1"

IOU_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOU_CACHE_DIR=${IOU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/io_uring-series}
IOU_OUT_DIR=${IOU_OUT_DIR:-$IOU_REPO/out}
IOU_JOBS=${IOU_JOBS:-$(nproc)}
IOU_LINUX_SOURCE_VERSION=${IOU_LINUX_SOURCE_VERSION:-$IOU_PINNED_LINUX_SOURCE_VERSION}
# 0: the pristine tree with only the tests added (a runner's --pristine), in
# a build tree of its own, to compare today's kernel with the series.
IOU_WITH_SERIES=${IOU_WITH_SERIES:-1}
# Build directories whose lock this run holds (iou_lock_build_dir).
IOU_LOCKED_BUILD_DIRS=()

# Packages every runner needs on the host, besides linux-source-6.12 itself
# (iou_need_linux_source() installs that at the pinned version).
# gcc-multilib: the selftest ioctl_compat32 is a 32-bit program (gcc -m32).
# e2fsprogs: mkfs.ext4 -d makes the guest's ext4 disk (run_selftests.sh).
IOU_HOST_PACKAGES=(
	qemu-system-x86 busybox-static e2fsprogs
	build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils
	python3 python3-ply python3-git git rsync kmod gcc-multilib
)

# Help text shared by every runner: the environment it reads.
iou_env_help() {
	cat <<EOF
Environment:
  IOU_CACHE_DIR    cache for the unpacked trees and build directories
                   (default: \${XDG_CACHE_HOME:-\$HOME/.cache}/io_uring-series,
                   here: $IOU_CACHE_DIR)
  IOU_OUT_DIR      where results go (default: <repo>/out, here: $IOU_OUT_DIR)
  IOU_JOBS         parallel make jobs (default: nproc, here: $IOU_JOBS)
  IOU_LINUX_SOURCE_VERSION
                   Debian version of linux-source-6.12 to use
                   (default: the pinned $IOU_PINNED_LINUX_SOURCE_VERSION)
  IOU_WITH_SERIES  1 applies patches/ (default); 0 builds the pristine tree
                   with only the tests added (what --pristine sets)
EOF
}

iou_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
iou_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run a long command with its output in a log file, saying every minute that
# it is still going; on failure show the tail of the log.
iou_run_logged() {
	local what=$1 log=$2 pid rc=0 start=$SECONDS next=60
	shift 2
	iou_log "$what (log: $log)"
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if [ $((SECONDS - start)) -ge "$next" ]; then
			iou_log "  ... $((SECONDS - start))s: $(tail -n 1 "$log" | cut -c1-100)"
			next=$((next + 60))
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		tail -n 40 "$log" >&2
		iou_die "$what failed (exit $rc); full log: $log"
	fi
	iou_log "  done in $((SECONDS - start))s"
}

# Install whatever of the given packages is missing (apt-get, as root only).
iou_need_packages() {
	local missing=() pkg status
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
		[[ $status == *"install ok installed"* ]] || missing+=("$pkg")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		iou_die "missing packages; run as root: apt-get install -y ${missing[*]}"
	fi
	iou_log "installing: ${missing[*]}"
	apt-get update -qq >/dev/null 2>&1 || iou_log "warning: apt-get update failed"
	iou_apt_install "${missing[@]}"
}

# apt-get install, quietly: its and dpkg's progress ("Reading database ...
# 5%", "Unpacking", "Setting up") go to a log in the cache; on failure the
# log's last lines (apt's and dpkg's errors) are printed, otherwise their
# warnings.
iou_apt_install() {
	local log=$IOU_CACHE_DIR/apt-get.log rc=0
	mkdir -p "$IOU_CACHE_DIR"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Use-Pty=0 "$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$log" >&2
		iou_die "apt-get install $* failed (exit $rc); full log: $log"
	fi
	grep -E '^W: |^dpkg: warning' "$log" >&2 || true
	iou_log "  installed (apt-get's log: $log)"
}

# Make sure the wanted linux-source-6.12 is installed: the pinned version when
# the archive has it, otherwise the candidate with a warning naming both.
# apt-cache's list is read from a variable: "apt-cache madison | grep -q"
# under pipefail fails (141) whenever grep -q has its match and exits before
# apt-cache has written the rest (SIGPIPE), and the pinned version, listed
# first, looked missing.
iou_need_linux_source() {
	local installed want=$IOU_LINUX_SOURCE_VERSION candidate versions
	installed=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	[ "$installed" = "$want" ] && return 0
	versions=$(apt-cache madison linux-source-6.12 2>/dev/null || true)
	if ! grep -qF "| $want |" <<<"$versions" && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		versions=$(apt-cache madison linux-source-6.12 2>/dev/null || true)
	fi
	if ! grep -qF "| $want |" <<<"$versions"; then
		candidate=$(apt-cache policy linux-source-6.12 2>/dev/null |
			awk '/Candidate:/ { print $2 }' || true)
		case $candidate in
		"" | "(none)") iou_die "apt knows no linux-source-6.12 at all (apt-cache policy linux-source-6.12)" ;;
		esac
		iou_log "warning: linux-source-6.12 $want is not in the archive; using $candidate instead"
		want=$candidate
		[ "$installed" = "$want" ] && return 0
	fi
	[ "$(id -u)" -eq 0 ] ||
		iou_die "run as root: apt-get install -y linux-source-6.12=$want"
	iou_log "installing linux-source-6.12=$want"
	iou_apt_install --allow-downgrades "linux-source-6.12=$want"
}

iou_prepare_host() {
	iou_need_packages "${IOU_HOST_PACKAGES[@]}"
	iou_need_linux_source
	IOU_SOURCE_VERSION=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	IOU_VERSION_DIR=$IOU_CACHE_DIR/linux-source-$IOU_SOURCE_VERSION
	IOU_TREE=$IOU_VERSION_DIR/tree
	[ "$IOU_WITH_SERIES" = 1 ] || IOU_TREE+=-pristine
	# Each tree has its own scratch worktree where the series is applied.
	IOU_APPLY_DIR=$IOU_TREE-apply
	mkdir -p "$IOU_VERSION_DIR" "$IOU_OUT_DIR"
}

# The guest kernel's build directory for a variant ("", -debug, -coverage,
# ...): a direct child of the source tree, for which kbuild names every
# source by a relative path (srctree := ..), so that a build directory can
# be copied to another tree (iou_seed_build_dir). The kernel's .gitignore
# ignores dot files, so git checkouts of the tree leave it be.
iou_guest_build_dir() {
	echo "$IOU_TREE/.build-guest$1"
}

# Start an empty build directory as a copy of a built one, so that make
# rebuilds only what differs, as it does after a git checkout in one tree:
# the files that differ between the two trees' commits are touched (made
# newer than every copied object), and a different config rebuilds the
# objects that use a changed option (kbuild's per-option include/config/
# stamps). The trees are worktrees of one repository (or the same tree) and
# must be clean. Does nothing if DST is configured already or SRC has no
# kernel: DST is then built from scratch.
iou_seed_build_dir() {
	local src=$1 dst=$2 src_tree=$3 dst_tree=$4 lock src_head
	[ ! -f "$dst/.config" ] && [ -f "$src/vmlinux" ] || return 0
	[ -z "$(git -C "$src_tree" status --porcelain)" ] &&
		[ -z "$(git -C "$dst_tree" status --porcelain)" ] || return 0
	src_head=$(git -C "$src_tree" rev-parse HEAD)
	# Not while another run builds in SRC (this one may hold it already:
	# a second lock of it here would wait for ever).
	if ! iou_holds_build_dir "$src"; then
		exec {lock}>"$src.lock"
		flock -s "$lock"
	fi
	iou_log "seeding $dst from $src: make rebuilds only what differs"
	rm -rf "$dst"
	cp -a "$src" "$dst"
	[ -z "${lock:-}" ] || exec {lock}>&-
	# tools/objtool's command lines hold absolute paths: with SRC's paths
	# left in them, make rebuilds objtool, and every object after it.
	# shellcheck disable=SC2016 # perl's expressions, not the shell's
	grep -rlIZ -F -e "$src/" -e "$src_tree/" "$dst" |
		IOU_SEED_FROM=$src/ IOU_SEED_TO=$dst/ IOU_SEED_TREE_FROM=$src_tree/ \
			IOU_SEED_TREE_TO=$dst_tree/ xargs -0 -r perl -pi -e \
			's{\Q$ENV{IOU_SEED_FROM}\E}{$ENV{IOU_SEED_TO}}g;
			 s{\Q$ENV{IOU_SEED_TREE_FROM}\E}{$ENV{IOU_SEED_TREE_TO}}g'
	# The fragments' stamp goes, so the DST's own config is made.
	rm -f "$dst/.iou-fragments"
	if [ "$src_tree" != "$dst_tree" ]; then
		# A fresh checkout's files are all newer than the copied
		# objects: date every tracked file back first, then forward
		# the ones that differ. git's index then rereads them once.
		git -C "$dst_tree" ls-files -z |
			(cd "$dst_tree" && xargs -0 -r touch -h --no-create -d 2020-01-01 --)
		git -C "$dst_tree" diff --name-only -z "$src_head" HEAD -- |
			(cd "$dst_tree" && xargs -0 -r touch --no-create --)
		git -C "$dst_tree" update-index -q --refresh >/dev/null || true
	fi
}

# The config fragments of the guest kernel: the selftests' guest, the
# selftests' own config (what an in-tree user merges; that it sticks here
# shows it is complete), plus the KUnit suites when the series is applied
# (kunit.py boots the same kernel; the pristine tree has no suites), plus
# the given extra fragments.
iou_guest_fragments() {
	echo "$IOU_REPO/kconfig-fragments/selftests"
	echo "$IOU_REPO/selftests/config"
	[ "$IOU_WITH_SERIES" != 1 ] || echo "$IOU_REPO/kconfig-fragments/kunit"
	local extra
	for extra in "$@"; do
		echo "$IOU_REPO/kconfig-fragments/$extra"
	done
}

# Configure the guest kernel in a build directory from fragments, the
# kernel's way (merge_config.sh on allnoconfig), then insist that every
# requested option stuck (the last fragment naming an option wins);
# reconfigure only when a fragment changed. Runs in the source tree.
iou_configure_guest_kernel() {
	local build=$1 log=$2
	shift 2
	local fragments=("$@") stamp=$build/.iou-fragments hash want name got missing=()
	hash=$(cat "${fragments[@]}" | sha256sum | cut -d' ' -f1)
	if [ ! -f "$build/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$hash" ]; then
		iou_run_logged "configuring the guest kernel in $build" "$log" \
			env ARCH=x86_64 scripts/kconfig/merge_config.sh -n -O "$build" "${fragments[@]}"
		echo "$hash" >"$stamp"
	fi
	make ARCH=x86_64 O="$build" olddefconfig >>"$log" 2>&1
	while read -r want; do
		if [[ $want == "# "* ]]; then
			name=${want#\# }
			name=${name%% *}
			got=$(grep -E "^$name=[ym]" "$build/.config" || true)
			[ -z "$got" ] || missing+=("$want (got: $got)")
			continue
		fi
		got=$(grep -E "^${want%%=*}=" "$build/.config" || true)
		[ "$got" = "$want" ] || missing+=("$want (got: ${got:-not set})")
	done < <(cat "${fragments[@]}" |
		grep -E '^CONFIG_[A-Za-z0-9_]+=|^# CONFIG_[A-Za-z0-9_]+ is not set' |
		awk '{ name = ($1 == "#") ? $2 : substr($0, 1, index($0, "=") - 1)
			last[name] = $0; order[NR] = name }
			END { for (i = 1; i <= NR; i++) if (!(order[i] in seen)) {
				seen[order[i]] = 1; print last[order[i]] } }')
	if [ "${#missing[@]}" -gt 0 ]; then
		printf '  %s\n' "${missing[@]}" >&2
		iou_die "requested config options did not stick (see above)"
	fi
}

# Build the guest kernel (bzImage, modules, uapi headers) in a build
# directory; extra make arguments follow.
iou_build_guest_kernel() {
	local build=$1 log=$2
	shift 2
	iou_run_logged "building the guest kernel (a cold build took 4-12 min on 2 cores; after a change, seconds to minutes)" \
		"$log" make ARCH=x86_64 O="$build" -j"$IOU_JOBS" bzImage modules headers "$@"
}

# Commits made in the cache carry the identity of whoever runs the harness.
IOU_GIT_NAME=$(git -C "$IOU_REPO" config user.name || echo "io_uring series")
IOU_GIT_EMAIL=$(git -C "$IOU_REPO" config user.email || echo "io-uring-series@localhost")
iou_git() { git -c user.name="$IOU_GIT_NAME" -c user.email="$IOU_GIT_EMAIL" \
	-c advice.detachedHead=false "$@"; }

# The unpacked tarball as a git repository whose one commit is tagged
# "pristine"; the apply and build trees are worktrees of it.
iou_prepare_pristine() {
	local repo=$IOU_VERSION_DIR/pristine tmp lock
	[ -f "$repo/.iou-pristine-done" ] && return 0
	# The patched and the pristine tree's runners may both get here.
	exec {lock}>"$IOU_VERSION_DIR/pristine.lock"
	flock -x "$lock"
	if [ -f "$repo/.iou-pristine-done" ]; then
		exec {lock}>&-
		return 0
	fi
	rm -rf "$repo" "$repo.tmp"
	tmp=$repo.tmp
	mkdir -p "$tmp"
	iou_log "unpacking /usr/src/linux-source-6.12.tar.xz ($IOU_SOURCE_VERSION) into $repo"
	tar -xf /usr/src/linux-source-6.12.tar.xz -C "$tmp" --strip-components=1
	iou_log "recording the pristine tree in git (about a minute)"
	(
		cd "$tmp" || exit
		iou_git init -q
		iou_git add -A -f
		iou_git commit -q -m "Debian linux-source-6.12 $IOU_SOURCE_VERSION"
		iou_git tag pristine
	)
	mv "$tmp" "$repo"
	touch "$repo/.iou-pristine-done"
	exec {lock}>&-
}

# Everything that determines the patched tree, as one hash.
iou_series_hash() {
	(
		cd "$IOU_REPO" || exit
		printf '%s %s\n' "$IOU_SOURCE_VERSION" "$IOU_WITH_SERIES"
		find patches kunit selftests kconfig-fragments/kunit lib/harness.sh \
			-type f ! -name '*~' -print0 | sort -z | xargs -0 sha256sum
	) | sha256sum | cut -d' ' -f1
}

# The series in git-am order: every numbered patch except a cover letter.
iou_series_patches() {
	[ "$IOU_WITH_SERIES" = 1 ] || return 0
	find "$IOU_REPO/patches" -maxdepth 1 -name '[0-9]*.patch' \
		! -name '0000-cover-letter.patch' | sort
}

# Copy the test sources into the tree and commit them as one patch on top of
# the series. kunit/ becomes io_uring/tests/, selftests/ becomes
# tools/testing/selftests/io_uring/, kconfig-fragments/kunit becomes
# io_uring/.kunitconfig, and each directory's tree-wiring.diff hooks it into
# the existing Kconfig and Makefiles.
iou_commit_test_overlay() {
	local tree=$1
	mkdir -p "$tree/io_uring/tests" "$tree/tools/testing/selftests/io_uring"
	rsync -a --delete --exclude=tree-wiring.diff "$IOU_REPO/kunit/" "$tree/io_uring/tests/"
	rsync -a --delete --exclude=tree-wiring.diff "$IOU_REPO/selftests/" \
		"$tree/tools/testing/selftests/io_uring/"
	cp "$IOU_REPO/kconfig-fragments/kunit" "$tree/io_uring/.kunitconfig"
	local wiring
	for wiring in "$IOU_REPO/kunit/tree-wiring.diff" "$IOU_REPO/selftests/tree-wiring.diff"; do
		[ -f "$wiring" ] || continue
		# The KUnit suites test the series' code; a pristine tree runs
		# only the selftests.
		[ "$IOU_WITH_SERIES" = 1 ] || [ "$wiring" != "$IOU_REPO/kunit/tree-wiring.diff" ] || continue
		git -C "$tree" apply "$wiring" ||
			iou_die "test wiring $wiring does not apply to the patched tree"
	done
	iou_git -C "$tree" add -A -f
	iou_git -C "$tree" commit -q -F - <<EOF
io_uring: add KUnit suites and selftests

The series' tests, kept in the project's kunit/ and selftests/ folders:
KUnit suites under io_uring/tests/ (CONFIG_IO_URING_KUNIT_TEST, run with
"kunit.py run --kunitconfig=io_uring") and kselftests under
tools/testing/selftests/io_uring/ (TARGETS=io_uring).

checkpatch --strict notes, left as they are:
- "spaces preferred around that '*'" on "FIXTURE_DATA(name) *self"
  parameters: checkpatch reads the kselftest_harness.h macro as an
  operand; the harness documents this form for helpers taking self.
- "ENOSYS means 'invalid syscall nr'": the selftests test for ENOSYS
  from io_uring_setup() to skip on kernels without io_uring.
- "Macro argument reuse 'field'" in SQE_FIELD(): the argument is a
  member name, used by offsetof(), sizeof_field() and typeof_member(),
  and cannot have side effects.
- "Prefer __printf", "Prefer using the BIT/BIT_ULL macro" in the
  selftests: user space, where the kernel's macros do not exist.
- "Prefer __aligned(16)" and "Prefer using '\"%s...\", __func__'" in
  sqe_fuzz.c: user space has no __aligned, and the string is its usage
  text, not a function name.
- "line length exceeds 100 columns" in sqe_fuzz.c: failure messages are
  kept on one line so that a log can be grepped for them.
- "Missing a blank line after declarations" in splice_inline.c: the
  declaration list is not over, checkpatch stops at the
  FIXTURE_VARIANT(inline_path) type.

Signed-off-by: $IOU_GIT_NAME <$IOU_GIT_EMAIL>
EOF
}

# Apply the series and the test overlay in the scratch "apply" worktree, then
# move the build tree to the result with "git checkout", which rewrites only
# the files that differ: unchanged sources keep their mtimes and make does
# not rebuild them. Sets IOU_TREE.
#
# The runner keeps a shared lock on the tree until it exits, so that another
# runner wanting a different series waits instead of changing the sources
# under a build. flock() lets new shared holders in while a writer waits, so
# everyone passes a gate lock first, and a writer keeps the gate while it
# waits: readers then queue behind it instead of starving it.
iou_prepare_tree() {
	local stamp=$IOU_TREE.series hash
	exec {IOU_TREE_LOCK}>"$IOU_TREE.lock"
	exec {IOU_GATE_LOCK}>"$IOU_TREE.gate"
	iou_lock_tree_shared
	[ -f "$IOU_VERSION_DIR/pristine/.iou-pristine-done" ] && hash=$(iou_series_hash)
	if [ -d "$IOU_TREE" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${hash:-}" ]; then
		iou_log "tree is up to date: $IOU_TREE"
		return 0
	fi
	iou_lock_tree_exclusive
	iou_prepare_pristine
	hash=$(iou_series_hash)
	if [ ! -d "$IOU_TREE" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$hash" ]; then
		iou_apply_series
		echo "$hash" >"$stamp"
	fi
	# Down to shared before the gate goes: taking the gate again here, with
	# the tree held exclusively, would deadlock against a writer that holds
	# the gate and waits for the tree.
	flock -s "$IOU_TREE_LOCK"
	flock -u "$IOU_GATE_LOCK"
}

iou_lock_tree_shared() {
	if ! flock -x -n "$IOU_GATE_LOCK"; then
		iou_log "waiting behind a run that is changing $IOU_TREE"
		flock -x "$IOU_GATE_LOCK"
	fi
	if ! flock -s -n "$IOU_TREE_LOCK"; then
		iou_log "waiting for another run to release $IOU_TREE.lock"
		flock -s "$IOU_TREE_LOCK"
	fi
	flock -u "$IOU_GATE_LOCK"
}

# From shared to exclusive: the shared lock goes first, since holding it while
# queueing at the gate could deadlock with a writer queued there. The tree may
# change meanwhile; callers look at it again once they hold the lock. The gate
# stays held until the caller is done (or exits), so that it never has to be
# taken while the tree is held.
iou_lock_tree_exclusive() {
	flock -u "$IOU_TREE_LOCK"
	flock -x "$IOU_GATE_LOCK"
	if ! flock -x -n "$IOU_TREE_LOCK"; then
		iou_log "waiting for other runs to finish with $IOU_TREE"
		flock -x "$IOU_TREE_LOCK"
	fi
}

# Two runners may share the tree but not a build directory: take it for the
# rest of this run, waiting if another runner has it.
iou_lock_build_dir() {
	local dir=$1
	mkdir -p "$dir"
	exec {IOU_BUILD_LOCK}>"$dir.lock"
	if ! flock -x -n "$IOU_BUILD_LOCK"; then
		iou_log "waiting for another run to release $dir.lock"
		flock -x "$IOU_BUILD_LOCK"
	fi
	IOU_LOCKED_BUILD_DIRS+=("$dir")
}

# Whether this run holds the lock of a build directory.
iou_holds_build_dir() {
	local dir
	for dir in "${IOU_LOCKED_BUILD_DIRS[@]}"; do
		[ "$dir" != "$1" ] || return 0
	done
	return 1
}

iou_apply_series() {
	local pristine=$IOU_VERSION_DIR/pristine apply=$IOU_APPLY_DIR
	local patch commit
	if [ ! -d "$apply" ]; then
		iou_log "creating the apply worktree $apply"
		git -C "$pristine" worktree prune
		iou_git -C "$pristine" worktree add -q --detach "$apply" pristine
	fi
	iou_log "applying the series to $apply"
	iou_git -C "$apply" am --abort >/dev/null 2>&1 || true
	iou_git -C "$apply" checkout -q -f --detach pristine
	iou_git -C "$apply" clean -q -fdx
	while read -r patch; do
		[ -n "$patch" ] || continue
		if ! iou_git -C "$apply" am -q "$patch"; then
			iou_git -C "$apply" am --abort >/dev/null 2>&1 || true
			iou_die "patch $(basename "$patch") does not apply (the hunk is named above)"
		fi
	done < <(iou_series_patches)
	iou_commit_test_overlay "$apply"
	commit=$(git -C "$apply" rev-parse HEAD)
	if [ ! -d "$IOU_TREE" ]; then
		iou_log "creating the build tree $IOU_TREE"
		iou_git -C "$pristine" worktree add -q --detach "$IOU_TREE" "$commit"
	else
		iou_git -C "$IOU_TREE" checkout -q -f --detach "$commit"
		iou_git -C "$IOU_TREE" clean -q -fd
	fi
	iou_log "tree ready: $IOU_TREE ($(git -C "$IOU_TREE" log --oneline pristine..HEAD | wc -l) commits on pristine)"
}

