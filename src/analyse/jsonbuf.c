/* A growing JSON text (jsonbuf.h). */
#include "analyse/jsonbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void jbuf_printf(struct jbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 512;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

void jbuf_str(struct jbuf *b, const char *s)
{
    jbuf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            jbuf_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            jbuf_printf(b, "\\u%04x", ch);
        else
            jbuf_printf(b, "%c", ch);
    }
    jbuf_printf(b, "\"");
}

char *jbuf_take(struct jbuf *b, size_t *len)
{
    char *s = b->oom ? NULL : b->s;
    if (b->oom)
        free(b->s);
    if (len)
        *len = s ? b->len : 0;
    *b = (struct jbuf){0};
    return s;
}
