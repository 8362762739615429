#!/usr/bin/env bash
# Self-test of scripts/check_skips.sh (test lint.skips.selftest): allowed skips pass, a skip
# outside the allow-list fails and is named, an allow-list entry without a reason is rejected,
# and a run without skips passes.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
check="$here/../../../scripts/check_skips.sh"
fail=0
expect() {  # expect <rc> <output fragment> <args...>
  local want_rc=$1 want_out=$2
  shift 2
  local out rc
  out=$("$check" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want_rc || "$out" != *"$want_out"* ]]; then
    echo "FAIL: check_skips.sh $* gave rc $rc (want $want_rc), output lacking \"$want_out\":"
    echo "$out"
    fail=1
  else
    echo "ok: check_skips.sh $(basename "$1") -> rc $rc"
  fi
}
expect 0 "skipped tests: 2" "$here/ctest_allowed.txt" "$here/allow.txt"
expect 0 "GetParam() = 0 (Skipped) -- allowed: these need a GPU" "$here/ctest_allowed.txt" "$here/allow.txt"
expect 1 "DiskCacheTest.ReadOnlyDirectoryStillServesHits (Skipped) -- not allowed" "$here/ctest_not_allowed.txt" "$here/allow.txt"
expect 1 "1 test(s) skipped outside the allow-list" "$here/ctest_not_allowed.txt" "$here/allow.txt"
expect 2 "this one has no reason" "$here/ctest_allowed.txt" "$here/allow_no_reason.txt"
expect 0 "skipped tests: 0" /dev/null "$here/allow.txt"
exit $fail
