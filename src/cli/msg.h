/* msg.h - every message the CLI writes to stderr goes through here.
 * stdout is for results only. Prefix "snapdiff: ". */
#ifndef SNAPDIFF_CLI_MSG_H
#define SNAPDIFF_CLI_MSG_H

#include <stdbool.h>
#include <stdio.h>
#include "snapdiff/snapdiff.h"

#define MSG_PRINTF(a, b) __attribute__((format(printf, a, b)))

void msg_set_quiet(bool quiet);
/* Where the messages go: NULL (the start) is stderr; the MCP server gives each call's own
 * buffer (mcp_tools.c), so that its messages come back in the result. */
void msg_set_stream(FILE *f);
void msg_error(const char *fmt, ...) MSG_PRINTF(1, 2);   /* "snapdiff: error text" */
void msg_warn(const char *fmt, ...) MSG_PRINTF(1, 2);    /* "snapdiff: warning: ..." */
void msg_note(const char *fmt, ...) MSG_PRINTF(1, 2);    /* "snapdiff: note: ..." */
/* "snapdiff: SOURCE: offset N: TEXT" - the one line for a failed load. */
void msg_sd_error(const sd_error *err);
/* The commands' own failed allocations: err gets SD_ENOMEM and "out of memory" (for
 * msg_sd_error); returns SD_ENOMEM. */
sd_status msg_nomem(sd_error *err);

#endif
