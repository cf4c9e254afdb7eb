/* The tables the engine's commands play with (docs/engine.md "Tables in
 * play"): sow engine's Tables option, sow solve --depth/--time's --tables,
 * sow match's tables=.
 *
 * A tables path names one or more directories separated by ':' (as PATH;
 * no directory name may hold a ':'): tb_open reads each level from the
 * first directory that holds its file, and tpath_solution_find looks for a
 * solution file in each directory in turn.  The empty path means no tables.
 * Where no path is given, the commands use the default path, $SOW_TABLES
 * else "tables" (tb_default_dir, where `sow tables build` writes), when
 * every directory it names exists; a default path that does not exist
 * means no tables (a note on stderr where $SOW_TABLES named it).
 *
 * Thread-safety: the main thread's (tpath_default reads the environment). */
#ifndef SOW_CLI_TABLES_PATH_H
#define SOW_CLI_TABLES_PATH_H

#include <stddef.h>

#include "sow/rules.h"
#include "sow/search.h"
#include "sow/status.h"
#include "sow/tables_probe.h"

/* The default tables path: $SOW_TABLES, else "tables". */
const char *tpath_default(void);

/* 0 if path names one or more directories that all exist; else -1 with
 * the one-line reason in msg ("DIR: no such directory", "DIR: not a
 * directory", "'A::B': an empty directory name"). */
int tpath_check(const char *path, char *msg, size_t len);

/* The default path if every directory it names exists, else NULL.  A
 * $SOW_TABLES naming a directory that does not exist (a typo, most likely)
 * is told in note ("note: $SOW_TABLES: DIR: no such directory; no tables
 * used"); note is "" otherwise (a missing ./tables is the usual case). */
const char *tpath_default_usable(char *note, size_t len);

/* tb_open of path with a block cache of cache_mb MiB (0: tb_open's
 * default size, room for every block up to 1/8 of the memory budget).
 * As tb_open. */
enum sow_status tpath_open(const struct ruleset *rs, const char *path, long cache_mb,
                           struct tb_set **out, struct sow_error *e);

/* search_solution_find in each directory of path in turn: the first file
 * found that holds p (*out NULL if none); SOW_E_INPUT for a damaged or
 * foreign file met on the way. */
enum sow_status tpath_solution_find(const struct ruleset *rs, const char *path,
                                    const sow_position *p, struct sol **out, char *found,
                                    size_t len, struct sow_error *e);

#endif
