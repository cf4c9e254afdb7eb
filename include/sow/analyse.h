/* sow — analysis of one position within a time budget: every legal move's
 * value, exact where the exact solver (with endgame tables) finishes within
 * half the budget, else the alpha-beta engine's estimate in the other half;
 * and the answer as the JSON object of the HTTP API's GET /api/RULES
 * (docs/cli.md "sow serve"):
 *
 *   {"rules":"oware","pits":3,"pos":"2,2,2/2,2,2/A/0-0/-","value":6,"exact":true,
 *    "source":"closure","depth":null,"over":false,"best":"3A",
 *    "moves":[{"move":"3A","value":6,"exact":true,"pos":"2,2,0/0,0,2/B/6-0/-"},...]}
 *
 * Values are for the player to move (docs/rules.md "Value of a position");
 * a move's value is its mover's.  Used by `sow annotate` and Python's
 * sow.analyse.
 *
 * Layout: struct analysis holds the position's moves (ml, rules_generate
 * order), their values (vals[i] for ml.c[i]) and order[0..ml.n), the move
 * indices best first (the solver's best move first among equals, then
 * generation order).
 *
 * Thread-safety: analyse_position may run in many threads at once (each call
 * makes its own searches; the tables are only probed); it starts one watch
 * thread for the exact try's deadline.
 */
#ifndef SOW_ANALYSE_H
#define SOW_ANALYSE_H

#include <signal.h>
#include <stdbool.h>

#include "sow/export.h"
#include "sow/rules.h"
#include "sow/search.h"
#include "sow/status.h"
#include "sow/tables_probe.h"

struct analyse_opts {
    int threads;              /* search threads (<= 0: 1) */
    double seconds;           /* the budget (<= 0: 1 s) */
    const struct tb_set *tb;  /* endgame tables, or NULL */
    unsigned hash_mb;         /* the engine's table, MiB (0: 16) */
    double memory;            /* bytes the exact try's closure may hold (0: 3/4 of RAM) */
    long long level_budget;   /* exact try: lowest levels solved in memory, positions
                                 (0: 4 Mi positions; < 0: none) */
    volatile sig_atomic_t *stop; /* set non-zero to stop (Ctrl-C); may be NULL */
};

struct analysis {
    const char *source;       /* "tables", "closure" (exact) or "engine" */
    bool exact, over;
    int value;                /* the position's, for its player to move */
    int depth;                /* the engine's shallowest search + 1, -1 if exact */
    struct sow_movelist ml;
    int vals[SOW_MAX_PITS + 1];
    int order[SOW_MAX_PITS + 1];
    sow_move pv[SEARCH_MAX_PV];
    int pv_len;
    bool pv_repeats;
};

/* Analyse p: SOW_OK; SOW_E_INTERRUPTED (o->stop); SOW_E_NOMEM or another
 * failure of the engine's search, with a reason in *e (may be NULL). */
SOW_API enum sow_status analyse_position(const struct ruleset *rs, const sow_position *p,
                                         const struct analyse_opts *o, struct analysis *a,
                                         struct sow_error *e);

/* a as GET /api/RULES answers it (above), malloc'd and NUL-terminated; NULL
 * if out of memory. */
SOW_API char *analyse_json(const struct ruleset *rs, const sow_position *p,
                           const struct analysis *a);

#endif
