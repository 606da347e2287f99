#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /iou-gcov LABEL, in the guest of run_selftests.sh --coverage: print the
# gcov counters gathered so far on the console, as a gzip'd tar in base64
# between "IOU-GCOV-BEGIN LABEL" and "IOU-GCOV-END LABEL", then reset them
# to zero so that the next LABEL has only its own.
#
# The .gcda files in debugfs report size 0 (seq_file), so tar cannot read
# them in place (Documentation/dev-tools/gcov.rst): each is copied with cat
# into tmpfs first. The host has the .gcno files in its build directory.
label=${1:?label}
gcov=/sys/kernel/debug/gcov
copy=/tmp/iou-gcov-$label
rm -rf "$copy"
mkdir -p "$copy"
cd "$gcov" || exit 1
find . -name '*.gcda' | while read -r file; do
	mkdir -p "$copy/${file%/*}"
	cat "$file" >"$copy/$file"
done
echo "IOU-GCOV-BEGIN $label $(find "$copy" -name '*.gcda' | wc -l) files"
tar -C "$copy" -cf - . | gzip -9 | base64
echo "IOU-GCOV-END $label"
rm -rf "$copy"
echo 1 >"$gcov/reset"
