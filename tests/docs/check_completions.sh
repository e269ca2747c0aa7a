#!/bin/bash
# shellcheck disable=SC2016  # the single-quoted scripts are for bash, fish and zsh
# check_completions.sh [SOURCE_DIR]
#
# Drives the three completion scripts as the shells do and checks what they offer: the
# commands, the options that apply to the command on the line, the values of --group-by
# and --format, and files for snapshots and for --svg. bash is required; zsh and fish are
# checked when installed (each skipped with a message otherwise).
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 2
src=$(cd "${1:-$here/../..}" && pwd) || exit 2
comp=$src/completions
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
# A directory with known files: the file completions below expect exactly these.
mkdir "$work/runs"
touch "$work/old.pickle" "$work/new.pickle" "$work/runs/rank0.pickle"
cd "$work" || exit 2
fail=0

expect() {   # SHELL LINE WANT GOT
    if [ "$3" = "$4" ]; then
        echo "ok   $1: [$2] -> $4"
    else
        echo "FAIL $1: [$2] -> '$4', expected '$3'"
        fail=1
    fi
}

# ---- bash -------------------------------------------------------------------------------
bash_complete() {   # WORDS...: the words of the line, the last being completed
    bash -c 'source "$1"; shift
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
             _snapdiff snapdiff "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
             printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
        _ "$comp/snapdiff.bash" "$@" | sed 's/ $//'
}
bash_case() {   # WANT WORDS...
    local want=$1
    shift
    expect bash "$*" "$want" "$(bash_complete "$@")"
}
reg=$(bash -c 'source "$1"; complete -p snapdiff' _ "$comp/snapdiff.bash")
expect bash "complete -p snapdiff" "complete -F _snapdiff snapdiff" "$reg"
bash_case "--group-by" snapdiff --gr
bash_case "annotation compile-context file function leaf site stack" snapdiff --group-by ""
bash_case "leaf" snapdiff diff -g le
bash_case "function" snapdiff --group-by = fu
bash_case "--format=folded" snapdiff --format=fo
bash_case "folded json pprof text" snapdiff --format ""
bash_case "check curve diff dump frag help mcp new.pickle old.pickle plan replay report runs series stats summarize top trace" snapdiff ""
bash_case "check curve diff dump frag mcp plan replay report series stats summarize top trace" snapdiff help ""
bash_case "--color --depth --focus --group-by --help --hide --jobs --json --max-memory --no-color --quiet --show --since --top --until --version" snapdiff trace --
bash_case "frag" snapdiff help f
bash_case "stats" snapdiff st
bash_case "--color --help --jobs --json --max-memory --no-color --quiet --version" snapdiff stats --
bash_case "--color --help --max-memory --no-color --quiet --version" snapdiff dump --
bash_case "--color --help --max-memory --no-color --quiet --root --version" snapdiff mcp --
bash_case "--color --force --help --jobs --max-memory --no-color --output --quiet --shard --version" snapdiff summarize --
bash_case "auto" snapdiff summarize --shard a
bash_case "--color --gap-threshold --help --index-threshold --jobs --json --map --max-memory --no-color --quiet --svg --version" snapdiff frag --
bash_case "--at --capacity --color --depth --focus --format --group-by --help --hide --jobs --json --max-growth --max-memory --no-color --output --quiet --show --steps --top --version" snapdiff old.pickle new.pickle --
bash_case "--as-ranks --as-series --ascii --capacity --color --confidence --depth --focus --group-by --help --hide --jobs --json --max-memory --min-slope --name-pattern --no-color --quiet --show --sort --steps --steps-between --strict --top --version" snapdiff series --
bash_case "name time" snapdiff series --sort ""
bash_case "--json" snapdiff --top = 5 stats --js
bash_case "--max-group-growth --max-growth --max-growth-pct" snapdiff check --max-g
bash_case "github json junit text" snapdiff check --format ""
bash_case "github json text" snapdiff curve --format ""
bash_case "csv jsonl nvidia-smi text" snapdiff curve --log-format ""
bash_case "--fail-on-new-site" snapdiff check old.pickle new.pickle --fa
bash_case "--json" snapdiff --jobs 2 stats --js
bash_case "runs/rank0.pickle" snapdiff frag --svg runs/r
bash_case "old.pickle" snapdiff stats o
bash_case "--alloc-conf --as-ranks --as-series --baseline-step --capacity --color --depth --focus --gap-threshold --group-by --help --hide --index-threshold --jobs --log-format --max-memory --memory-fraction --name-pattern --no-color --output --quiet --show --strict --threshold --torch --version" snapdiff report --
bash_case "replay report" snapdiff rep
bash_case "leaf" snapdiff report -o r.html -g le

