/* shard.c - summarize --shard: the share of the inputs one scheduler task takes, the
 * scheduler it came from, @FILE lists, and the summary's path of each input (shard.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* A decimal number 0..max, the whole string. */
static bool parse_count(const char *s, size_t len, unsigned long max, unsigned long *out)
{
    if (len == 0 || len > 12) return false;
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > max) return false;
    *out = v;
    return true;
}

static bool parse_str(const char *s, unsigned long max, unsigned long *out)
{
    return s && parse_count(s, strlen(s), max, out);
}

/* "I/N" -> index, count; "auto" -> *is_auto, count 0; "auto/N" -> *is_auto, count N. */
static bool parse_spec(const char *spec, bool *is_auto, unsigned long *index,
                       unsigned long *count)
{
    const char *slash = strchr(spec, '/');
    *index = 0;
    *count = 0;
    *is_auto = strncmp(spec, "auto", 4) == 0 && (spec[4] == '\0' || spec[4] == '/');
    if (*is_auto) return !slash || (parse_str(slash + 1, CLI_SHARD_MAX, count) && *count > 0);
    return slash && parse_count(spec, (size_t)(slash - spec), CLI_SHARD_MAX, index) &&
           parse_str(slash + 1, CLI_SHARD_MAX, count) && *index < *count;
}

bool cli_share_syntax_ok(const char *spec)
{
    bool is_auto;
    unsigned long i, n;
    return parse_spec(spec, &is_auto, &i, &n);
}

/* The environment variable `name` as a number (0..CLI_SHARD_MAX): 1 read, 0 unset,
 * -1 set but no such number (errbuf says so). */
static int env_number(const char *name, unsigned long *out, char *errbuf, size_t errlen)
{
    const char *v = getenv(name);
    if (!v) return 0;
    if (parse_str(v, CLI_SHARD_MAX, out)) return 1;
    snprintf(errbuf, errlen, "--shard auto: %s='%.64s' is not a number from 0 to %lu", name, v,
             CLI_SHARD_MAX);
    return -1;
}

/* A Slurm job array: the task's place in the array, not its ID (--array=1-8 starts at 1;
 * --array=0-30:10 steps by 10). Slurm sets SLURM_ARRAY_TASK_MIN and _STEP with the ID;
 * a list such as --array=1,4,9 has no step that maps IDs onto 0..COUNT-1 and is refused. */
static bool from_slurm(struct cli_share *s, char *errbuf, size_t errlen)
{
    unsigned long id, count, min = 0, step = 1, max = 0;
    if (env_number("SLURM_ARRAY_TASK_ID", &id, errbuf, errlen) < 0) return false;
    int c = env_number("SLURM_ARRAY_TASK_COUNT", &count, errbuf, errlen);
    if (c < 0 || env_number("SLURM_ARRAY_TASK_MIN", &min, errbuf, errlen) < 0 ||
        env_number("SLURM_ARRAY_TASK_STEP", &step, errbuf, errlen) < 0)
        return false;
    int has_max = env_number("SLURM_ARRAY_TASK_MAX", &max, errbuf, errlen);
    if (has_max < 0) return false;
    if (c == 0 || count == 0) {
        snprintf(errbuf, errlen, "--shard auto: SLURM_ARRAY_TASK_ID is set but "
                 "SLURM_ARRAY_TASK_COUNT is not a positive number");
        return false;
    }
    if (step == 0) step = 1;
    unsigned long index = id >= min ? (id - min) / step : count;
    bool regular = id >= min && (id - min) % step == 0 && index < count &&
                   (has_max == 0 || (max >= min && (max - min) / step + 1 == count));
    if (!regular) {
        snprintf(errbuf, errlen, "--shard auto: Slurm array task %lu of %lu (min %lu, step %lu) "
                 "is not on a range A-B[:S]; give --array as a range, or --shard I/N",
                 id, count, min, step);
        return false;
    }
    s->index = index;
    s->count = count;
    snprintf(s->how, sizeof s->how, "Slurm: SLURM_ARRAY_TASK_ID=%lu, SLURM_ARRAY_TASK_MIN=%lu, "
             "SLURM_ARRAY_TASK_COUNT=%lu", id, min, count);
    return true;
}

