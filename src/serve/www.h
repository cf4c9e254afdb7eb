/* The board page's files (src/serve/www/), compiled into sow by src/embed.py at
 * build time: sow serve needs nothing on disk, and a request's path is only
 * ever compared with these names, never opened.
 *
 *   serve_www[i] = {"/app.js", "text/javascript; charset=utf-8", bytes, len}
 *   ... ending with {NULL}.
 *
 * Thread-safety: read-only data. */
#ifndef SOW_SERVE_WWW_H
#define SOW_SERVE_WWW_H

#include <stddef.h>

struct serve_file {
    const char *path;  /* "/index.html": "/" and the file's name */
    const char *type;  /* its Content-Type */
    const unsigned char *data;
    size_t len;
};

extern const struct serve_file serve_www[];

#endif
