/* config.c - --config FILE: the one reader of limits files. check and curve read the same
 * `key = value` file (docs: one file serves both); each hands the text to its library
 * parser (sd_limits_parse, sd_curve_limits_parse), which names a bad line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"

enum { CONFIG_MAX = 64 * 1024 };   /* a limits file is a few lines: more is no limits file */

int cli_read_config(const char *path, cli_config_parser parse, void *ctx)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        msg_error("%s: cannot open limits file: %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(CONFIG_MAX + 1);
    size_t len = text ? fread(text, 1, CONFIG_MAX + 1, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    int rc = -1;
    if (!text) msg_error("out of memory");
    else if (bad) msg_error("%s: cannot read limits file", path);
    else if (len > CONFIG_MAX) msg_error("%s: limits file larger than 64 KiB", path);
    else {
        sd_error err;
        sd_error_clear(&err);
        if (parse(text, len, path, ctx, &err) == SD_OK) rc = 0;
        else msg_sd_error(&err);
    }
    free(text);
    return rc;
}