/* A Kubernetes Indexed Job gives each pod its index only; the count is the Job's
 * .spec.completions, which the manifest passes as --shard auto/N. */
static bool from_k8s(unsigned long given, struct cli_share *s, char *errbuf, size_t errlen)
{
    unsigned long index;
    if (env_number("JOB_COMPLETION_INDEX", &index, errbuf, errlen) < 0) return false;
    if (given == 0) {
        snprintf(errbuf, errlen, "--shard auto: JOB_COMPLETION_INDEX=%lu gives no count: use "
                 "--shard auto/N, N the Job's completions", index);
        return false;
    }
    s->index = index;
    s->count = given;
    snprintf(s->how, sizeof s->how, "Kubernetes Indexed Job: JOB_COMPLETION_INDEX=%lu, "
             "count %lu from --shard auto/%lu", index, given, given);
    return true;
}

static bool from_torchrun(struct cli_share *s, char *errbuf, size_t errlen)
{
    unsigned long rank, world;
    if (env_number("RANK", &rank, errbuf, errlen) < 0) return false;
    int w = env_number("WORLD_SIZE", &world, errbuf, errlen);
    if (w < 0) return false;
    if (w == 0 || world == 0) {
        snprintf(errbuf, errlen, "--shard auto: RANK is set but WORLD_SIZE is not a positive "
                 "number");
        return false;
    }
    s->index = rank;
    s->count = world;
    snprintf(s->how, sizeof s->how, "torchrun: RANK=%lu, WORLD_SIZE=%lu", rank, world);
    return true;
}

bool cli_share_resolve(const char *spec, struct cli_share *out, char *errbuf, size_t errlen)
{
    bool is_auto;
    unsigned long index, count;
    memset(out, 0, sizeof *out);
    if (!parse_spec(spec, &is_auto, &index, &count)) {
        snprintf(errbuf, errlen, "--shard: '%s' is not I/N (0 <= I < N), auto or auto/N", spec);
        return false;
    }
    if (!is_auto) {
        out->index = index;
        out->count = count;
        snprintf(out->how, sizeof out->how, "--shard %s", spec);
        return true;
    }
    bool ok;
    if (getenv("SLURM_ARRAY_TASK_ID")) ok = from_slurm(out, errbuf, errlen);
    else if (getenv("JOB_COMPLETION_INDEX")) ok = from_k8s(count, out, errbuf, errlen);
    else if (getenv("RANK")) ok = from_torchrun(out, errbuf, errlen);
    else {
        snprintf(errbuf, errlen, "--shard auto: no task index in the environment "
                 "(SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or RANK); give --shard I/N");
        return false;
    }
    if (!ok) return false;
    if (count && count != out->count) {
        snprintf(errbuf, errlen, "--shard %s: the scheduler says %lu tasks (%s)", spec,
                 out->count, out->how);
        return false;
    }
    if (out->index >= out->count) {
        snprintf(errbuf, errlen, "--shard auto: task %lu is not below the count %lu (%s)",
                 out->index, out->count, out->how);
        return false;
    }
    return true;
}

void cli_share_range(size_t n, const struct cli_share *s, size_t *first, size_t *end)
{
    /* 128-bit free: n and count are far below 2^32 in any job (CLI_SHARD_MAX). */
    unsigned long long nn = n, c = s->count;
    *first = (size_t)(nn * s->index / c);
    *end = (size_t)(nn * (s->index + 1) / c);
}

/* ---------- the list of inputs ---------- */

struct list {
    char **items;
    size_t n, cap;
};

static bool list_add(struct list *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) return false;
        l->items = grown;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return false;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->items[l->n++] = copy;
    return true;
}

/* A list file is names, not data: 64 MiB holds a million long paths. */
#define LIST_MAX_BYTES (64ul << 20)
#define LIST_MAX_LINE 4096

/* One line of a list (without its '\n'): a trailing '\r' (a list written on Windows) goes;
 * empty lines and comments are left out. */
static bool take_line(struct list *l, char *line, size_t len)
{
    if (len && line[len - 1] == '\r') len--;
    if (len == 0 || line[0] == '#') return true;
    return list_add(l, line, len);
}

