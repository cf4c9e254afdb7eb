/* sow — endgame tables: the probing interface the solver uses.
 * (The tables module owns this header and documents the rest of its API here.)
 *
 * A table set covers, for one rule set and board size, every level (seed count
 * on the board) 0..max_level that is present on disk.  Values are those of
 * docs/rules.md "Value of a position": net future captures for the player to
 * move under perfect play, endless cycles settled by the repetition rule.
 *
 * Thread-safety: tb_probe() may be called from any number of threads at once
 * on a loaded set; tb_open/tb_close are not concurrent with probes.
 */
#ifndef SOW_TABLES_H
#define SOW_TABLES_H

#include <stdbool.h>

#include "sow/rules.h"

struct tb_set;

/* Load every level present in dir for this rule set and size (missing or
 * empty dir: an empty set).  Returns NULL with a one-line reason on a damaged
 * or foreign file. */
struct tb_set *tb_open(const struct ruleset *rs, const char *dir, char *err, int errlen);
void tb_close(struct tb_set *set);

/* Highest seed count n such that levels 0..n are all loaded, or -1. */
int tb_max_level(const struct tb_set *set);

/* Value of p if its level is loaded (and the position is one the tables
 * index, e.g. not jerin's opening): true and *value set; else false. */
bool tb_probe(const struct tb_set *set, const sow_position *p, int *value);

#endif
