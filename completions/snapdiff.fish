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
                --capacity --max-growth --max-memory --jobs --gap-threshold --index-threshold --svg \
                --since --until --sort --steps-between --min-slope --confidence \
                --max-growth-pct --max-group-growth --max-per-step --max-reserved --max-frag-index \
                --fail-on-new-site --max-ooms --config --repo-root --output -o --baseline-step \
                --threshold --max-fraction --horizon --log-format --alloc-conf --memory-fraction --torch --at --shard --root --pattern --name-pattern
                set skip 1
            case '-*'
                continue
            case diff stats frag series trace check report summarize dump top replay curve mcp help
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
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a series -d 'trends over many snapshots: which groups grow, which only swing'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a trace -d 'replay the allocation history: alive at the end, peak, phases'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a check -d 'CI gate: exit 1 when NEW breaks a limit, per rank'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a dump -d 'the whole pickle as JSON, for jq'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a report -d 'one self-contained HTML page: sites, fragmentation, timeline; growth of two or more'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a summarize -d 'a small baseline summary to commit: diff, check and series take it as a snapshot'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a top -d 'live memory by site at the end and at the peak (one snapshot)'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a help -d 'this help, or one command\'s'
# snapdiff help COMMAND: the command names (help is never a file name).
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a replay -d 'the caching allocator replayed from the trace: fidelity, PYTORCH_CUDA_ALLOC_CONF what-ifs'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a curve -d 'leak or noise from the memory figures a training log holds'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a mcp -d 'serve the analyses to an AI agent: a Model Context Protocol server on stdin/stdout'
complete -c snapdiff -n 'test "$(__snapdiff_command)" = help' -a 'diff stats frag series trace check report summarize dump top replay curve mcp'
complete -c snapdiff -n 'test "$(__snapdiff_command)" != help' -F

# Options of every command.
complete -c snapdiff -s h -l help -d 'show the help and exit'
complete -c snapdiff -s V -l version -d 'show the version and exit'
complete -c snapdiff -l no-color -d 'never colour the output (NO_COLOR is honoured too)'
complete -c snapdiff -l color -d 'colour the output even when it is not a terminal'
complete -c snapdiff -l max-memory -x -a '8GiB 16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'memory budget per snapshot (default: half of physical memory)'
complete -c snapdiff -s q -l quiet -d 'do not print warnings and notes on stderr'

# diff, stats, frag, trace, series, check.
complete -c snapdiff -n '__snapdiff_for diff stats frag trace series check top replay' -s j -l json -d 'write JSON (versioned schema) instead of text'
complete -c snapdiff -n '__snapdiff_for diff stats frag trace series check report summarize top replay' -l jobs -x -d 'load up to N snapshots at once (default: one per CPU core)'

# diff.
complete -c snapdiff -n '__snapdiff_for diff' -s f -l format -x -a 'text json folded pprof' -d 'output format (folded: collapsed stacks for flame graphs; pprof: go tool pprof)'
complete -c snapdiff -n '__snapdiff_for diff check report summarize' -s o -l output -r -F -d 'write the result to FILE instead of stdout'
complete -c snapdiff -n 'test "$(__snapdiff_command)" = top' -s f -l format -x -a 'text json' -d 'output format'
complete -c snapdiff -n 'test "$(__snapdiff_command)" = check' -s f -l format -x -a 'text json github junit' -d 'output format (github: annotations; junit: XML report, with -o)'
complete -c snapdiff -n '__snapdiff_for diff trace series check report top' -s g -l group-by -x -a 'site leaf stack file function annotation compile-context' -d 'group live blocks by'
complete -c snapdiff -n '__snapdiff_for diff trace series check report top' -s d -l depth -x -d 'add N caller frames to the site key'
complete -c snapdiff -n '__snapdiff_for diff trace series check report top' -l hide -x -d 'treat matching frames as internal (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff trace series check report top' -l show -x -d 'treat matching frames as user code (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff trace series check report top' -l focus -x -d 'only blocks with a matching frame (REGEX, repeatable)'
complete -c snapdiff -n '__snapdiff_for diff trace series check top' -s n -l top -x -d 'show the N largest growing groups (default 20)'
complete -c snapdiff -n '__snapdiff_for diff series check' -l steps -x -d 'training steps between the snapshots: growth per step'
complete -c snapdiff -n '__snapdiff_for diff series' -l capacity -x -a '16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'device memory for the steps-until-full estimate'
complete -c snapdiff -n '__snapdiff_for diff check' -l max-growth -x -a '0 64MiB 256MiB 1GiB' -d 'CI gate: exit 1 when allocated memory grew by more than SIZE'

