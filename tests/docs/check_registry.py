#!/usr/bin/env python3
"""check_registry.py [--selftest] SNAPDIFF_BIN SOURCE_DIR

The command registry (src/cli/commands.def) is the one list of commands: adding a command
is a row there, its cmd_<name>.c and its option rows. This fails (exit 1), naming what is
wrong where, unless

  * `snapdiff --help` lists exactly the registry's commands, in its order, each with its
    usage and help line, and `snapdiff CMD --help` is that command's help (docs_sync then
    holds the man page, the completions and docs/reference.md to --help);
  * every command reaches its run function: `snapdiff CMD` on inputs that do not exist
    fails on the input (exit 2, the file named), not on the command;
  * the MCP server's tools/list names exactly the registry's tools, in their place, each
    with the registry's schemas in its outputSchema; tools/call runs each one (a file that
    is no snapshot comes back as the command's own error); the server's instructions
    describe every tool that reads (the writers have their own words) and docs/mcp.md's
    list of tools names every tool;
  * no source file under src/cli/ keeps a list of the commands of its own again: a switch
    with `case CMD_...`, a table with a row per command name, or a string naming five or
    more commands.

--selftest: the same checks on altered copies (a row added to the registry, a tool left
out of tools/list, a switch put back) must fail, or a pass means nothing. Exit 2: cannot
run at all.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROW = re.compile(r'^CLI_COMMAND\(\s*([A-Z_]+)\s*,\s*([a-z_]+)\s*,\s*"([^"]*)"\s*,\s*(\d+)\s*,\s*(\d+)\s*,'
                 r'\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*,\s*(\d+)\s*,\s*([A-Z_| 0]+?)\s*,'
                 r'\s*"([^"]*)"\s*\)', re.M | re.S)


def registry(text):
    """The rows of commands.def, as dicts, in order."""
    body = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    rows = []
    for m in ROW.finditer(body):
        rows.append({'id': m.group(1), 'name': m.group(2), 'usage': m.group(3),
                     'min': int(m.group(4)), 'max': int(m.group(5)),
                     'help': m.group(6).replace('\\"', '"'), 'tool': int(m.group(8)),
                     'writes': 'TOOL_WRITES' in m.group(9), 'schemas': m.group(10).split()})
    n_macro = len(re.findall(r'^CLI_COMMAND\(', body, re.M))
    if n_macro != len(rows):
        raise SystemExit('check_registry: %d CLI_COMMAND rows, %d read: fix ROW' % (n_macro, len(rows)))
    return rows


def check_help(rows, help_text, command_help):
    """--help's Commands section against the registry; command_help(name) -> (rc, text)."""
    out = []
    section = help_text.split('\nCommands:\n', 1)[-1].split('\n\n', 1)[0].splitlines()
    listed = [l.split()[0] for l in section if l.strip() and l.split()[0] != 'help']
    names = [r['name'] for r in rows]
    if listed != names:
        out.append('--help lists the commands %s; the registry has %s' % (listed, names))
    for r in rows:
        line = [l for l in section if l.split() and l.split()[0] == r['name']]
        if line and (r['help'] not in line[0] or (r['usage'] and r['usage'] not in line[0])):
            out.append('--help: the line of %s is not its usage and help: %r' % (r['name'], line[0]))
        rc, text = command_help(r['name'])
        if rc != 0 or not text.startswith('Usage: snapdiff %s ' % r['name']):
            out.append('snapdiff %s --help: exit %d, %r' % (r['name'], rc, text[:80]))
    return out


def check_dispatch(rows, run):
    """Each command on missing inputs fails on the input; run(args) -> (rc, stderr)."""
    out = []
    for r in rows:
        if r['name'] == 'mcp':
            continue   # a server: the MCP checks run it
        n = max(r['min'], 1)
        files = ['no-such-input-%d.pickle' % i for i in range(n)]
        args = [r['name']] + files
        if r['name'] == 'check':
            args += ['--max-growth', '1MiB']
        if r['writes']:
            args += ['-o', os.devnull]
        rc, err = run(args)
        # the input's error, not a usage error (curve's reader says "<input>")
        if rc != 2 or 'Try \'snapdiff --help\'' in err or not (
                'no-such-input-0.pickle' in err or 'cannot open' in err):
            out.append('snapdiff %s: expected exit 2 on the missing input, got %d: %r'
                       % (' '.join(args), rc, err[:200]))
    return out


