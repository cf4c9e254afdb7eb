/* sow — version of the library and the git commit it was built from.
 *
 * Thread-safety: both functions return constant strings.
 */
#ifndef SOW_VERSION_H
#define SOW_VERSION_H

#include "sow/export.h"

/* The project version, e.g. "0.1.0" (the shared library's version). */
SOW_API const char *sow_version(void);

/* `git describe --always --dirty` of the tree libsow was built from, e.g.
 * "4f68df1c0a2b" or "4f68df1c0a2b-dirty"; "unknown" outside a git checkout. */
SOW_API const char *sow_commit(void);

#endif
