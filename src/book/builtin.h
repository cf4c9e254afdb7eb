/* The opening books compiled into sow (tables/book/, by src/embed.py at build
 * time): the books a player gets without naming a file.
 *
 *   book_builtin[i] = {"oware-2x6-4.sowbook", bytes, len}, ... ending with {0}.
 *
 * Thread-safety: read-only data; book_load_builtin as book_parse. */
#ifndef SOW_BOOK_BUILTIN_H
#define SOW_BOOK_BUILTIN_H

#include "book/book.h"
#include "embedded.h"

extern const struct embedded_file book_builtin[];

/* rs's compiled-in book (book_name's file) into b: SOW_OK; SOW_E_INPUT if
 * sow has none for rs (b empty); as book_parse otherwise. */
enum sow_status book_load_builtin(const struct ruleset *rs, struct book *b, struct sow_error *e);

#endif