def check_tools(rows, tools, called, instructions, mcp_doc):
    """tools/list (the parsed list), the result of a call of each tool (name -> result or
    error), the server's instructions and docs/mcp.md's text."""
    out = []
    want = [r['name'] for r in sorted((r for r in rows if r['tool']), key=lambda r: r['tool'])]
    got = [t.get('name') for t in tools]
    if got != want:
        out.append('tools/list names %s; the registry has %s' % (got, want))
    by_name = {t.get('name'): t for t in tools}
    for r in rows:
        t = by_name.get(r['name'])
        if not r['tool'] or not t:
            continue
        enum = t.get('outputSchema', {}).get('properties', {}).get('schema', {}).get('enum')
        expect = ['snapdiff.mcp-output/1'] if r['writes'] else r['schemas'] + ['snapdiff.mcp-documents/1']
        if enum != expect:
            out.append('tools/list: %s outputSchema schema %s, the registry says %s' % (r['name'], enum, expect))
        if r['writes'] != ('output' in t['inputSchema'].get('required', [])):
            out.append('tools/list: %s: output required is not the registry\'s TOOL_WRITES' % r['name'])
        res = called.get(r['name'])
        text = json.dumps(res)
        if not res or 'result' not in res or 'not-a-snapshot' not in text:
            out.append('tools/call %s: not run by the command (%s)' % (r['name'], text[:200]))
        if not r['writes'] and not re.search(r'(^|[^a-z])%s:' % r['name'], instructions):
            out.append('the MCP instructions (cmd_mcp.c) do not describe the tool %s' % r['name'])
    m = re.search(r'`tools/list` names \w+ tools, one per command: ((?:`[a-z]+`,?\s*)+)', mcp_doc)
    doc_tools = re.findall(r'`([a-z]+)`', m.group(1)) if m else []
    if doc_tools != want:
        out.append('docs/mcp.md names the tools %s; tools/list has %s' % (doc_tools, want))
    return out


def check_sources(rows, sources):
    """sources: {path: text} of src/cli/ but commands.def."""
    out = []
    names = [r['name'] for r in rows]
    for path, text in sorted(sources.items()):
        code = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
        cases = set(re.findall(r'\bcase\s+CMD_([A-Z_]+)\s*:', code))
        if cases:
            out.append('%s: a switch over the commands (case CMD_%s): go through the registry'
                       % (path, ', CMD_'.join(sorted(cases))))
        rows_named = [n for n in names if re.search(r'^\s*\{\s*"%s"\s*,' % n, code, re.M)]
        if len(rows_named) >= 3:
            out.append('%s: a table with a row per command (%s): the registry has them'
                       % (path, ', '.join(rows_named)))
        for lit in re.findall(r'"((?:[^"\\\n]|\\.)*)"', code):
            words = set(re.findall(r'[a-z]+', lit)) & set(names)
            if len(words) >= 5:
                out.append('%s: a string naming the commands %s: derive it from the registry'
                           % (path, ', '.join(sorted(words))))
    return out


# ---------------------------------------------------------------------------------------

