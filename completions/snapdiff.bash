# bash completion for snapdiff(1)                                    -*- shell-script -*-
#
# Install as /usr/share/bash-completion/completions/snapdiff (cmake --install does), or
# source it from ~/.bashrc. The block between BEGIN and END GENERATED is written from the
# option table in src/cli/options.c by snapdiff-gendocs (`cmake --build build --target
# docs`); the rest, how the line is read, is by hand.

# BEGIN GENERATED
# The commands, in --help's order.
_snapdiff_commands()
{
    echo 'diff stats frag trace series check dump summarize top report replay curve plan mcp'
}

# The options of COMMAND (before a command is given: all of them).
_snapdiff_options()
{
    case $1 in
        diff) echo '--help -h --version -V --json -j --format -f --output -o --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n --steps --capacity --max-growth --at' ;;
        stats) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs' ;;
        frag) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs --gap-threshold --index-threshold --map --svg' ;;
        trace) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n --since --until' ;;
        series) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n --steps --capacity --sort --steps-between --min-slope --confidence --ascii --as-series --as-ranks --name-pattern --strict' ;;
        check) echo '--help -h --version -V --json -j --format -f --output -o --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n --steps --max-growth --max-growth-pct --max-group-growth --max-per-step --max-reserved --max-frag-index --fail-on-new-site --max-ooms --config --repo-root --strict' ;;
        dump) echo '--help -h --version -V --no-color --color --max-memory --quiet -q' ;;
        summarize) echo '--help -h --version -V --output -o --no-color --color --max-memory --quiet -q --jobs --shard --force' ;;
        top) echo '--help -h --version -V --json -j --format -f --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n' ;;
        report) echo '--help -h --version -V --output -o --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --capacity --gap-threshold --index-threshold --alloc-conf --memory-fraction --torch --as-series --as-ranks --name-pattern --strict --baseline-step --threshold --log-format' ;;
        replay) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs --capacity --alloc-conf --memory-fraction --torch' ;;
        curve) echo '--help -h --version -V --json -j --format -f --no-color --color --max-memory --quiet -q --capacity --max-growth-pct --max-per-step --config --baseline-step --threshold --max-fraction --horizon --log-format --pattern --format-list' ;;
        plan) echo '--help -h --version -V --json -j --no-color --color --max-memory --quiet -q --jobs --top -n --capacity --at --size --max --check --batch-scale --zero --shard' ;;
        mcp) echo '--help -h --version -V --no-color --color --max-memory --quiet -q --root' ;;
        *) echo '--help -h --version -V --json -j --format -f --output -o --no-color --color --max-memory --quiet -q --jobs --group-by -g --depth -d --hide --show --focus --top -n --steps --capacity --max-growth --max-growth-pct --max-group-growth --max-per-step --max-reserved --max-frag-index --fail-on-new-site --max-ooms --config --repo-root --gap-threshold --index-threshold --map --svg --since --until --sort --steps-between --min-slope --confidence --ascii --alloc-conf --memory-fraction --torch --as-series --as-ranks --name-pattern --strict --at --size --max --check --batch-scale --zero --baseline-step --threshold --max-fraction --horizon --log-format --pattern --format-list --shard --force --root' ;;
    esac
}

# Does OPTION take a value (the next word, or after '=')?
_snapdiff_takes_value()
{
    case $1 in
        --format|-f|--output|-o|--max-memory|--jobs|--group-by|-g|--depth|-d|--hide|--show|--focus|--top|-n|--steps|--capacity|--max-growth|--max-growth-pct|--max-group-growth|--max-per-step|--max-reserved|--max-frag-index|--fail-on-new-site|--max-ooms|--config|--repo-root|--gap-threshold|--index-threshold|--svg|--since|--until|--sort|--steps-between|--min-slope|--confidence|--alloc-conf|--memory-fraction|--torch|--name-pattern|--at|--size|--check|--batch-scale|--zero|--baseline-step|--threshold|--max-fraction|--horizon|--log-format|--pattern|--shard|--root) return 0 ;;
    esac
    return 1
}

# What COMMAND's OPTION takes: 'words W...', files, dirs, or anything (nothing).
_snapdiff_value()
{
    case $2 in
        --format|-f)
            case $1 in
                check) echo 'words text json github junit' ;;
                curve) echo 'words text json github' ;;
                *) echo 'words text json folded pprof' ;;
            esac ;;
        --output|-o) echo files ;;
        --group-by|-g) echo 'words site leaf stack file function annotation compile-context' ;;
        --config) echo files ;;
        --repo-root) echo dirs ;;
        --svg) echo files ;;
        --sort) echo 'words name time' ;;
        --at)
            case $1 in
                plan) : ;;
                *) echo 'words end peak' ;;
            esac ;;
        --check) echo files ;;
        --zero) echo 'words 1 2 3' ;;
        --log-format) echo 'words text jsonl csv nvidia-smi' ;;
        --shard)
            case $1 in
                summarize) echo 'words auto' ;;
                *) : ;;
            esac ;;
        --root) echo dirs ;;
    esac
}
# END GENERATED

_snapdiff()
{
    # Plain COMP_WORDS, so that it works with or without the bash-completion package.
    # With '=' in COMP_WORDBREAKS (the default), "--top=5" arrives as "--top" "=" "5".
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local -a words=("${COMP_WORDS[@]}")
    local cword=$COMP_CWORD
    COMPREPLY=()
    local commands
    commands=$(_snapdiff_commands)

    # Which command is this? The first word that is not an option (nor an option's value);
    # any other word than a command means `snapdiff OLD NEW`, a diff.
    local i w cmd='' seen_files=0
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if [[ $w == -- ]]; then
            seen_files=1
            break
        fi
        if [[ $w == -* ]]; then
            if [[ $w != *=* ]] && _snapdiff_takes_value "$w"; then
                ((i++))                                  # its value
                [[ ${words[i]} == = ]] && ((i++))        # "--top" "=" "5"
            fi
            continue
        fi
        if [[ " $commands help " == *" $w "* ]]; then
            cmd=$w
        else
            cmd='diff'
        fi
        break
    done

    # Values: "--opt VALUE" and "--opt=VALUE" (split at '=' or not).
    local opt=$prev value=$cur prefix=''
    if [[ $cur == = ]]; then
        opt=$prev value=''
    elif [[ $prev == = ]] && ((cword >= 2)); then
        opt=${words[cword-2]}
    elif [[ $cur == --*=* ]]; then
        opt=${cur%%=*} value=${cur#*=} prefix=${cur%%=*}=
    fi
    if [[ $seen_files -eq 0 ]] && _snapdiff_takes_value "$opt"; then
        local what
        what=$(_snapdiff_value "$cmd" "$opt")
        case $what in
            words\ *)
                mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "${what#words }" -- "$value") ;;
            files)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$value") ;;
            dirs)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -P "$prefix" -d -- "$value") ;;
        esac
        return   # a number, a size, a pattern: nothing sensible to offer
    fi

    # snapdiff help COMMAND: the command names, no files (help is never a file name).
    if [[ $cmd == help ]]; then
        [[ $cur == -* ]] || mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
        return
    fi

    if [[ $cur == -* && $seen_files -eq 0 ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_snapdiff_options "$cmd")" -- "$cur")
        return
    fi

    # Files (snapshots, zips, directories); the commands too while none is given yet.
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    if [[ -z $cmd ]]; then
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$commands help" -- "$cur")
    fi
} &&
    complete -F _snapdiff snapdiff
