#!/bin/sh
# check_docs_sync.sh SNAPDIFF_BIN [SOURCE_DIR]
#
# The option table in src/cli/options.c is the one source of truth; `snapdiff --help` is
# generated from it. This fails (exit 1), naming what is missing where, unless every
# command and every long and short option of --help appears in:
#   man/snapdiff.1 (the OPTIONS section, with the option's argument name, and the short
#   option beside the long one; the commands in COMMANDS), completions/snapdiff.bash,
#   completions/_snapdiff, completions/snapdiff.fish and docs/reference.md (the options
#   reference: its Options table and Commands list);
# and it fails on long options that the man page or a completion script names but --help
# does not know (stale docs); and README.md, a guide that links to the reference, must stay
# at most 600 lines. Builds nothing. Exit 2: cannot run at all.
# The man page's OPTIONS and the completions' lists are generated from the table
# (src/cli/gendocs/, ctest docs_generated); this still checks them, the hand-written
# rest of the man page (COMMANDS, SYNOPSIS) and docs/reference.md against --help.
set -u

bin=${1:?usage: check_docs_sync.sh SNAPDIFF_BIN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
man=$src/man/snapdiff.1
bash_c=$src/completions/snapdiff.bash
zsh_c=$src/completions/_snapdiff
fish_c=$src/completions/snapdiff.fish
reference=$src/docs/reference.md
readme=$src/README.md
readme_max=600

for f in "$man" "$bash_c" "$zsh_c" "$fish_c" "$reference" "$readme"; do
    [ -f "$f" ] || { echo "check_docs_sync: missing file $f" >&2; exit 1; }
done
help=$("$bin" --help) || { echo "check_docs_sync: '$bin --help' failed" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# ---- What --help knows --------------------------------------------------------------
# Option lines: "  -j, --json   ..." or "       --map   ...", optionally "--svg FILE".
printf '%s\n' "$help" | sed -n '/^Options:/,/^$/p' | grep -E '^ +(-[A-Za-z], )?--[a-z]' \
    >"$tmp/optlines"
# One record per option: LONG SHORT ARG ("-" for none).
awk '{
    short = "-"; long = ""; arg = "-"
    for (i = 1; i <= NF; i++) {
        if ($i ~ /^-[A-Za-z],$/) { short = substr($i, 1, 2); continue }
        if ($i ~ /^--[a-z]/) {
            long = $i
            if ((i + 1) <= NF && $(i + 1) ~ /^[A-Z][A-Z0-9_]*$/) arg = $(i + 1)
            break
        }
    }
    if (long != "") print long, short, arg
}' "$tmp/optlines" >"$tmp/opts"
cut -d' ' -f1 "$tmp/opts" | sort -u >"$tmp/longs"
printf '%s\n' "$help" | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }' \
    >"$tmp/commands"

n_opts=$(wc -l <"$tmp/longs")
n_cmds=$(wc -l <"$tmp/commands")
if [ "$n_opts" -lt 5 ] || [ "$n_cmds" -lt 1 ]; then
    echo "check_docs_sync: could not read the options and commands from '$bin --help'" >&2
    exit 2
fi

problems=0
report() {
    echo "$1"
    problems=$((problems + 1))
}

# A word with nothing option-like glued to either side (grep -E pattern).
word() {
    printf '(^|[^A-Za-z0-9_-])%s([^A-Za-z0-9_-]|$)' "$1"
}

# ---- The man page ---------------------------------------------------------------------
# Plain text from roff: comments out, font changes out, \- to -, \e to \, \& out.
sed -e '/^\.\\"/d' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\-/-/g' -e 's/\\&//g' \
    -e 's/\\e/\\/g' -e "s/\\\\(aq/'/g" "$man" >"$tmp/man"
# Section of the man page: from ".SH NAME" to the next ".SH".
section() {
    awk -v want="$1" '/^\.SH/ { on = ($0 ~ ("^\\.SH \"?" want "\"?$")) ; next } on' "$tmp/man"
}
# The header lines of .TP entries (the line after .TP) of a section.
tp_headers() {
    section "$1" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }'
}
tp_headers OPTIONS >"$tmp/man_opt_headers"
tp_headers COMMANDS >"$tmp/man_cmd_headers"

