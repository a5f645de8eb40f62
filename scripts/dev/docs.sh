#!/usr/bin/env bash
# Builds the documentation site (mkdocs.yml, pages under docs/) into build/site/ with
# `mkdocs build --strict`, so that a broken link, a missing page or a page left out of the
# navigation fails; and checks that no user page links into docs/notes/ (the project's
# notebook, not part of the manual).
#
#   scripts/dev/docs.sh [SITE_DIR]      # default build/site; open SITE_DIR/index.html
#   scripts/dev/docs.sh --serve         # mkdocs serve: the site on http://127.0.0.1:8000, rebuilt on edits
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
command -v mkdocs >/dev/null ||
  { echo "docs.sh: mkdocs is missing: apt-get install mkdocs (scripts/setup.sh installs it)" >&2; exit 2; }
if [[ ${1:-} == --serve ]]; then
  exec mkdocs serve --strict
fi
site=${1:-build/site}
notes=$(grep -rlE '\]\((\.\./)*notes/' docs --include=*.md | grep -v '^docs/notes/' || true)
if [[ -n $notes ]]; then
  echo "docs.sh: these user pages link into docs/notes/, which is not part of the manual:" >&2
  echo "$notes" >&2
  exit 1
fi
mkdocs build --strict --clean --site-dir "$site"
echo "docs.sh: the site is in $site (open $site/index.html)"
