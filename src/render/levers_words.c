/* levers_words.c - the levers of a moment (levers.h) as text and JSON, for frag's oom
 * events and top's peak (docs/levers.md). Only words and lays out the analysis' figures. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "render/format.h"
#include "render/levers_words.h"
#include "render/site.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static bool is_shard(const sd_lever *x)
{
    return x->kind == SD_LEVER_KIND_SHARD_OPTIM || x->kind == SD_LEVER_KIND_SHARD_GRADS ||
           x->kind == SD_LEVER_KIND_SHARD_PARAMS;
}

json_t *sdp_levers_json(const sd_attrib *a, const sd_snapshot *s, const sd_levers *l)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < sd_levers_count(l); i++) {
        const sd_lever *x = sd_levers_at(l, i);
        json_t *o = json_object();
        json_object_set_new(o, "lever", json_string(sd_lever_kind_name(x->kind)));
        json_object_set_new(o, "category", x->kind == SD_LEVER_KIND_ALLOCATOR
                                               ? json_null()
                                               : json_string(sd_category_name(x->category)));
        json_object_set_new(o, "bytes", x->has_bytes ? jint(x->bytes) : json_null());
        json_object_set_new(o, "enough", x->has_enough ? json_boolean(x->enough) : json_null());
        json_t *sites = json_array();
        for (size_t k = 0; k < x->n_sites; k++) {
            const sd_lever_site *y = &x->sites[k];
            json_t *so = json_object();
            char buf[1024];
            sd_site_text(s, y->stack, &y->site, buf, sizeof buf);
            json_object_set_new(so, "site", sdp_site_json(a, s, y->stack, &y->site));
            json_object_set_new(so, "label", json_string(buf));
            json_object_set_new(so, "bytes", jint(y->bytes));
            json_array_append_new(sites, so);
        }
        json_object_set_new(o, "sites", sites);
        bool alloc = x->kind == SD_LEVER_KIND_ALLOCATOR;
        json_object_set_new(o, "of_bytes", alloc ? json_null() : jint(x->of_bytes));
        json_object_set_new(o, "less_bytes",
                            x->kind == SD_LEVER_KIND_CHECKPOINT ||
                                    x->kind == SD_LEVER_KIND_OPTIM_FOREACH ||
                                    x->kind == SD_LEVER_KIND_HALF_BATCH
                                ? jint(x->less_bytes) : json_null());
        json_object_set_new(o, "calls", x->kind == SD_LEVER_KIND_CHECKPOINT ? jint(x->calls)
                                                                           : json_null());
        json_object_set_new(o, "bytes_8_ranks", is_shard(x) ? jint(x->bytes_8_ranks)
                                                             : json_null());
        json_object_set_new(o, "ranks_needed", is_shard(x) && x->ranks_needed
                                                   ? jint(x->ranks_needed) : json_null());
        json_object_set_new(o, "alloc_conf", alloc ? json_string(x->alloc_conf) : json_null());
        json_object_set_new(o, "fits", alloc ? json_boolean(x->fits) : json_null());
        json_object_set_new(o, "headroom_bytes", alloc && x->has_headroom
                                                     ? jint(x->headroom_bytes) : json_null());
        json_array_append_new(arr, o);
    }
    return arr;
}

#define B(n) sdp_fmt_bytes(n).s

static void site_text(const sd_snapshot *s, const sd_lever *x, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!x->n_sites) return;
    size_t n = (size_t)snprintf(buf, size, " at ");
    if (n >= size) return;
    sd_site_text(s, x->sites[0].stack, &x->sites[0].site, buf + n, size - n);
}

/* One lever: what to change, then the arithmetic that gives its bytes. */
static void lever_line(FILE *out, const sd_snapshot *s, const sd_lever *x)
{
    char site[600];
    site_text(s, x, site, sizeof site);
    switch (x->kind) {
    case SD_LEVER_KIND_CHECKPOINT:
        fprintf(out, "activation checkpointing of the module called%s (%u calls): %s saved "
                "activations - %s (the largest call, recomputed)", site, (unsigned)x->calls,
                B(x->of_bytes), B(x->less_bytes));
        break;
    case SD_LEVER_KIND_HALF_BATCH:
        fprintf(out, "halve the micro-batch or sequence: (activations %s + forward and "
                "backward temporaries %s) / 2", B(x->less_bytes),
                B(x->of_bytes - x->less_bytes));
        break;
    case SD_LEVER_KIND_CHUNKED_LOSS:
        fprintf(out, "a chunked or fused loss%s: %s made at the loss (logits' casts, "
                "log_softmax, its backward)", site, B(x->of_bytes));
        break;
    case SD_LEVER_KIND_OPTIM_FOREACH:
        fprintf(out, "optimizer fused=True (or foreach=False)%s: %s of _multi_tensor_ "
                "temporaries, all with fused=True; foreach=False keeps the largest (%s, one "
                "tensor's at a time): %s", site, B(x->of_bytes), B(x->less_bytes),
                B(x->of_bytes - x->less_bytes));
        break;
    case SD_LEVER_KIND_ZERO_GRAD_NONE:
        fprintf(out, "zero_grad(set_to_none=True) before the forward: %s of gradients live "
                "in the forward (unless they accumulate over micro-batches)", B(x->of_bytes));
        break;
    case SD_LEVER_KIND_SHARD_OPTIM:
    case SD_LEVER_KIND_SHARD_GRADS:
    case SD_LEVER_KIND_SHARD_PARAMS:
        fprintf(out, "shard %s over N ranks (%s): %s x (1 - 1/N) = %s at N=2, %s at N=8",
                x->kind == SD_LEVER_KIND_SHARD_OPTIM ? "the optimizer state"
                : x->kind == SD_LEVER_KIND_SHARD_GRADS ? "optimizer state and gradients"
                                                       : "optimizer state, gradients and "
                                                         "parameters",
                x->kind == SD_LEVER_KIND_SHARD_OPTIM ? "ZeRO-1"
                : x->kind == SD_LEVER_KIND_SHARD_GRADS ? "ZeRO-2" : "ZeRO-3 / FSDP",
                B(x->of_bytes), B(x->bytes), B(x->bytes_8_ranks));
        if (x->ranks_needed) fprintf(out, "; enough from N=%u", (unsigned)x->ranks_needed);
        break;
    case SD_LEVER_KIND_ALLOCATOR:
        fprintf(out, "PYTORCH_CUDA_ALLOC_CONF=%s (replayed): ", x->alloc_conf);
        if (x->has_bytes) fprintf(out, "%s less reserved at its peak, ", B(x->bytes));
        fprintf(out, "%s", x->fits ? "the request fits" : "the request fails too");
        if (x->fits && x->has_headroom)
            fprintf(out, ", %s of headroom", B(x->headroom_bytes));
        break;
    default:
        fprintf(out, "%s", sd_lever_kind_name(x->kind));
    }
}

void sdp_levers_text(FILE *out, const sd_snapshot *s, const sd_levers *l, const char *what,
                     const char *indent)
{
    if (!sd_levers_count(l)) return;
    uint64_t need;
    if (sd_levers_shortfall(l, &need))
        fprintf(out, "%slevers at the %s, what each frees then (%s would have had to be "
                "freed):\n", indent, what, B(need));
    else
        fprintf(out, "%slevers at the %s, what each frees then:\n", indent, what);
    for (size_t i = 0; i < sd_levers_count(l); i++) {
        const sd_lever *x = sd_levers_at(l, i);
        fprintf(out, "%s  %10s  ", indent, x->has_bytes ? B(x->bytes) : "-");
        lever_line(out, s, x);
        if (x->has_enough)
            fprintf(out, "%s", x->enough ? " -- enough alone"
                               : x->kind == SD_LEVER_KIND_ALLOCATOR && x->fits
                                   ? " -- not enough for the next step" : " -- not enough alone");
        fputc('\n', out);
    }
}
