#!/usr/bin/env bash
# docs/reference/options.md is what `cmlbed run --help --markdown` prints: the reference
# page of the options cannot drift from the option table. Also: every option of the table
# is on the page, and --markdown alone is refused.
# Usage: docs_reference.sh CMLBED SOURCE_DIR
set -u
cmlbed=$1 source_dir=$2
page=$source_dir/docs/reference/options.md
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
"$cmlbed" run --help --markdown >"$generated" || fail "cmlbed run --help --markdown exited $?"
if [[ ! -f $page ]]; then
  fail "$page is missing; write it with: build/cmlbed run --help --markdown > docs/reference/options.md"
elif ! diff -u "$page" "$generated" >/dev/null; then
  diff -u "$page" "$generated" | head -40
  fail "$page is stale (above: what the binary prints now); rewrite it with: build/cmlbed run --help --markdown > docs/reference/options.md"
fi

# Every option that `cmlbed run --help` lists has its row on the page.
while read -r name; do
  grep -qF "| \`$name\` |" "$generated" || fail "option $name is not on the generated page"
done < <("$cmlbed" run --help | grep -oE '^  --[a-z_]+\.[a-z_0-9]+' | sed 's/^  --//')
[[ $(grep -c '^| `' "$generated") -ge 50 ]] || fail "the page lists fewer than 50 options"

out=$("$cmlbed" run --markdown 2>&1)
status=$?
[[ $status -eq 2 && $out == *"--markdown goes with --help"* ]] || fail "run --markdown alone: exit $status, '$out'"

[[ $failures -eq 0 ]] && echo "docs_reference: ok"
exit $((failures > 0))
