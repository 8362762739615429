#!/usr/bin/env bash
# Lists the tests a CTest run skipped and fails if one is not in the allow-list.
#   scripts/check_skips.sh <ctest output> [allow-list (default tests/skips_allowed.txt)]
# <ctest output> is what ctest printed: its "The following tests did not run:" block names every
# skipped (or disabled) test. The allow-list has one entry per line, `<test name or glob> <reason>`
# (a reason is required; `#` starts a comment). A skip can hide a regression, so each allowed
# one says why it cannot here. Exit status: 0 when every skip is allowed, 1 otherwise, 2 on a bad
# allow-list or missing input.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log="${1:?usage: scripts/check_skips.sh <ctest output> [allow-list]}"
allow="${2:-$root/tests/skips_allowed.txt}"
[[ -r "$log" ]] || { echo "check_skips: cannot read $log" >&2; exit 2; }
[[ -r "$allow" ]] || { echo "check_skips: cannot read the allow-list $allow" >&2; exit 2; }

patterns=()
reasons=()
n=0
while IFS= read -r line || [[ -n "$line" ]]; do
  n=$((n + 1))
  line="${line%%#*}"
  [[ "$line" =~ ^[[:space:]]*$ ]] && continue
  if [[ ! "$line" =~ ^[[:space:]]*([^[:space:]]+)[[:space:]]+([^[:space:]].*)$ ]]; then
    echo "check_skips: $allow:$n: an entry is \`<test name or glob> <reason>\`; this one has no reason: $line" >&2
    exit 2
  fi
  patterns+=("${BASH_REMATCH[1]}")
  reasons+=("${BASH_REMATCH[2]}")
done < "$allow"

# "	 57 - Suite.Name (Skipped)" lines after "The following tests did not run:".
mapfile -t skipped < <(awk '
  /^The following tests did not run:/ { on = 1; next }
  on && /^[ \t]+[0-9]+ - .* \((Skipped|Disabled|Not Run)\)[ \t]*$/ {
    sub(/^[ \t]+[0-9]+ - /, ""); print; next
  }
  on { on = 0 }
' "$log")

echo "skipped tests: ${#skipped[@]}"
bad=0
for entry in "${skipped[@]}"; do
  name="${entry% (*}"
  why="not allowed: add it to $(basename "$allow") with a reason, or make it run"
  ok=0
  for i in "${!patterns[@]}"; do
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    if [[ "$name" == ${patterns[$i]} ]]; then
      why="allowed: ${reasons[$i]}"
      ok=1
      break
    fi
  done
  echo "  $entry -- $why"
  [[ $ok -eq 1 ]] || bad=$((bad + 1))
done
if [[ $bad -gt 0 ]]; then
  echo "check_skips: $bad test(s) skipped outside the allow-list $allow" >&2
  exit 1
fi