while read -r long short arg; do
    line=$(grep -E -- "$(word "$long")" "$tmp/man_opt_headers" | head -n 1)
    if [ -z "$line" ]; then
        report "missing: $long: no entry in the OPTIONS section of man/snapdiff.1"
        continue
    fi
    if [ "$short" != - ] && ! printf '%s\n' "$line" | grep -qE -- "$(word "$short")"; then
        report "missing: $short (short for $long): not beside $long in man/snapdiff.1 OPTIONS"
    fi
    if [ "$arg" != - ] && ! printf '%s\n' "$line" | grep -qE -- "$long $arg"; then
        report "missing: $long $arg: man/snapdiff.1 OPTIONS does not give the argument $arg"
    fi
done <"$tmp/opts"

while read -r cmd; do
    grep -qE "^\\.B $cmd( |$)" "$tmp/man_cmd_headers" ||
        report "missing: command $cmd: no entry in the COMMANDS section of man/snapdiff.1"
    grep -qE "^snapdiff $cmd( |$)|^\\.B snapdiff $cmd$" "$tmp/man" ||
        report "missing: command $cmd: not in the SYNOPSIS of man/snapdiff.1"
done <"$tmp/commands"

# ---- The completions ------------------------------------------------------------------
grep -v '^[[:space:]]*#' "$bash_c" >"$tmp/bash"
grep -v '^[[:space:]]*#' "$zsh_c" >"$tmp/zsh"
# fish: only the `complete` lines (`set -l` in helper functions is no option).
grep -E '^[[:space:]]*complete ' "$fish_c" >"$tmp/fish"

# Short options: bash lists them in quoted word lists; zsh in _arguments specs
# ({-j,--json}, {-f+,--format=} or '-x[...]'), not in the shells' own "-z", "-s" etc.
grep -oE "'[^']*'" "$tmp/bash" >"$tmp/bash_words"
while read -r long short arg; do
    grep -qE -- "$(word "$long")" "$tmp/bash" || report "missing: $long: not in completions/snapdiff.bash"
    grep -qE -- "$(word "$long")" "$tmp/zsh" || report "missing: $long: not in completions/_snapdiff"
    if [ "$short" != - ]; then
        grep -qE -- "$(word "$short")" "$tmp/bash_words" ||
            report "missing: $short (short for $long): not in completions/snapdiff.bash"
        grep -qE -- "[{'(]$short\+?[,[]" "$tmp/zsh" ||
            report "missing: $short (short for $long): not in completions/_snapdiff"
    fi
    name=${long#--}
    grep -qE -- "(^|[[:space:]])-l $name([[:space:]]|$)" "$tmp/fish" ||
        report "missing: $long: no 'complete ... -l $name' in completions/snapdiff.fish"
    if [ "$short" != - ]; then
        grep -qE -- "-s ${short#-} -l $name([[:space:]]|$)" "$tmp/fish" ||
            report "missing: $short (short for $long): no '-s ${short#-} -l $name' in completions/snapdiff.fish"
    fi
done <"$tmp/opts"

while read -r cmd; do
    for f in bash zsh; do
        grep -qE -- "$(word "$cmd")" "$tmp/$f" ||
            report "missing: command $cmd: not in the $f completion"
    done
    grep -qE -- "-a $cmd([[:space:]]|$)" "$tmp/fish" ||
        report "missing: command $cmd: no '-a $cmd' in completions/snapdiff.fish"
done <"$tmp/commands"

# ---- docs/reference.md: a row of the Options table, a line of the Commands list ---------
# Only table rows count ("| `--json` ..."), so an option named in passing does not pass.
sed -n '/^## Options/,/^## /p' "$reference" | grep -E '^\|' >"$tmp/ref_options"
sed -n '/^## Commands/,/^## /p' "$reference" | grep -E '^\|' >"$tmp/ref_commands"
while read -r long short arg; do
    grep -qE -- "$(word "$long")" "$tmp/ref_options" ||
        report "missing: $long: not in the Options table of docs/reference.md"
done <"$tmp/opts"
while read -r cmd; do
    grep -qE -- "(snapdiff |\`)$cmd([\` ]|$)" "$tmp/ref_commands" ||
        report "missing: command $cmd: not in the Commands table of docs/reference.md"
done <"$tmp/commands"

# ---- README.md: a guide, not the reference ---------------------------------------------
readme_lines=$(wc -l <"$readme")
[ "$readme_lines" -le "$readme_max" ] ||
    report "README.md has $readme_lines lines, more than $readme_max: move reference text to docs/"

# ---- Per-command help ------------------------------------------------------------------
# `snapdiff CMD --help` and `snapdiff help CMD` print the same text: that command's usage,
# exactly the options the global help gives it (all, or those tagged [..,CMD,..]), and
# an example that runs that command. `snapdiff help` is the global help.
"$bin" help >"$tmp/help_word" 2>&1 || report "'snapdiff help' failed (taken as a file name?)"
printf '%s\n' "$help" | cmp -s - "$tmp/help_word" ||
    report "'snapdiff help' differs from 'snapdiff --help'"
while read -r cmd; do
    [ "$cmd" = help ] && continue
    if ! "$bin" "$cmd" --help >"$tmp/h_$cmd" 2>&1; then
        report "'snapdiff $cmd --help' failed"
        continue
    fi
    "$bin" help "$cmd" 2>&1 | cmp -s - "$tmp/h_$cmd" ||
        report "'snapdiff help $cmd' differs from 'snapdiff $cmd --help'"
    cmp -s "$tmp/h_$cmd" "$tmp/help_word" &&
        report "'snapdiff $cmd --help' prints the global help, not that of $cmd"
    head -n 1 "$tmp/h_$cmd" | grep -qE "^Usage: snapdiff $cmd " ||
        report "'snapdiff $cmd --help' does not start with 'Usage: snapdiff $cmd'"
    grep -A1 -E '^Example:' "$tmp/h_$cmd" | tail -n 1 | grep -qE "^  snapdiff( $cmd)? " ||
        report "'snapdiff $cmd --help' has no example running snapdiff $cmd"
    # The options it should list, from the global help's tags.
    grep -E '^ +(-[A-Za-z], )?--[a-z]' "$tmp/optlines" | awk -v c="$cmd" '{
        long = ""
        for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z]/) { long = $i; break }
        if (match($0, /\[[a-z,]+\]$/)) {
            tags = "," substr($0, RSTART + 1, RLENGTH - 2) ","
            if (index(tags, "," c ",") == 0) next
        }
        print long
    }' | sort >"$tmp/want_$cmd"
    sed -n '/^Options:/,/^$/p' "$tmp/h_$cmd" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u \
        >"$tmp/got_$cmd"
    [ -s "$tmp/got_$cmd" ] || report "'snapdiff $cmd --help' lists no options"
    if ! cmp -s "$tmp/want_$cmd" "$tmp/got_$cmd"; then
        report "'snapdiff $cmd --help' options differ from those the global help gives $cmd:" \
            "$(diff "$tmp/want_$cmd" "$tmp/got_$cmd" | grep '^[<>]' | tr '\n' ' ')"
    fi
