/* common.h - version, status codes and the error record shared by every module (every
 * public header includes it; <snapdiff/snapdiff.h> includes them all).
 *
 * Ownership rule for the whole library: a function named *_create/_load/_open returns an
 * object the caller frees with the matching *_free (which accepts NULL). Pointers returned
 * by accessors borrow from the object they were read from and die with it. The library
 * never prints and never exits: failures come back as an sd_status and an sd_error the
 * caller provides. Every function that takes an sd_error * clears it on entry (as jansson
 * does), so one record can be reused across calls and only ever holds the error of the
 * last call; within one call the first error recorded wins.
 */
#ifndef SNAPDIFF_COMMON_H
#define SNAPDIFF_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "snapdiff/version.h"   /* generated (version.h.in): beside this file once installed */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_status {
    SD_OK = 0,
    SD_EIO,        /* cannot open or read an input */
    SD_ETRUNC,     /* input ends before the structure it announces */
    SD_EFORMAT,    /* input is malformed: bad opcode, bad UTF-8, bad container */
    SD_EREFUSED,   /* input asks for something we never do: objects, code, buffers */
    SD_ELIMIT,     /* a size, depth or count limit was exceeded */
    SD_ENOMEM,     /* the memory budget (--max-memory) or malloc ran out */
    SD_ESNAPSHOT,  /* valid pickle, but not shaped like a memory snapshot */
    SD_EUSAGE,     /* bad argument from the caller */
} sd_status;

#define SD_NO_OFFSET UINT64_MAX

typedef struct sd_error {
    sd_status code;
    uint64_t offset;        /* byte offset in the (decompressed) pickle, or SD_NO_OFFSET */
    char source[256];       /* file name, "archive.zip:member", "<stdin>" */
    char text[256];         /* what was expected / what went wrong */
} sd_error;

/* The version of the library loaded at run time ("MAJOR.MINOR.PATCH", as SD_VERSION),
 * which can differ from the SD_VERSION a program was compiled with (version.h). */
const char *sd_version(void);

/* Reset an error record to "no error". */
void sd_error_clear(sd_error *err);

/* Structs a caller fills (options, renderer inputs) can grow: each starts with
 * `unsigned version`, fields are only ever appended, and each has a _VERSION constant, an
 * _INIT macro with its defaults, and an _init() function that fills one for a given
 * version (libgit2's pattern):
 *
 *     sd_diff_options o = SD_DIFF_OPTIONS_INIT;
 *
 * or, for a version chosen at run time, sd_diff_options_init with &o and the version.
 * The library reads only the fields of the version it is given, so a program built
 * against an older header keeps working with a newer library; a version newer than the
 * library knows fails with SD_EUSAGE (and says so in the sd_error, where the function
 * takes one). A version of 0 (a zeroed struct, designated initialisers without .version)
 * reads as 1; _init() accepts only 1 up to the _VERSION the library was built with. */

/* Short stable name of a status code ("truncated", "refused", ...). */
const char *sd_status_name(sd_status code);

/* Format "SOURCE: offset N: TEXT" (offset part omitted when unknown) into buf. Every
 * sd_ function that takes an sd_error * accepts NULL (nothing is recorded); so does this. */
void sd_error_format(const sd_error *err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
