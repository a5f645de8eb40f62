#!/usr/bin/env bash
# Help texts name methods from the method table (`cmlbed info --methods`), never from a
# list of their own: `cmlbed --help`, `cmlbed simulate --help` and `cmlbed plan --help`
# list exactly the simulatable and the plannable methods, `cmlbed run --help` every one,
# and the unknown-command error every command the usage shows; `cmlbed info --methods
# --json`, which scripts read, is the text table.
# Usage: help_texts.sh CMLBED
set -u
cmlbed=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

table=$("$cmlbed" info --methods) || { echo "FAIL: cmlbed info --methods"; exit 1; }
# Rows until the blank line; columns found by their header (auto, simulate, ...).
rows=$(awk 'NR > 1 && NF == 0 { exit } NR > 1' <<<"$table")
column_of() { awk -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) print i }' <<<"$table"; }
[[ $(wc -l <<<"$rows") -ge 5 ]] || fail "info --methods has fewer than 5 rows: $table"
# join COLUMN LAST: the names with "yes" in COLUMN, "a, b and c" (LAST = and) or "a, b, c".
join() {
  awk -v col="$1" -v last="$2" '$col == "yes" { n++; name[n] = $1 }
    END { for (i = 1; i <= n; i++) printf "%s%s", (i == 1 ? "" : (i == n && last != "," ? " " last " " : ", ")), name[i] }' <<<"$rows"
}
simulatable=$(join "$(column_of simulate)" ,) plannable=$(join "$(column_of auto)" or)
[[ -n $simulatable && -n $plannable ]] || fail "no simulatable or plannable method in: $rows"
all=$(awk '{ printf "%s%s", (NR == 1 ? "" : ", "), $1 }' <<<"$rows")

usage=$("$cmlbed" --help)
simulate_help=$("$cmlbed" simulate --help)
plan_help=$("$cmlbed" plan --help)
run_help=$("$cmlbed" run --help)
# Help texts wrap lines: compare with whitespace folded.
fold_text() { tr -s ' \n' '  ' <<<"$1"; }
grep -qF "rounds ($simulatable)" <<<"$(fold_text "$usage")" || fail "cmlbed --help does not list ($simulatable) for simulate"
grep -qF "of a run of $plannable" <<<"$(fold_text "$usage")" || fail "cmlbed --help does not name $plannable for plan"
grep -qF "methods ($all)" <<<"$(fold_text "$usage")" || fail "cmlbed --help does not list the methods ($all)"
grep -qF "rounds ($simulatable)" <<<"$(fold_text "$simulate_help")" || fail "simulate --help does not list ($simulatable)"
grep -qF "of a run of $plannable" <<<"$(fold_text "$plan_help")" || fail "plan --help does not name $plannable"
while read -r name _; do
  grep -qF "$name = " <<<"$(fold_text "$run_help")" || fail "run --help does not describe method $name"
done <<<"$rows"

# Every command the usage shows is named by the unknown-command error.
commands=$("$cmlbed" nosuchcommand 2>&1 >/dev/null | sed -n "s/.*commands: \([a-z, ]*\).*/\1/p")
for command in $(sed -n 's/^  cmlbed \([a-z]\+\) .*/\1/p' <<<"$usage" | sort -u); do
  grep -qw "$command" <<<"$commands" || fail "unknown-command error does not name $command (it names: $commands)"
done
# Scripts read the method table as JSON (`cmlbed info --methods --json`: cmlbed-report,
# scripts/tools/*-configs.py) instead of keeping lists of methods: it must be valid JSON
# and the text table's, with the methods in the same order and the same splitting ones.
json=$("$cmlbed" info --methods --json) || fail "cmlbed info --methods --json exited $?"
from_json=$(/usr/bin/python3 -c '
import json, sys
methods = json.load(sys.stdin)["methods"]
assert all(isinstance(m["name"], str) and isinstance(m["splits_model"], bool) for m in methods)
print(",".join(m["name"] for m in methods))
print(",".join(sorted(m["name"] for m in methods if m["splits_model"])))
' <<<"$json") || fail "cmlbed info --methods --json is not the method table as JSON ({\"methods\": [...]}): $json"
json_names=$(sed -n 1p <<<"$from_json") json_splits=$(sed -n 2p <<<"$from_json")
text_names=$(awk '{ print $1 }' <<<"$rows" | paste -sd,)
text_splits=$(awk '$2 == "yes" { print $1 }' <<<"$rows" | LC_ALL=C sort | paste -sd,)
[[ $json_names == "$text_names" ]] ||
  fail "info --methods --json names the methods $json_names, the text table $text_names"
[[ $json_splits == "$text_splits" ]] ||
  fail "info --methods --json's splitting methods ($json_splits) are not the text table's ($text_splits)"
echo "help_texts: $failures failure(s)"
((failures == 0))
