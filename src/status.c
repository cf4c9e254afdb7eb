/* Errors are values: include/sow/status.h. */
#include <stdarg.h>
#include <stdio.h>

#include "sow/status.h"

enum sow_status sow_fail(struct sow_error *e, enum sow_status st, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        /* Messages quote paths and names: a control character in one (a
         * newline in a --dir) must not break the one-line promise. */
        sow_scrub(e->msg);
        e->status = st;
    }
    return st;
}

void sow_scrub(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

const char *sow_status_name(enum sow_status st)
{
    switch (st) {
    case SOW_OK: return "ok";
    case SOW_E_INPUT: return "bad input";
    case SOW_E_TOO_BIG: return "too big";
    case SOW_E_IO: return "I/O error";
    case SOW_E_NOMEM: return "out of memory";
    case SOW_E_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}
