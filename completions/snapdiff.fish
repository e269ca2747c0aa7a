# fish completion for snapdiff(1). Install into a vendor_completions.d directory (cmake
# --install does). The block between BEGIN and END GENERATED is written from the option
# table in src/cli/options.c by snapdiff-gendocs (`cmake --build build --target docs`);
# the rest, how the line is read, is by hand.

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
            case '-*'
                __snapdiff_takes_value $w; and set skip 1
            case '*'
                if contains -- $w (__snapdiff_commands) help
                    echo $w
                else
                    echo diff
                end
                return
        end
    end
end

# Does the current command accept this option? (All of them before the command is known.)
function __snapdiff_for
    set -l cmd (__snapdiff_command)
    test -z "$cmd"; or contains -- $cmd $argv
end

# Is the current command one of these? (None before the command is known.)
function __snapdiff_is
    contains -- (__snapdiff_command) $argv
end

complete -c snapdiff -f
# Snapshots (files, zips, directories) at any point, but after help.
complete -c snapdiff -n 'test "$(__snapdiff_command)" != help' -F
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a help -d 'this help, or one command\'s'

# BEGIN GENERATED
# Does OPTION take a value (the next word)?
function __snapdiff_takes_value
    contains -- $argv[1] --format -f --output -o --max-memory --jobs --group-by -g --depth -d --hide --show --focus --top -n --steps --capacity --max-growth --max-growth-pct --max-group-growth --max-per-step --max-reserved --max-frag-index --fail-on-new-site --max-ooms --config --repo-root --gap-threshold --index-threshold --svg --since --until --sort --steps-between --min-slope --confidence --alloc-conf --memory-fraction --torch --name-pattern --at --size --check --batch-scale --zero --baseline-step --threshold --max-fraction --horizon --log-format --pattern --shard --root
end

# The commands, in --help's order.
function __snapdiff_commands
    string split ' ' -- 'diff stats frag trace series check dump summarize top report replay curve plan mcp'
end

# Commands, while none is given; after help, the commands again.
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a diff -d 'what grew between two snapshots, grouped by allocation site'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a stats -d 'totals per device: reserved, allocated, blocks, trace'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a frag -d 'fragmentation: gap, free-block sizes, verdict and advice'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a trace -d 'replay the allocation history: alive at the end, peak, phases'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a series -d 'trends over many snapshots: which groups grow, which only swing'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a check -d 'CI gate: exit 1 when NEW breaks a limit, per rank'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a dump -d 'the whole pickle (or summary) as JSON, for jq'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a summarize -d 'a small baseline summary to commit: diff, check and series take it as a snapshot'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a top -d 'live memory by site at the end and at the peak (one snapshot)'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a report -d 'one self-contained HTML page: sites, fragmentation, timeline; growth of two or more'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a replay -d 'the caching allocator replayed from the trace: fidelity, PYTORCH_CUDA_ALLOC_CONF what-ifs'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a curve -d 'leak or noise from the memory figures a training log holds (text, JSONL, CSV, nvidia-smi)'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a plan -d 'will it fit? the peak at a size not recorded, from recordings at other sizes; or what if, from one'
complete -c snapdiff -n 'test -z "$(__snapdiff_command)"' -a mcp -d 'serve the analyses to an AI agent: a Model Context Protocol server on stdin/stdout'
complete -c snapdiff -n 'test "$(__snapdiff_command)" = help' -a 'diff stats frag trace series check dump summarize top report replay curve plan mcp'

