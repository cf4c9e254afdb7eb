/* The searchers' shared context (search_ctx.h): progress lines and the
 * node count over every method, which each searcher reports through. */
#include <stdarg.h>
#include <stdio.h>

#include "search_ctx.h"

void search_progress(struct search_ctx *s, const char *fmt, ...)
{
    if (!s->o.progress || s->quiet)
        return;
    char line[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.progress(s->o.progress_arg, line);
}

uint64_t search_total_nodes(const struct search_ctx *s)
{
    uint64_t n = s->dmoves + s->engine_nodes;
    for (int i = 0; i < s->nthreads; i++)
        n += s->th[i]->visits + s->cvisits[i];
    return n;
}
