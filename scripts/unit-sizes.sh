#!/usr/bin/env bash
# The largest files and functions of a folder (default dataplane/core), with
# Universal Ctags: fails when a file has 500 lines or more, or a function
# (lambdas included) more than 80. Usage: scripts/unit-sizes.sh [folder...]
set -euo pipefail
cd "$(dirname "$0")/.."
folders=("${@:-dataplane/core}")
max_file=500 max_function=80
status=0
command -v ctags >/dev/null || { echo "unit-sizes: ctags missing (scripts/setup.sh installs universal-ctags)" >&2; exit 1; }
files=$(find "${folders[@]}" -maxdepth 1 \( -name '*.cc' -o -name '*.h' \) | sort)
echo "largest files:"
wc -l $files | grep -v ' total$' | sort -rn | head -5
while read -r lines file; do
  if ((lines >= max_file)); then echo "FAIL: $file has $lines lines (limit: under $max_file)"; status=1; fi
done < <(wc -l $files | grep -v ' total$')
echo "longest functions:"
sizes=$(mktemp)
# --fields=+ne gives each function's first line and its end line.
ctags --languages=C++ --kinds-C++=f --fields=+ne -o - $files 2>/dev/null |
  awk -F'\t' '{
    line = ""; end = "";
    for (i = 4; i <= NF; i++) {
      if ($i ~ /^line:/) line = substr($i, 6);
      if ($i ~ /^end:/) end = substr($i, 5);
    }
    if (line != "" && end != "") printf "%d %s:%s %s\n", end - line + 1, $2, line, $1;
  }' | sort -rn > "$sizes"
if [[ ! -s $sizes ]]; then echo "unit-sizes: ctags found no functions in ${folders[*]}" >&2; rm -f "$sizes"; exit 1; fi
head -5 "$sizes"
while read -r lines where name; do
  if ((lines > max_function)); then echo "FAIL: $where $name has $lines lines (limit: $max_function)"; status=1; fi
done < "$sizes"
rm -f "$sizes"
exit $status
