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

/* The length of the UTF-8 character at s (RFC 3629: no overlong form, no
 * surrogate, at most U+10FFFF), or 0 if the bytes there are not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0], n, min, v;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, v = c & 0x07;
    else
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* the NUL that ends s stops here too */
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    return v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0 : (int)n;
}

void jbuf_str(struct jbuf *b, const char *s)
{
    jbuf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\')
            jbuf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            jbuf_printf(b, "\\u%04x", *p);
        else if (n)
            jbuf_printf(b, "%.*s", n, (const char *)p);
        else /* JSON is UTF-8: a byte that is not (a request's %FF) is U+FFFD */
            jbuf_printf(b, "\\ufffd");
        p += n ? n : 1;
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
