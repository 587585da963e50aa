#!/usr/bin/env bash
# Writes docs/config-keys.md, the reference of sluiced's settings, from the
# list that declares them once: dataplane/config/config_keys.def (the X-macro
# that also makes the SluicedConfig fields, the flags, `sluiced --help` and
# the live/restart split). The reference is generated so that it cannot drift
# from the code; the test config_reference_current fails when the committed
# file differs from this script's output.
#
# Usage: bash scripts/render-config-reference.sh [OUT]
#   OUT: where to write (default docs/config-keys.md of this checkout; - for
#   stdout). Needs only bash and python3 (scripts/setup.sh installs it).
#
# Defaults are shown as `sluiced --help` shows them: a string without quotes,
# a list comma-separated, an unset optional or empty set as "empty"; a named
# constant (kDefaultMaxPorts) is looked up in dataplane/ and common/, and a
# derived default (kDerivedDefault) is the rule its help text states in
# brackets, as --help shows it. A default this script cannot read is shown as its C++ expression.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/docs/config-keys.md}

render() {
  python3 - "$root" <<'PY'
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
def_path = "dataplane/config/config_keys.def"
text = (root / def_path).read_text(encoding="utf-8")


def strip_comments(src):
    """Drops // and /* */ comments, leaving string and char literals whole."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith("/*", i):
            i = src.find("*/", i + 2)
            i = n if i < 0 else i + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_args(src, start):
    """The macro's arguments from just after its '(' to the matching ')'."""
    args, cur, depth, angle, i = [], [], 0, 0, start
    while True:
        c = src[i]
        if c == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            cur.append(src[i:j + 1])
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i + 1
            depth -= 1
        elif c == "<" and len(args) == 1:  # template arguments of the Type
            angle += 1
        elif c == ">" and len(args) == 1:
            angle -= 1
        if c == "," and depth == 0 and angle == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1


def string_value(expr):
    """The value of one or more adjacent C++ string literals, else None."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', expr)
    if not parts or re.sub(r'"(?:[^"\\]|\\.)*"', "", expr).strip():
        return None
    return "".join(re.sub(r"\\(.)", r"\1", p) for p in parts)


def named_constant(name):
    """`inline constexpr T name = value;` in dataplane/ or common/, else None."""
    pattern = re.compile(r"constexpr\s+[\w:<>]+\s+" + re.escape(name) + r"\s*=\s*([^;]+);")
    for folder in ("dataplane", "common"):
        for header in sorted((root / folder).rglob("*.h")):
            m = pattern.search(header.read_text(encoding="utf-8"))
            if m:
                return m.group(1).strip(), header.relative_to(root).as_posix()
    return None


def default_text(expr):
    s = string_value(expr)
    if s is not None:
        return s
    if re.fullmatch(r"-?\d+(\.\d+)?[uUlLfF]*", expr):
        return re.sub(r"[uUlLfF]+$", "", expr)
    if expr in ("true", "false"):
        return expr
    if expr == "std::nullopt" or re.fullmatch(r"[\w:]+\{\}", expr):
        return ""
    m = re.fullmatch(r"\{(.*)\}", expr)
    if m:
        items = [default_text(x.strip()) for x in m.group(1).split(",")]
        if all(x is not None for x in items):
            return ",".join(items)
    m = re.fullmatch(r"\*[\w:]+::parse\((.*)\)", expr)
    if m and string_value(m.group(1)) is not None:
        return string_value(m.group(1))
    if re.fullmatch(r"k[A-Z]\w*", expr):
        found = named_constant(expr)
        if found and default_text(found[0]) is not None:
            return default_text(found[0])
    return None


def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


code = strip_comments(text)
rows = []
for m in re.finditer(r"\bSLUICE_CONFIG_KEY\s*\(", code):
    args, _ = split_args(code, m.end())
    if len(args) != 7:
        sys.exit(f"render-config-reference: {def_path}: SLUICE_CONFIG_KEY with {len(args)} arguments, not 7: {args}")
    key, ctype, _field, default, kind, reload, help_expr = args
    name, help_text = string_value(key), string_value(help_expr)
    if name is None or help_text is None:
        sys.exit(f"render-config-reference: {def_path}: key or help is not a string literal: {args}")
    if kind not in ("kValue", "kBoolean", "kDerivedDefault", "kFileOnly"):
        sys.exit(f"render-config-reference: {def_path}: {name}: unknown kind {kind}")
    if reload not in ("kLive", "kRestart"):
        sys.exit(f"render-config-reference: {def_path}: {name}: unknown reload {reload}")
    if kind == "kDerivedDefault":
        d = re.search(r"\s*\[([^\]]*)\]$", help_text)
        if d:
            shown, help_text = d.group(1), help_text[:d.start()]
        else:
            shown = "derived"
    else:
        value = default_text(default)
        shown = f"`{default}` (C++)" if value is None else (f"`{value}`" if value != "" else "empty")
    flag = "JSON file only" if kind == "kFileOnly" else f"`--{name}`"
    changes = "live" if reload == "kLive" else "restart"
    rows.append(f"| `{name}` | {flag} | `{ctype}` | {cell(shown)} | {changes} | {cell(help_text)} |")

print(f"""<!-- Generated by scripts/render-config-reference.sh from {def_path}; do not edit.
     Change the .def, then run: bash scripts/render-config-reference.sh -->
# sluiced's settings: every scalar key

Generated from [`{def_path}`](../{def_path}), the one list that declares sluiced's scalar settings
(it also makes the flags, `sluiced --help` and the live/restart split), so this table is what the code
accepts. Each key is a JSON key of a `--config` file and, unless marked "JSON file only", a flag of the
same name; flags override files, later files override earlier ones. *live* keys change while sluiced
runs (`sluicectl config set`, or an edited `--config` file); *restart* keys take effect when sluiced
starts again. The description is the key's `sluiced --help` line. Why the keys are what they are, and
the settings that are not scalars (`uplink`, `remote-nodes`, `sriov-pools`, the `offload` group), are in
[configuration.md](configuration.md).

{len(rows)} keys, in the order of `sluiced --help`.

| key | flag | type | default | changes | description |
|---|---|---|---|---|---|""")
print("\n".join(rows))
PY
}

if [[ $out == - ]]; then
  render
else
  tmp=$(mktemp "${out}.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  render >"$tmp"
  mv "$tmp" "$out"
  trap - EXIT
fi
