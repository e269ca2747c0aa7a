/* msg.c - the CLI's one voice on stderr (or the stream msg_set_stream names). */
#include <stdarg.h>
#include <stdio.h>

#include "msg.h"

static bool quiet;
static FILE *stream;   /* NULL: stderr */

void msg_set_quiet(bool q) { quiet = q; }
void msg_set_stream(FILE *f) { stream = f; }

/* One line, always: control characters from file names or file contents (a newline, an
 * escape sequence) are shown as '?', so a hostile name cannot forge or hide messages. */
static void vmsg(const char *kind, const char *fmt, va_list ap) MSG_PRINTF(2, 0);
static void vmsg(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    fprintf(stream ? stream : stderr, "snapdiff: %s%s\n", kind, line);
}

void msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

void msg_note(const char *fmt, ...)
{
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("note: ", fmt, ap);
    va_end(ap);
}

void msg_sd_error(const sd_error *err)
{
    char line[768];
    sd_error_format(err, line, sizeof line);
    msg_error("%s", line);
}

sd_status msg_nomem(sd_error *err)
{
    if (err) {
        err->code = SD_ENOMEM;
        snprintf(err->text, sizeof err->text, "out of memory");
    }
    return SD_ENOMEM;
}
