#!/bin/sh
# examples_help.sh PROGRAM... — every example program answers --help (rc 0, a usage line and its
# options) and refuses an unknown option and an out-of-range size (rc 2, a message naming it).
# Run by ctest (examples_help).
set -u
fail=0
for p in "$@"; do
  name=$(basename "$p")
  out=$("$p" --help 2>&1); rc=$?
  case "$out" in *"usage: $name"*"--help"*) ;; *) rc=99 ;; esac
  [ $rc -eq 0 ] || { echo "examples_help: $name --help: rc $rc, printed: $out"; fail=1; }
  out=$("$p" --no-such-option 2>&1); rc=$?
  case "$out" in *"unknown option '--no-such-option'"*) ;; *) rc=99 ;; esac
  [ $rc -eq 2 ] || { echo "examples_help: $name --no-such-option: rc $rc, printed: $out"; fail=1; }
  out=$("$p" -- 2>&1); rc=$? # '--' alone: an option without a name
  [ $rc -eq 2 ] || { echo "examples_help: $name --: rc $rc, printed: $out"; fail=1; }
  out=$("$p" 999999999999 2>&1); rc=$? # the first size, far out of range
  case "$out" in *"must be in ["*) ;; *) rc=99 ;; esac
  [ $rc -eq 2 ] || { echo "examples_help: $name 999999999999: rc $rc, printed: $out"; fail=1; }
done
[ $fail -eq 0 ] && echo "examples_help: $# programs"
exit $fail