done <"$tmp/commands"

# ---- Stale: long options the docs name that --help does not know ------------------------
stale() {   # FILE-WITH-TEXT DISPLAY-NAME
    grep -oE -- '(^|[^A-Za-z0-9_-])--[a-z][a-z0-9-]*' "$1" | sed 's/^[^-]*//' | sort -u |
        while read -r opt; do
            grep -qxF -- "$opt" "$tmp/longs" || echo "stale: $opt: in $2, unknown to snapdiff --help"
        done
}
{
    stale "$tmp/man" man/snapdiff.1
    stale "$tmp/bash" completions/snapdiff.bash
    stale "$tmp/zsh" completions/_snapdiff
    grep -oE -- '(^|[[:space:]])-l [a-z][a-z0-9-]*' "$tmp/fish" | sed 's/.*-l /--/' | sort -u |
        while read -r opt; do
            grep -qxF -- "$opt" "$tmp/longs" ||
                echo "stale: $opt: in completions/snapdiff.fish, unknown to snapdiff --help"
        done
} >"$tmp/stale"
while read -r line; do report "$line"; done <"$tmp/stale"

if [ "$problems" -gt 0 ]; then
    echo "check_docs_sync: $problems problem(s): the docs and 'snapdiff --help' disagree" >&2
    exit 1
fi
echo "check_docs_sync: $n_opts options and $n_cmds commands of --help are in man/snapdiff.1," \
    "the bash, zsh and fish completions and docs/reference.md; each command's own help" \
    "agrees; nothing stale; README.md is $readme_lines lines (at most $readme_max)"