# ---- fish -------------------------------------------------------------------------------
if command -v fish >/dev/null 2>&1; then
    if fish -n "$comp/snapdiff.fish"; then
        expect fish "fish -n" ok ok
    else
        expect fish "fish -n" ok "syntax error"
    fi
    fish_case() {   # WANT LINE
        local got
        got=$(fish -c 'source $argv[1]; complete -C $argv[2]' "$comp/snapdiff.fish" "$2" |
              cut -f1 | sort | tr '\n' ' ' | sed 's/ $//')
        expect fish "$2" "$1" "$got"
    }
    fish_case "--group-by" "snapdiff --gr"
    fish_case "annotation compile-context file function leaf site stack" "snapdiff --group-by "
    fish_case "folded json pprof text" "snapdiff --format "
    fish_case "check curve diff dump frag help mcp new.pickle old.pickle plan replay report runs/ series stats summarize top trace" "snapdiff "
    fish_case "check curve diff dump frag mcp plan replay report series stats summarize top trace" "snapdiff help "
    fish_case "--color --depth --focus --group-by --help --hide --jobs --json --max-memory --no-color --quiet --show --since --top --until --version" "snapdiff trace --"
    fish_case "--color --help --jobs --json --max-memory --no-color --quiet --version" "snapdiff stats --"
    fish_case "--color --gap-threshold --help --index-threshold --jobs --json --map --max-memory --no-color --quiet --svg --version" "snapdiff frag --"
    fish_case "runs/rank0.pickle" "snapdiff frag --svg runs/r"
    fish_case "github json junit text" "snapdiff check --format "
    fish_case "github json text" "snapdiff curve --format "
    fish_case "--max-group-growth --max-growth --max-growth-pct" "snapdiff check --max-g"
    fish_case "--alloc-conf --as-ranks --as-series --baseline-step --capacity --color --depth --focus --gap-threshold --group-by --help --hide --index-threshold --jobs --log-format --max-memory --memory-fraction --name-pattern --no-color --output --quiet --show --strict --threshold --torch --version" "snapdiff report --"
else
    echo "SKIP fish: not installed"
fi

# ---- zsh --------------------------------------------------------------------------------
if command -v zsh >/dev/null 2>&1; then
    got=$(zsh -c 'autoload -U compinit; compinit -u -D; source "$1"; print -r -- $_comps[snapdiff]' \
          _ "$comp/_snapdiff" 2>&1)
    expect zsh "source _snapdiff after compinit" "_snapdiff" "$got"
    # Real completion needs a terminal: tests/docs/zsh_complete.zsh drives one through zpty.
    zsh_complete() {   # LINE
        timeout 120 zsh -f "$here/zsh_complete.zsh" "$comp" "$1" | sort -u | tr '\n' ' ' |
            sed 's/ $//'
    }
    if zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
        expect zsh "snapdiff --gr" "--group-by" "$(zsh_complete 'snapdiff --gr')"
        expect zsh "snapdiff st" "stats" "$(zsh_complete 'snapdiff st')"
        expect zsh "snapdiff help " "check curve diff dump frag mcp plan replay report series stats summarize top trace" "$(zsh_complete 'snapdiff help ')"
        expect zsh "snapdiff trace --" "--color --depth --focus --group-by --help --hide --jobs --json --max-memory --no-color --quiet --show --since --top --until --version" \
            "$(zsh_complete 'snapdiff trace --')"
        expect zsh "snapdiff --format=" "folded json pprof text" "$(zsh_complete 'snapdiff --format=')"
        expect zsh "snapdiff stats --" "--color --help --jobs --json --max-memory --no-color --quiet --version" \
            "$(zsh_complete 'snapdiff stats --')"
        expect zsh "snapdiff --group-by " "annotation compile-context file function leaf site stack" \
            "$(zsh_complete 'snapdiff --group-by ')"
        expect zsh "snapdiff frag --" "--color --gap-threshold --help --index-threshold --jobs --json --map --max-memory --no-color --quiet --svg --version" \
            "$(zsh_complete 'snapdiff frag --')"
        expect zsh "snapdiff report --" "--alloc-conf --as-ranks --as-series --baseline-step --capacity --color --depth --focus --gap-threshold --group-by --help --hide --index-threshold --jobs --log-format --max-memory --memory-fraction --name-pattern --no-color --output --quiet --show --strict --threshold --torch --version" \
            "$(zsh_complete 'snapdiff report --')"
    else
        echo "SKIP zsh completion runs: no zsh/zpty module"
    fi
else
    echo "SKIP zsh: not installed"
fi

exit "$fail"