# frag.
complete -c snapdiff -n '__snapdiff_for frag report' -l gap-threshold -x -d 'gap in % of reserved that counts as large (default 30)'
complete -c snapdiff -n '__snapdiff_for frag report' -l index-threshold -x -d 'stranded index that counts as fragmented (default 0.5)'
complete -c snapdiff -n '__snapdiff_for frag' -l map -d 'draw a map of the segments with the most free memory stranded'
complete -c snapdiff -n '__snapdiff_for frag' -l svg -r -F -d 'write the segment map and free-block histogram as SVG'

# trace.
complete -c snapdiff -n '__snapdiff_for trace' -l since -x -d 'trace window start: #N (entry index), T (time_us) or +US'
complete -c snapdiff -n '__snapdiff_for trace' -l until -x -d 'trace window end (exclusive): #N, T (time_us) or +US'
# series.
complete -c snapdiff -n '__snapdiff_for series' -l sort -x -a 'name time' -d 'order the snapshots by name or time (the trace\'s last time_us)'
complete -c snapdiff -n '__snapdiff_for series' -l steps-between -x -d 'training steps between consecutive snapshots: slopes per step'
complete -c snapdiff -n '__snapdiff_for series' -l min-slope -x -a '64KiB 256KiB 1MiB 16MiB' -d 'smallest slope per snapshot that counts as growing (default 256KiB)'
complete -c snapdiff -n '__snapdiff_for series' -l confidence -x -a '0.9 0.95 0.99' -d 'trend-test confidence needed for growing or shrinking (default 0.99)'
complete -c snapdiff -n '__snapdiff_for series' -l ascii -d 'draw sparklines in ASCII, not Unicode blocks'
complete -c snapdiff -n '__snapdiff_for series report' -l as-series -d 'read the snapshots as a time series'
complete -c snapdiff -n '__snapdiff_for series report' -l as-ranks -d 'read the snapshots as ranks of one job, side by side'
complete -c snapdiff -n '__snapdiff_for series report' -l name-pattern -x -d 'read rank and step from the paths by REGEX: (?P<rank>...) (?P<step>...)'
complete -c snapdiff -n '__snapdiff_for series report check' -l strict -d 'fail on a snapshot of a folder that does not read'
# check.
complete -c snapdiff -n '__snapdiff_for check' -l max-growth-pct -x -d 'fail when allocated memory grew by more than P percent of OLD'
complete -c snapdiff -n '__snapdiff_for check' -l max-group-growth -x -a '0 16MiB 64MiB 256MiB' -d 'fail when any one site grew by more than SIZE'
complete -c snapdiff -n '__snapdiff_for check' -l max-per-step -x -a '64KiB 1MiB 16MiB' -d 'fail when memory grew by more than SIZE per step (needs --steps)'
complete -c snapdiff -n '__snapdiff_for check' -l max-reserved -x -a '16GiB 40GiB 80GiB' -d 'fail when NEW reserves more than SIZE'
complete -c snapdiff -n '__snapdiff_for check' -l max-frag-index -x -a '0.5 0.7 0.9' -d 'fail when the fragmentation index is above F'
complete -c snapdiff -n '__snapdiff_for check' -l fail-on-new-site -x -a '0 16MiB 64MiB' -d 'fail when a site absent from OLD holds more than SIZE'
complete -c snapdiff -n '__snapdiff_for check' -l max-ooms -x -a '0 1' -d 'fail when NEW recorded more than N out-of-memory errors'
complete -c snapdiff -n '__snapdiff_for check' -l config -r -F -d 'read limits from FILE (key = value lines)'
complete -c snapdiff -n '__snapdiff_for check' -l repo-root -x -a '(__fish_complete_directories)' -d 'repository for --format github file= annotations'
complete -c snapdiff -n '__snapdiff_for replay report' -l memory-fraction -x -d "the run's per-process memory fraction (0..1]"
complete -c snapdiff -n '__snapdiff_for replay report' -l torch -x -a '2.5 2.8 2.9' -d 'read --alloc-conf as this torch version parses it'
complete -c snapdiff -n '__snapdiff_for summarize' -l shard -x -a 'auto 0/2' -d "summarize only this task's share of the inputs: I/N, auto or auto/N"
complete -c snapdiff -n '__snapdiff_for summarize' -l force -d 'summarize again inputs whose summary is newer than the input'
complete -c snapdiff -n '__snapdiff_for replay report' -l alloc-conf -x -a 'expandable_segments:True max_split_size_mb:512 garbage_collection_threshold:0.6' -d 'replay under this PYTORCH_CUDA_ALLOC_CONF too (repeatable)'
complete -c snapdiff -n '__snapdiff_for replay' -l capacity -x -a '16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'what the allocator may reserve'
# curve.
complete -c snapdiff -n '__snapdiff_for curve' -s j -l json -d 'write JSON (snapdiff.curve/1) instead of text'
complete -c snapdiff -n 'test "$(__snapdiff_command)" = curve' -s f -l format -x -a 'text json github' -d 'output format'
complete -c snapdiff -n '__snapdiff_for curve report' -l capacity -x -a '16GiB 24GiB 40GiB 48GiB 80GiB 96GiB 141GiB' -d 'device memory for the steps-until-full estimate'
complete -c snapdiff -n '__snapdiff_for curve' -l max-per-step -x -a '64KiB 1MiB 16MiB' -d 'fail when the floor grows by more than SIZE per step'
complete -c snapdiff -n '__snapdiff_for curve' -l max-growth-pct -x -d 'fail when the floor grew by more than P percent of the baseline'
complete -c snapdiff -n '__snapdiff_for curve' -l config -r -F -d 'read limits from FILE (check --config format)'
complete -c snapdiff -n '__snapdiff_for curve report' -l baseline-step -x -d 'the baseline after warm-up: at step N (default 200)'
complete -c snapdiff -n '__snapdiff_for curve report' -l threshold -x -a '0.8 0.85 0.9' -d 'fraction of the capacity to stop at (default 0.85)'
complete -c snapdiff -n '__snapdiff_for curve' -l max-fraction -x -a '0.85 0.9 0.95' -d 'fail when the peak reaches F of the capacity'
complete -c snapdiff -n '__snapdiff_for curve' -l horizon -x -d 'steps ahead that --max-fraction projects'
complete -c snapdiff -n '__snapdiff_for curve' -l pattern -x -d 'read only the lines matching REGEX, groups named (?P<name>...)'
complete -c snapdiff -n '__snapdiff_for curve' -l format-list -d 'list the log formats curve reads, with an example line each'
complete -c snapdiff -n '__snapdiff_for curve report' -l log-format -x -a 'text jsonl csv nvidia-smi' -d 'read the logs as'
complete -c snapdiff -n '__snapdiff_for diff' -l at -x -a 'end peak' -d 'lead with the end states (end) or the peaks (peak)'

# mcp.
complete -c snapdiff -n '__snapdiff_for mcp' -l root -x -a '(__fish_complete_directories)' -d 'read and write files only under DIR (repeatable)'
