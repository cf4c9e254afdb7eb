/* A growing JSON text (internal to sow: the analysis's JSON, sow serve's
 * answers).  jbuf_printf appends printf-style; jbuf_str appends a string as
 * a JSON string, quotes, backslashes and control characters escaped, and
 * each byte that is not part of a UTF-8 character as \ufffd (the text
 * stays valid JSON whatever a request quoted).  Out of memory is
 * remembered (oom) and every later append does nothing; jbuf_take then
 * frees the text and gives NULL.
 *
 * Layout: s[0..len) the text so far, NUL-terminated, in cap bytes (s NULL
 * until the first append).  Start from struct jbuf b = {0}.
 *
 * Thread-safety: a jbuf is its caller's own; the functions keep no state. */
#ifndef SOW_ANALYSE_JSONBUF_H
#define SOW_ANALYSE_JSONBUF_H

#include <stdbool.h>
#include <stddef.h>

struct jbuf {
    char *s;
    size_t len, cap;
    bool oom;
};

void jbuf_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jbuf_str(struct jbuf *b, const char *s);
/* The text (malloc'd, the caller frees it) and its length into *len (if
 * len is not NULL), or NULL if memory ran out or nothing was written; b is
 * empty afterwards. */
char *jbuf_take(struct jbuf *b, size_t *len);

#endif
