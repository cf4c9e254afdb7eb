/* Files compiled into sow as C arrays at build time (src/embed.py): the
 * opening books (book/builtin.h) and the evaluation weights
 * (engine/eval_builtin.h) are each a list of these, ending with {0}.
 *
 *   {"oware-2x6.weights", bytes, len}, ..., {0}
 *
 * (The board page's files carry a content type too: serve/www.h.)
 * Thread-safety: read-only data; embedded_find is pure. */
#ifndef SOW_EMBEDDED_H
#define SOW_EMBEDDED_H

#include <stddef.h>
#include <string.h>

struct embedded_file {
    const char *name; /* the file's base name */
    const unsigned char *data;
    size_t len;
};

/* The file called name in list, NULL if none. */
static inline const struct embedded_file *embedded_find(const struct embedded_file *list,
                                                        const char *name)
{
    for (; list->name; list++)
        if (!strcmp(list->name, name))
            return list;
    return NULL;
}

#endif
