/* peak_words.c - the peak's categories, phase and step in words and JSON (peak_words.h). */
#include "render/peak_words.h"

#include <string.h>

#include "render/format.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

json_t *sdp_categories_json(const sd_peak_table *t)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < t->n_categories; i++) {
        const sd_category_total *c = &t->categories[i];
        json_t *o = json_object();
        json_object_set_new(o, "category", json_string(sd_category_name(c->category)));
        json_object_set_new(o, "bytes", jint(c->bytes));
        json_object_set_new(o, "blocks", jint(c->blocks));
        json_object_set_new(o, "evidence", json_string(sd_category_total_evidence(c)));
        /* Activations of a forward no recorded backward followed (docs/categories.md). */
        if (c->no_backward_bytes)
            json_object_set_new(o, "no_backward_bytes", jint(c->no_backward_bytes));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *sdp_peak_phase_json(const sd_peak_device *d)
{
    return d->has_peak && d->peak_has_phase ? json_string(sd_step_phase_name(d->peak_phase))
                                            : json_null();
}

json_t *sdp_peak_step_json(const sd_peak_device *d)
{
    return d->has_peak && d->peak_has_phase && d->peak_step ? jint(d->peak_step) : json_null();
}

void sdp_categories_text(FILE *out, const sd_peak_table *t, const char *indent)
{
    sd_category_total c[SD_CATEGORY_COUNT];
    size_t n = t->n_categories < SD_CATEGORY_COUNT ? t->n_categories : SD_CATEGORY_COUNT;
    memcpy(c, t->categories, n * sizeof *c);
    for (size_t i = 1; i < n; i++)         /* largest first; stable on ties */
        for (size_t j = i; j > 0 && c[j].bytes > c[j - 1].bytes; j--) {
            sd_category_total x = c[j];
            c[j] = c[j - 1];
            c[j - 1] = x;
        }
    for (size_t i = 0; i < n; i++) {
        const char *ev = sd_category_total_evidence(&c[i]);
        fprintf(out, "%s%11s %8s  ", indent, sdp_fmt_bytes(c[i].bytes).s,
                sdp_fmt_count(c[i].blocks).s);
        if (strcmp(ev, "none") == 0) fprintf(out, "%s\n", sd_category_name(c[i].category));
        else fprintf(out, "%-16s by %s%s\n", sd_category_name(c[i].category), ev,
                     c[i].no_backward_bytes ? ", no backward recorded" : "");
    }
}

void sdp_peak_phase_text(const sd_peak_device *d, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!d->has_peak || !d->peak_has_phase) return;
    if (d->peak_step)
        snprintf(buf, size, " in the %s of step %u", sd_step_phase_name(d->peak_phase),
                 (unsigned)d->peak_step);
    else
        snprintf(buf, size, " in the %s", sd_step_phase_name(d->peak_phase));
}
