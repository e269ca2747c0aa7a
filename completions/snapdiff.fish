# fish completion for snapdiff(1). Install into a vendor_completions.d directory (cmake
# --install does). Kept in sync with `snapdiff --help` by tests/check_docs_sync.sh.

# The command in effect: the first word that is not an option (nor an option's value);
# any other word than a command name means `snapdiff OLD NEW`, that is diff. Empty when
# no such word is there yet.
function __snapdiff_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --
                break
            case -f -g -d -n --format --group-by --depth --top --hide --show --focus --steps \
                --capacity --max-growth --max-memory --jobs --gap-threshold --index-threshold --svg
                set skip 1
            case '-*'
                continue
            case diff stats frag dump help
                echo $w
                return
            case '*'
                echo diff
                return
        end
    end
end

# Does the current command accept this option? (All of them before the command is known.)
function __snapdiff_for
    set -l cmd (__snapdiff_command)
    test -z "$cmd"; or contains -- $cmd $argv
end

complete -c snapdiff -f

# Commands, while none is given; snapshots (files, zips, directories) at any point.
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a diff -d 'what grew between two snapshots, grouped by allocation site'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a stats -d 'totals per device: reserved, allocated, blocks, trace'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a frag -d 'fragmentation: gap, free-block sizes, verdict and advice'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a dump -d 'the whole pickle as JSON, for jq'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a help -d 'this help, or one command\'s'
# snapdiff help COMMAND: the command names (help is never a file name).
complete -c snapdiff -n 'test "$(__snapdiff_command)" = help' -a 'diff stats frag dump'
complete -c snapdiff -n 'test "$(__snapdiff_command)" != help' -F

# Options of every command.
complete -c snapdiff -s h -l help -d 'show the help and exit'
complete -c snapdiff -s V -l version -d 'show the version and exit'
complete -c snapdiff -l no-color -d 'never colour the output (NO_COLOR is honoured too)'
complete -c snapdiff -l color -d 'colour the output even when it is not a terminal'
complete -c snapdiff -l max-memory -x -a '8GiB 16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'memory budget per snapshot (default: half of physical memory)'
complete -c snapdiff -s q -l quiet -d 'do not print warnings and notes on stderr'

# diff, stats, frag.
complete -c snapdiff -n '__snapdiff_for diff stats frag' -s j -l json -d 'write JSON (versioned schema) instead of text'
complete -c snapdiff -n '__snapdiff_for diff stats frag' -l jobs -x -d 'load up to N files at once (default: one per CPU core)'

# diff.
complete -c snapdiff -n '__snapdiff_for diff' -s f -l format -x -a 'text json folded pprof' -d 'output format (folded: collapsed stacks for flame graphs; pprof: go tool pprof)'
complete -c snapdiff -n '__snapdiff_for diff' -s o -l output -r -F -d 'write the result to FILE instead of stdout'
complete -c snapdiff -n '__snapdiff_for diff' -s g -l group-by -x -a 'site leaf stack file function' -d 'group live blocks by'
complete -c snapdiff -n '__snapdiff_for diff' -s d -l depth -x -d 'add N caller frames to the site key'
complete -c snapdiff -n '__snapdiff_for diff' -l hide -x -d 'treat matching frames as internal (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff' -l show -x -d 'treat matching frames as user code (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff' -l focus -x -d 'only blocks with a matching frame (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff' -s n -l top -x -d 'show the N largest growing groups (default 20)'
complete -c snapdiff -n '__snapdiff_for diff' -l steps -x -d 'training steps between the snapshots: growth per step'
complete -c snapdiff -n '__snapdiff_for diff' -l capacity -x -a '16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'device memory for the steps-until-full estimate'
complete -c snapdiff -n '__snapdiff_for diff' -l max-growth -x -a '0 64MiB 256MiB 1GiB' -d 'CI gate: exit 1 when allocated memory grew by more than SIZE'

# frag.
complete -c snapdiff -n '__snapdiff_for frag' -l gap-threshold -x -d 'gap in % of reserved that counts as large (default 30)'
complete -c snapdiff -n '__snapdiff_for frag' -l index-threshold -x -d 'fragmentation index that counts as fragmented (default 0.5)'
complete -c snapdiff -n '__snapdiff_for frag' -l map -d 'draw a map of the largest segments'
complete -c snapdiff -n '__snapdiff_for frag' -l svg -r -F -d 'write the segment map and free-block histogram as SVG'