def run_bin(binary, args, cwd=None, stdin=b''):
    p = subprocess.run([binary] + args, cwd=cwd, input=stdin, capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def mcp_session(binary, rows, root):
    """tools/list, instructions, and a call of each tool on a file that is no snapshot."""
    with open(os.path.join(root, 'not-a-snapshot.pickle'), 'wb') as f:
        f.write(b'this is not a pickle\n')
    msgs = [{'jsonrpc': '2.0', 'id': 1, 'method': 'initialize',
             'params': {'protocolVersion': '2025-06-18', 'capabilities': {}}},
            {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'}]
    ids = {}
    for i, r in enumerate(rows):
        args = {'files': ['not-a-snapshot.pickle'] * max(r['min'], 1)}
        if r['writes']:
            args.update(output='out-%s' % r['name'], overwrite=True)
        if r['name'] == 'check':
            args['max-growth'] = '1MiB'
        ids[100 + i] = r['name']
        msgs.append({'jsonrpc': '2.0', 'id': 100 + i, 'method': 'tools/call',
                     'params': {'name': r['name'], 'arguments': args}})
    stdin = ''.join(json.dumps(m) + '\n' for m in msgs).encode()
    rc, out, err = run_bin(binary, ['mcp', '--root', root], cwd=root, stdin=stdin)
    replies = {}
    for line in out.splitlines():
        j = json.loads(line)
        replies[j.get('id')] = j
    if 1 not in replies or 2 not in replies:
        raise SystemExit('check_registry: snapdiff mcp did not answer (exit %d): %s' % (rc, err[:300]))
    called = {ids[k]: v for k, v in replies.items() if k in ids}
    return (replies[2]['result']['tools'], called,
            replies[1]['result'].get('instructions', ''))


def cli_sources(src):
    d = os.path.join(src, 'src', 'cli')
    out = {}
    for base, _, files in os.walk(d):
        for f in files:
            if f.endswith(('.c', '.h')):
                p = os.path.join(base, f)
                out[os.path.relpath(p, src)] = open(p, encoding='utf-8').read()
    return out


def all_checks(binary, src, rows=None, tools_edit=None, sources=None):
    text = open(os.path.join(src, 'src', 'cli', 'commands.def'), encoding='utf-8').read()
    rows = rows if rows is not None else registry(text)
    if len(rows) < 3:
        raise SystemExit('check_registry: read %d rows from commands.def' % len(rows))
    problems = []
    rc, help_text, _ = run_bin(binary, ['--help'])
    if rc != 0:
        raise SystemExit('check_registry: %s --help failed' % binary)
    problems += check_help(rows, help_text, lambda n: run_bin(binary, [n, '--help'])[:2])
    with tempfile.TemporaryDirectory() as tmp:
        problems += check_dispatch(rows, lambda a: (lambda r: (r[0], r[2]))(run_bin(binary, a, cwd=tmp)))
        tools, called, instructions = mcp_session(binary, rows, os.path.realpath(tmp))
    if tools_edit:
        tools = tools_edit(tools)
    mcp_doc = open(os.path.join(src, 'docs', 'mcp.md'), encoding='utf-8').read()
    problems += check_tools(rows, tools, called, instructions, mcp_doc)
    problems += check_sources(rows, sources if sources is not None else cli_sources(src))
    return problems


def selftest(binary, src):
    text = open(os.path.join(src, 'src', 'cli', 'commands.def'), encoding='utf-8').read()
    rows = registry(text)
    added = rows + [dict(rows[1], id='BLAME', name='blame', tool=len(rows) + 1)]
    sources = cli_sources(src)
    switch = dict(sources)
    switch['src/cli/main.c'] += ('\nstatic int old(int c) { switch (c) { case CMD_DIFF: return 1; '
                                 'case CMD_STATS: return 2; } return 0; }\n')
    table = dict(sources)
    table['src/cli/mcp_tools.c'] += ('\nstatic const struct { const char *n; } t[] = {\n    {"top", 1},\n'
                                     '    {"diff", 2},\n    {"frag", 3},\n};\n')
    words = dict(sources)
    words['src/cli/options.c'] += '\nstatic const char *w = "(diff, stats, frag, series, trace, top)";\n'
    cases = [('a row added to the registry and nowhere else', dict(rows=added)),
             ('a tool left out of tools/list', dict(tools_edit=lambda t: t[:-1])),
             ('a switch over the commands', dict(sources=switch)),
             ('a table of the commands', dict(sources=table)),
             ('a string naming the commands', dict(sources=words))]
    failed = 0
    for what, kw in cases:
        problems = all_checks(binary, src, **kw)
        print('selftest: %s: %s' % (what, problems[:2] if problems else 'NOT CAUGHT'))
        failed += not problems
    if all_checks(binary, src):
        print('selftest: the tree itself does not pass')
        failed += 1
    return 1 if failed else 0


def main():
    args = sys.argv[1:]
    self_test = args[:1] == ['--selftest']
    if self_test:
        args = args[1:]
    if len(args) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    binary, src = os.path.abspath(args[0]), os.path.abspath(args[1])
    if self_test:
        return selftest(binary, src)
    problems = all_checks(binary, src)
    for p in problems:
        print(p)
    print('check_registry: %s' % ('%d problem(s)' % len(problems) if problems else 'the registry is the one list'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
