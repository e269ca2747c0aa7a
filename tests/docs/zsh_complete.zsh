#!/usr/bin/zsh -f
# zsh_complete.zsh FPATH_DIR LINE
#
# Print the matches zsh's completion offers for LINE (one per line), with the completion
# functions of FPATH_DIR first in $fpath. Completion needs a terminal, so this drives an
# interactive zsh through zpty; compadd is wrapped to print every match it adds, and the
# shell exits as soon as the completion is done, so reading to the end is deterministic.
# After the approach of Valodim's zsh-capture-completion.
zmodload zsh/zpty || exit 3
[[ $# == 2 ]] || { print -u2 "usage: zsh_complete.zsh FPATH_DIR LINE"; exit 2 }

local init=$(mktemp) || exit 2
trap 'rm -f $init' EXIT
cat >$init <<EOF
PROMPT=
fpath=(${(q)1} \$fpath)
autoload -U compinit
compinit -u -D
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
marker () { print -r -- '<m''arker>' }
compprefuncs=(marker)
comppostfuncs=(marker exit)
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd () {
    # Calls that only collect matches (-O, -A, -D) are not additions: pass them on.
    if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
        builtin compadd "\$@"
        return
    fi
    local -a __hits
    builtin compadd -A __hits "\$@"
    local h
    for h in \$__hits; do print -r -- "<hit>\$h"; done
    builtin compadd "\$@"
}
# Ready only once the line editor reads the line: a tab typed before that (while the
# terminal is still in cooked mode) can be dropped when zle switches it to raw mode, and
# the completion then never runs.
zle-line-init () { print -r -- '<re''ady>' }
zle -N zle-line-init
EOF

zpty z zsh -f -i
zpty -w z "source ${(q)init}"
# A read may return part of a line (on a busy machine the shell's output arrives in
# pieces): what was read is gathered, and looked at only as a whole.
local chunk seen=
while zpty -r z chunk; do
    seen+=$chunk
    [[ $seen == *'<ready>'* ]] && break
done
zpty -w -n z "$2"$'\t'
local out=
while zpty -r z chunk; do out+=$chunk; done
local -a lines=("${(@f)out}")
local line
for line in $lines; do
    [[ $line == *'<hit>'* ]] && print -r -- ${${line##*<hit>}%%$'\r'*}
done
zpty -d z 2>/dev/null
return 0
