/* mcp_resources.c - resources/list and resources/read: what a field of a tool's document
 * means (docs/json-*.md) and what a leak pattern is (docs/patterns.md), as built into the
 * binary (mcp_embed.cmake), at snapdiff://docs/NAME. */
#include <stdio.h>
#include <string.h>

#include "mcp.h"
#include "mcp_docs.h"

enum { N_DOCS = sizeof mcp_docs / sizeof mcp_docs[0] };

static json_t *doc_text(const struct mcp_doc *d)
{
    return json_stringn((const char *)d->data, d->size);
}

/* The document's title: its first line without the leading "# " and backquotes. */
static json_t *doc_title(const struct mcp_doc *d)
{
    const char *p = (const char *)d->data, *end = p + d->size;
    while (p < end && (*p == '#' || *p == ' ')) p++;
    char title[200];
    size_t k = 0;
    for (; p < end && *p != '\n' && k + 1 < sizeof title; p++)
        if (*p != '`') title[k++] = *p;
    title[k] = '\0';
    return mcp_string(title);
}

static void doc_uri(const struct mcp_doc *d, char *buf, size_t size)
{
    snprintf(buf, size, "snapdiff://docs/%s", d->name);
}

json_t *mcp_resources_list(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < N_DOCS; i++) {
        char uri[128];
        doc_uri(&mcp_docs[i], uri, sizeof uri);
        json_array_append_new(list, json_pack("{s:s,s:s,s:o,s:s,s:I}", "uri", uri, "name",
                                              mcp_docs[i].name, "description",
                                              doc_title(&mcp_docs[i]), "mimeType",
                                              "text/markdown", "size",
                                              (json_int_t)mcp_docs[i].size));
    }
    return json_pack("{s:o}", "resources", list);
}

json_t *mcp_resource_read(const json_t *params, struct mcp_fault *f)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    if (!uri) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "params.uri: missing (resources/list names them)");
        return NULL;
    }
    for (size_t i = 0; i < N_DOCS; i++) {
        char mine[128];
        doc_uri(&mcp_docs[i], mine, sizeof mine);
        if (strcmp(uri, mine) != 0) continue;
        json_t *text = doc_text(&mcp_docs[i]);
        if (!text) break;
        return json_pack("{s:[{s:s,s:s,s:o}]}", "contents", "uri", mine, "mimeType",
                         "text/markdown", "text", text);
    }
    mcp_fault_set(f, MCP_RESOURCE_NOT_FOUND, "Resource not found: %.200s", uri);
    return NULL;
}
