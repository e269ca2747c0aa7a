/* commands.c - the run function of each command, from the registry (commands.def): the one
 * dispatch table main.c and the MCP server (mcp_tools.c) go through. Kept apart from
 * options.c, which snapdiff-gendocs links without the commands. */
#include "commands.h"

static cli_run_fn *const runs[] = {
#define CLI_COMMAND(ID, name, ...) [CMD_##ID] = cmd_##name,
#include "commands.def"
#undef CLI_COMMAND
};

cli_run_fn *cli_command_run(enum cli_command cmd)
{
    return cmd > CMD_NONE && cmd < CMD_END ? runs[cmd] : NULL;
}
