# Sourced by scripts and tests that read one value of an INI file without cmlbed.
# ini_value FILE SECTION KEY: the value of KEY in [SECTION] (the last one wins, as in
# cmlbed), or "" if absent; comment lines (# or ;) are skipped.
ini_value() {
  awk -v section="[$2]" -v key="$3" '
    /^[[:space:]]*[#;]/ { next }
    /^[[:space:]]*\[/ { gsub(/[[:space:]]/, ""); in_section = ($0 == section); next }
    in_section && index($0, "=") {
      k = substr($0, 1, index($0, "=") - 1); v = substr($0, index($0, "=") + 1)
      gsub(/^[[:space:]]+|[[:space:]]+$/, "", k); gsub(/^[[:space:]]+|[[:space:]]+$/, "", v)
      if (k == key) value = v
    }
    END { print value }' "$1"
}

# config_ranks FILE: R of the config's "# ranks: R" first line (the ranks it was written
# for), or "" when the first line is not such a header.
config_ranks() {
  sed -n '1s/^# ranks: *\([0-9][0-9]*\) *$/\1/p' "$1"
}