# The options, each for the commands it applies to; where its values differ
# by command, one line per group (before a command is given: a diff's).
complete -c snapdiff -s h -l help -d 'show this help and exit'
complete -c snapdiff -s V -l version -d 'show the version and exit'
complete -c snapdiff -n '__snapdiff_for diff stats frag trace series check top replay curve plan' -s j -l json -d 'write JSON instead of text'
complete -c snapdiff -n '__snapdiff_is check' -s f -l format -x -a 'text json github junit' -d 'text, json, github or junit'
complete -c snapdiff -n '__snapdiff_is curve' -s f -l format -x -a 'text json github' -d 'text, json or github'
complete -c snapdiff -n '__snapdiff_for diff top' -s f -l format -x -a 'text json folded pprof' -d 'output format: text, json, folded or pprof'
complete -c snapdiff -n '__snapdiff_for diff check summarize report' -s o -l output -r -F -d 'write the result to FILE instead of stdout'
complete -c snapdiff -l no-color -d 'never colour the output'
complete -c snapdiff -l color -d 'colour the output even when it is not a terminal'
complete -c snapdiff -l max-memory -x -d 'memory budget per snapshot, e.g. 8GiB'
complete -c snapdiff -s q -l quiet -d 'do not print warnings and notes on stderr'
complete -c snapdiff -n '__snapdiff_for diff stats frag trace series check summarize top report replay plan' -l jobs -x -d 'load up to N snapshots at once'
complete -c snapdiff -n '__snapdiff_for diff trace series check top report' -s g -l group-by -x -a 'site leaf stack file function annotation compile-context' -d 'group live blocks by site, leaf, stack, file, function, annotation or compile-context'
complete -c snapdiff -n '__snapdiff_for diff trace series check top report' -s d -l depth -x -d 'add N caller frames to the site key'
complete -c snapdiff -n '__snapdiff_for diff trace series check top report' -l hide -x -d 'treat matching frames as internal'
complete -c snapdiff -n '__snapdiff_for diff trace series check top report' -l show -x -d 'treat matching frames as user code, even inside a package'
complete -c snapdiff -n '__snapdiff_for diff trace series check top report' -l focus -x -d 'only blocks with a matching frame'
complete -c snapdiff -n '__snapdiff_for diff trace series check top plan' -s n -l top -x -d 'show the N largest growing groups'
complete -c snapdiff -n '__snapdiff_for diff series check' -l steps -x -d 'training steps between the snapshots: growth per step'
complete -c snapdiff -n '__snapdiff_for diff series report replay curve plan' -l capacity -x -d 'device memory for the steps-until-full estimate, e.g. 80GiB, or a GPU\'s name'
complete -c snapdiff -n '__snapdiff_for diff check' -l max-growth -x -d 'CI gate: exit 1 when allocated memory grew by more than SIZE'
complete -c snapdiff -n '__snapdiff_for check curve' -l max-growth-pct -x -d 'fail when allocated memory grew by more than P percent of OLD\'s'
complete -c snapdiff -n '__snapdiff_for check' -l max-group-growth -x -d 'fail when any one group grew by more than SIZE'
complete -c snapdiff -n '__snapdiff_for check curve' -l max-per-step -x -d 'fail when allocated memory grew by more than SIZE per step'
complete -c snapdiff -n '__snapdiff_for check' -l max-reserved -x -d 'fail when NEW reserves more than SIZE'
complete -c snapdiff -n '__snapdiff_for check' -l max-frag-index -x -d 'fail when NEW\'s fragmentation index is above F'
complete -c snapdiff -n '__snapdiff_for check' -l fail-on-new-site -x -d 'fail when a site absent from OLD holds more than SIZE in NEW'
complete -c snapdiff -n '__snapdiff_for check' -l max-ooms -x -d 'fail when NEW recorded more than N out-of-memory errors'
complete -c snapdiff -n '__snapdiff_for check curve' -l config -r -F -d 'read limits from FILE'
complete -c snapdiff -n '__snapdiff_for check' -l repo-root -x -a '(__fish_complete_directories)' -d '--format github: name a site\'s file when it is in DIR'
complete -c snapdiff -n '__snapdiff_for frag report' -l gap-threshold -x -d 'gap in % of reserved that counts as large'
complete -c snapdiff -n '__snapdiff_for frag report' -l index-threshold -x -d 'stranded index that counts as fragmented'
complete -c snapdiff -n '__snapdiff_for frag' -l map -d 'draw a map of the segments with the most free memory stranded'
complete -c snapdiff -n '__snapdiff_for frag' -l svg -r -F -d 'write the segment map and free-block histogram as SVG'
complete -c snapdiff -n '__snapdiff_for trace' -l since -x -d 'trace window start: #N, T or +US'
complete -c snapdiff -n '__snapdiff_for trace' -l until -x -d 'trace window end: #N, T or +US'
complete -c snapdiff -n '__snapdiff_for series' -l sort -x -a 'name time' -d 'order the snapshots by name or time'
complete -c snapdiff -n '__snapdiff_for series' -l steps-between -x -d 'training steps between consecutive snapshots: slopes per step'
complete -c snapdiff -n '__snapdiff_for series' -l min-slope -x -d 'smallest slope per snapshot that counts as growing'
complete -c snapdiff -n '__snapdiff_for series' -l confidence -x -d 'trend-test confidence needed for growing or shrinking'
complete -c snapdiff -n '__snapdiff_for series' -l ascii -d 'draw sparklines in ASCII, not Unicode blocks'
complete -c snapdiff -n '__snapdiff_for report replay' -l alloc-conf -x -d 'replay under this PYTORCH_CUDA_ALLOC_CONF too'
complete -c snapdiff -n '__snapdiff_for report replay' -l memory-fraction -x -d 'the run\'s torch.cuda.set_per_process_memory_fraction'
complete -c snapdiff -n '__snapdiff_for report replay' -l torch -x -d 'read --alloc-conf as torch VERSION parses it: the keys it knows, its limits, its roundup_power2_divisions list'
complete -c snapdiff -n '__snapdiff_for series report' -l as-series -d 'read the snapshots as a time series, even when their names look like ranks of one job'
complete -c snapdiff -n '__snapdiff_for series report' -l as-ranks -d 'read the snapshots as ranks of one job side by side'
complete -c snapdiff -n '__snapdiff_for series report' -l name-pattern -x -d 'read rank and step from the snapshots\' paths by REGEX, its groups named,,'
complete -c snapdiff -n '__snapdiff_for series check report' -l strict -d 'fail on a snapshot of a folder that does not read, instead of leaving it out with a warning'
complete -c snapdiff -n '__snapdiff_is plan' -l at -x -d 'the size value to predict the peak at'
complete -c snapdiff -n '__snapdiff_for diff' -l at -x -a 'end peak' -d 'lead with the end states or the peaks'
complete -c snapdiff -n '__snapdiff_for plan' -l size -x -d 'the size value each recording was made at, one per file, in order'
complete -c snapdiff -n '__snapdiff_for plan' -l max -d 'instead of --at, the largest whole size whose predicted peak fits --capacity'
complete -c snapdiff -n '__snapdiff_for plan' -l check -r -F -d 'a real recording made at --at: its peaks beside the prediction, and the error'
complete -c snapdiff -n '__snapdiff_for plan' -l batch-scale -x -d 'one recording: activations and temporaries K times as large'
complete -c snapdiff -n '__snapdiff_for plan' -l zero -x -a '1 2 3' -d 'one recording, with --shard N: ZeRO stage 1, 2, 3'
complete -c snapdiff -n '__snapdiff_for report curve' -l baseline-step -x -d 'the baseline after warm-up: at step N'
complete -c snapdiff -n '__snapdiff_for report curve' -l threshold -x -d 'fraction of the capacity to stop at gracefully: steps until it'
complete -c snapdiff -n '__snapdiff_for curve' -l max-fraction -x -d 'fail when the peak reaches F of the capacity, in the run or within --horizon steps'
complete -c snapdiff -n '__snapdiff_for curve' -l horizon -x -d 'steps ahead that --max-fraction projects a growing curve'
complete -c snapdiff -n '__snapdiff_for report curve' -l log-format -x -a 'text jsonl csv nvidia-smi' -d 'read the logs as text, jsonl, csv or nvidia-smi'
complete -c snapdiff -n '__snapdiff_for curve' -l pattern -x -d 'read only the lines matching REGEX, its groups named: step, time, rank, gpu, allocated, reserved, max_allocated, max_reserved, used, free, total, unit'
complete -c snapdiff -n '__snapdiff_for curve' -l format-list -d 'list the log formats curve reads, each with a line as it comes and its unit rule, and exit'
complete -c snapdiff -n '__snapdiff_is summarize' -l shard -x -a 'auto' -d 'only this task\'s share of the sorted inputs, one summary each in -o DIR: I/N, auto or auto/N'
complete -c snapdiff -n '__snapdiff_for plan' -l shard -x -d 'one recording\'s model state sharded over N ranks'
complete -c snapdiff -n '__snapdiff_for summarize' -l force -d 'with several inputs, summarize those too whose summary in -o DIR is newer than the input'
complete -c snapdiff -n '__snapdiff_for mcp' -l root -x -a '(__fish_complete_directories)' -d 'the tools read and write files only under DIR, links resolved'
# END GENERATED