/* The lines of list file `path` into l, read a byte at a time so that a NUL, an endless
 * line or an endless file (a pipe) is caught at its offset, within bounded memory. */
static bool read_list(const char *path, struct list *l, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(errbuf, errlen, "@%s: cannot read the list of inputs: %s", path, strerror(errno));
        return false;
    }
    char line[LIST_MAX_LINE + 1];
    size_t len = 0;
    unsigned long long offset = 0;
    bool ok = true;
    int c;
    while (ok && (c = getc(f)) != EOF) {
        if (c == '\n') {
            ok = take_line(l, line, len);
            if (!ok) snprintf(errbuf, errlen, "out of memory");
            len = 0;
        } else if (c == '\0') {
            snprintf(errbuf, errlen, "@%s: offset %llu: a NUL byte, not a list of paths (one a "
                     "line)", path, offset);
            ok = false;
        } else if (len == LIST_MAX_LINE) {
            snprintf(errbuf, errlen, "@%s: offset %llu: a path longer than %d bytes", path,
                     offset, LIST_MAX_LINE);
            ok = false;
        } else if (offset >= LIST_MAX_BYTES) {
            snprintf(errbuf, errlen, "@%s: offset %llu: a list of inputs longer than 64 MiB",
                     path, offset);
            ok = false;
        } else {
            line[len++] = (char)c;
        }
        offset++;
    }
    if (ok && ferror(f)) {
        snprintf(errbuf, errlen, "@%s: offset %llu: error reading the list of inputs: %s", path,
                 offset, strerror(errno));
        ok = false;
    } else if (ok && len && !(ok = take_line(l, line, len))) {
        snprintf(errbuf, errlen, "out of memory");
    }
    fclose(f);
    return ok;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool cli_inputs_expand(const char *const *args, size_t n, char ***out, size_t *n_out,
                       char *errbuf, size_t errlen)
{
    struct list l = {0};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (args[i][0] == '@') ok = read_list(args[i] + 1, &l, errbuf, errlen);
        else if (!(ok = list_add(&l, args[i], strlen(args[i])))) snprintf(errbuf, errlen, "out of memory");
    }
    if (!ok) {
        cli_inputs_free(l.items, l.n);
        return false;
    }
    if (l.n) qsort(l.items, l.n, sizeof *l.items, by_bytes);
    *out = l.items;
    *n_out = l.n;
    return true;
}

const char *cli_first_duplicate(char *const *list, size_t n, bool *oom)
{
    *oom = false;
    char **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        *oom = true;
        return NULL;
    }
    if (n) memcpy(sorted, list, n * sizeof *sorted);
    if (n) qsort(sorted, n, sizeof *sorted, by_bytes);
    const char *dup = NULL;
    for (size_t i = 1; i < n && !dup; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0) dup = sorted[i];
    free(sorted);
    return dup;
}

void cli_inputs_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++) free(list[i]);
    free(list);
}

/* Append s[0..n) to name at *k, folders flattened: '/' and ':' become '_'. */
static void put_flat(char *name, size_t size, size_t *k, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *k + 1 < size; i++)
        name[(*k)++] = s[i] == '/' || s[i] == ':' || s[i] == '\\' ? '_' : s[i];
    name[*k] = '\0';
}

bool cli_summary_path(const char *dir, const char *input, char *out, size_t size)
{
    const char *colon = strchr(input, ':');
    size_t path_len = colon ? (size_t)(colon - input) : strlen(input);
    while (path_len > 1 && input[path_len - 1] == '/') path_len--;
    size_t base = path_len;
    while (base > 0 && input[base - 1] != '/') base--;
    if (base == path_len || (path_len - base == 1 && input[base] == '-' && !colon)) return false;
    char name[1024];
    size_t k = 0;
    put_flat(name, sizeof name, &k, input + base, path_len - base);
    if (colon) put_flat(name, sizeof name, &k, colon, strlen(colon));
    if (name[0] == '.') name[0] = '_';
    int w = snprintf(out, size, "%s/%s.sdsum", dir, name);
    return w > 0 && (size_t)w < size;
}
