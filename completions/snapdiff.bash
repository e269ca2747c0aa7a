# bash completion for snapdiff(1)                                    -*- shell-script -*-
#
# Install as /usr/share/bash-completion/completions/snapdiff (cmake --install does), or
# source it from ~/.bashrc. Kept in sync with `snapdiff --help` by tests/check_docs_sync.sh.

_snapdiff()
{
    # Plain COMP_WORDS, so that it works with or without the bash-completion package.
    # With '=' in COMP_WORDBREAKS (the default), "--top=5" arrives as "--top" "=" "5".
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local -a words=("${COMP_WORDS[@]}")
    local cword=$COMP_CWORD
    COMPREPLY=()

    local commands='diff stats frag series trace check report summarize dump top replay curve mcp help'
    local common='--help -h --version -V --no-color --color --max-memory --quiet -q'
    local json='--json -j --jobs'   # diff, stats, frag, series, trace, check
    local diff_opts='--format -f --output -o --group-by -g --depth -d --hide --show --focus
        --top -n --steps --capacity --max-growth'
    local frag_opts='--gap-threshold --index-threshold --map --svg'
    local trace_opts='--group-by -g --depth -d --hide --show --focus --top -n --since --until'
    local series_opts='--group-by -g --depth -d --hide --show --focus --top -n --steps --capacity
        --sort --steps-between --min-slope --confidence --ascii --as-series --as-ranks
        --name-pattern --strict'
    local check_only='--max-growth-pct --max-group-growth --max-per-step --max-reserved
        --max-frag-index --fail-on-new-site --max-ooms --config --repo-root --strict'
    local check_opts="--format -f --output -o --group-by -g --depth -d --hide --show --focus --top -n
        --steps --max-growth $check_only"
    local curve_opts='--json -j --format -f --capacity --max-per-step --max-growth-pct --config
        --baseline-step --threshold --max-fraction --horizon --log-format --format-list --pattern'
    local report_opts='--output -o --jobs --group-by -g --depth -d --hide --show --focus
        --gap-threshold --index-threshold --as-series --as-ranks --capacity --baseline-step
        --threshold --log-format --name-pattern --strict --alloc-conf --memory-fraction --torch'
    # Options whose value is the next word.
    local takes_value='--format|-f|--output|-o|--group-by|-g|--depth|-d|--hide|--show|--focus|--top|-n|--steps|--capacity|--max-growth|--max-memory|--jobs|--gap-threshold|--index-threshold|--svg|--since|--until|--sort|--steps-between|--min-slope|--confidence|--max-growth-pct|--max-group-growth|--max-per-step|--max-reserved|--max-frag-index|--fail-on-new-site|--max-ooms|--config|--repo-root|--baseline-step|--threshold|--max-fraction|--horizon|--log-format|--alloc-conf|--memory-fraction|--torch|--at|--shard|--root|--pattern|--name-pattern'

    # Values: "--opt VALUE" and "--opt=VALUE" (split at '=' or not).
    local opt=$prev value=$cur prefix=''
    if [[ $cur == = ]]; then
        opt=$prev value=''
    elif [[ $prev == = ]] && ((cword >= 2)); then
        opt=${words[cword-2]}
    elif [[ $cur == --*=* ]]; then
        opt=${cur%%=*} value=${cur#*=} prefix=${cur%%=*}=
    fi
    case $opt in
        --group-by|-g)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W 'site leaf stack file function annotation compile-context' -- "$value")
            return ;;
        --log-format)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W 'text jsonl csv nvidia-smi' -- "$value")
            return ;;
        --baseline-step|--threshold|--max-fraction|--horizon)
            return ;;
        --sort)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W 'name time' -- "$value")
            return ;;
        --format|-f)
            local formats='text json folded pprof'
            [[ " ${words[*]} " == *" check "* ]] && formats='text json github junit'
            [[ " ${words[*]} " == *" curve "* ]] && formats='text json github'
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$formats" -- "$value")
            return ;;
        --at)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W 'end peak' -- "$value")
            return ;;
        --shard)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W 'auto 0/2' -- "$value")
            return ;;
        --config)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$value")
            return ;;
        --repo-root|--root)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -d -- "$value")
            return ;;
        --max-group-growth|--max-per-step|--max-reserved|--fail-on-new-site)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W '0 64MiB 256MiB 1GiB' -- "$value")
            return ;;
        --max-growth-pct|--max-frag-index)
            return ;;
        --max-ooms)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W '0 1' -- "$value")
            return ;;
        --svg|--output|-o)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$value")
            return ;;
        --min-slope)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W '64KiB 256KiB 1MiB 16MiB' -- "$value")
            return ;;
        --max-memory|--capacity|--max-growth)
            mapfile -t COMPREPLY < <(compgen -P "$prefix" -W '8GiB 16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -- "$value")
            return ;;
        --depth|-d|--top|-n|--steps|--jobs|--gap-threshold|--index-threshold|--hide|--show|--focus|--since|--until|--steps-between|--confidence)
            # A number or a regular expression: nothing sensible to offer.
            return ;;
    esac

    # Which command is this? The first word that is not an option (nor an option's value).
    local i w cmd='' seen_files=0
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if [[ $w == -- ]]; then
            seen_files=1
            break
        fi
        if [[ $w == -* ]]; then
            if [[ $w != *=* && $w =~ ^($takes_value)$ ]]; then
                ((i++))                                  # its value
                [[ ${words[i]} == = ]] && ((i++))        # "--top" "=" "5"
            fi
            continue
        fi
        case $w in
            diff|stats|frag|series|trace|check|report|summarize|dump|top|replay|curve|mcp|help) cmd=$w ;;
            *) cmd='diff' ;;   # snapdiff OLD NEW
        esac
        break
    done

    # snapdiff help COMMAND: the command names, no files (help is never a file name).
    if [[ $cmd == help ]]; then
        [[ $cur == -* ]] || mapfile -t COMPREPLY < <(compgen -W 'diff stats frag series trace check report summarize dump top replay curve mcp' -- "$cur")
        return
    fi

    if [[ $cur == -* && $seen_files -eq 0 ]]; then
        local opts
        case $cmd in
            '') opts="$common $json $diff_opts $frag_opts --since --until --sort --steps-between --min-slope --confidence --ascii --as-series --as-ranks $check_only" ;;
            '') opts="$common $json $diff_opts $frag_opts --since --until --sort --steps-between --min-slope --confidence --ascii $check_only --baseline-step --threshold --max-fraction --horizon --log-format --format-list --pattern" ;;
            diff) opts="$common $json $diff_opts --at" ;;
            stats) opts="$common $json" ;;
            frag) opts="$common $json $frag_opts" ;;
            trace) opts="$common $json $trace_opts" ;;
            series) opts="$common $json $series_opts" ;;
            check) opts="$common $json $check_opts" ;;
            dump) opts="$common" ;;
            report) opts="$common $report_opts" ;;
            summarize) opts="$common --output -o --jobs --shard --force" ;;
            top) opts="$common $json --format -f --group-by -g --depth -d --hide --show --focus --top -n --jobs" ;;
            replay) opts="$common --json -j --jobs --alloc-conf --capacity --memory-fraction --torch" ;;
            curve) opts="$common $curve_opts" ;;
            mcp) opts="$common --root" ;;
        esac
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
        return
    fi

    # Files (snapshots, zips, directories); the commands too while none is given yet.
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    if [[ -z $cmd ]]; then
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$commands" -- "$cur")
    fi
} &&
    complete -F _snapdiff snapdiff
