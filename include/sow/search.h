/* sow — the solver: exact values (docs/rules.md "Value of a position") and
 * best moves.  The exact mode solves level by level (seed counts), fewest
 * first: the lowest levels whole in memory with the endgame-table builder
 * (within search_opts.level_budget), the levels above them by the retrograde
 * over the position's reachable closure.  The bounded mode (depth or time)
 * runs null-window threshold searches driven MTD(f)-style over a
 * transposition table.
 *
 * Values are from the point of view of the player to move: net seeds he will
 * capture from now on under perfect play (settlements included, stores not).
 * A move's value is what its mover gets by playing it and then playing
 * perfectly: for a move that changes the seed count (an exit) the seeds it
 * nets minus the child's value; for a move that stays in the level it is
 * clamp(cyc(p), -hi(q), -lo(q)) (see docs/solver.md), so that the value of a
 * position is always the best of its moves' values.
 *
 * The algorithm, its exactness with repetitions, the table and the threading
 * are described in docs/solver.md.
 *
 * Thread-safety: a struct search_ctx is used by one caller at a time; it runs
 * its own OpenMP threads inside search_solve/search_move_values.  Different
 * contexts are independent.  The stop flag may be set from a signal handler.
 */
#ifndef SOW_SEARCH_H
#define SOW_SEARCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"
#include "sow/tables_probe.h"
#include "sow/export.h"

#define SEARCH_MAX_PV 256
/* Exact mode: default budget of the levels solved in memory on the fly
 * (positions, summed over the levels; 1 byte of value and 2 of bounds
 * each, plus the builder's ~33 bytes per position of the level being built). */
#define SEARCH_LEVEL_BUDGET ((uint64_t)1 << 25)
/* Exact mode: a new solve that would build at least this many positions of
 * levels (about 1.5 s on one core) first tries the position's closure alone,
 * capped at 1/256 of them.  Below it the levels cost too little to be worth
 * the try (which, small as it is, costs its allocations and threads). */
#define SEARCH_CLOSURE_FIRST ((uint64_t)1 << 23)

/* The transposition table's default size, MiB (sow solve --hash, atlas). */
#define SEARCH_HASH_MB 64

struct sol; /* a solution file (below; engstrength) */

struct search_opts {
    int threads;              /* >= 1 */
    unsigned hash_mb;         /* bounded mode's transposition table, MiB (0: SEARCH_HASH_MB) */
    int depth;                /* 0: exact; > 0: bounded to this many plies */
    double time_limit;        /* seconds, 0 = none (bounded mode: deepen until) */
    bool cpu_clock;           /* time_limit is CPU time of each searching
                                 thread (util_cpu_now; meant for threads 1) */
    const struct tb_set *tb;  /* endgame tables, or NULL */
    volatile sig_atomic_t *stop; /* set non-zero to stop (Ctrl-C); may be NULL */
    /* Progress lines (each MTD(f) iteration / each depth); may be NULL. */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
    /* Exact mode by the older method, MTD(f)-driven threshold attractors
     * over the shared table (the tests' twin of the closure solver). */
    bool attractor;
    /* Exact mode: solve the lowest levels whole in memory, with the endgame
     * table builder, while their positions add up to at most this many
     * (0: SEARCH_LEVEL_BUDGET; < 0: none, the closure does all levels).
     * Bounded mode by the engine: < 0 solves no levels in memory either
     * (engine_opts.mem_levels -1; tests), else the engine's default. */
    long long level_budget;
    /* Exact mode: try the closure alone first when the levels to build reach
     * this many positions (0: SEARCH_CLOSURE_FIRST; < 0: never). */
    long long closure_first;
    /* Bounded mode (depth/time): by default the alpha-beta engine
     * (engine.h, docs/engine.md); true: the older threshold search with
     * proven bounds (the engine's test twin and match opponent). */
    bool threshold;
    /* Exact mode: bytes the closure may hold (0: 3/4 of RAM), checked
     * before each of its breadth-first layers (docs/solver.md "Memory"). */
    double memory;
    /* Exact mode: checkpoint directory of the closure (NULL: none); a solve
     * stopped (or refused by the memory budget) while expanding resumes the
     * expansion, one stopped later from its finished levels; each level
     * built in memory (level_budget) is kept there too and loaded, not
     * built, by a rerun (docs/solutions.md "Resuming long solves"). */
    const char *work;
    /* Exact mode, with work: the closure level by
     * level on disk in work, one level in memory at a time (docs/solver.md
     * "Past RAM"); the same values and node counts. */
    bool disk;
    /* Bounded mode by the engine: a solution file
     * (search_solution_open, borrowed; NULL: none) whose positions are
     * exact knowledge in the engine's probes (docs/engine.md "Solution
     * files").  The exact mode ignores it (sow solve --solution answers
     * from the file instead). */
    const struct sol *solution;
};

struct search_result {
    bool over;                /* no legal move: value is the settlement */
    bool exact;               /* value is the exact value */
    bool interrupted;         /* did not finish (any status but SOW_OK): nothing is valid */
    int value;                /* exact value, or heuristic if !exact */
    int lower, upper;         /* proven bounds (lower == upper == value if exact) */
    int depth;                /* bounded mode: last completed depth */
    sow_move best;            /* SOW_MOVE_NONE if over */
    int pv_len;
    sow_move pv[SEARCH_MAX_PV];
    bool pv_repeats;          /* the PV ends because a position repeated */
    /* nodes: positions visited, i.e. child positions made by a move and
     * looked up (Stockfish's count); expanded: positions whose moves were
     * generated (each once per closure or in-memory level, per test in the
     * attractor method); tb_hits: answers from loaded endgame tables. */
    uint64_t nodes, expanded, tb_hits;
    double seconds;
    /* Bounded mode by the engine: its score in centi-seeds (value is it
     * rounded), the deepest ply reached and the table's fill (per mille). */
    int score_cp, seldepth, hashfull;
};

struct search_ctx;

/* A solver for one rule set (rs must outlive it) into *out: SOW_OK, or
 * SOW_E_NOMEM with a reason (*out NULL); SOW_E_INPUT if o->work holds a
 * checkpoint name that is not a regular file (a FIFO, a link, ...). */
SOW_API enum sow_status search_new(const struct ruleset *rs, const struct search_opts *o,
                                   struct search_ctx **out, struct sow_error *e);
SOW_API void search_free(struct search_ctx *s);
/* Forget the transposition table (for reproducible node counts). */
SOW_API void search_clear(struct search_ctx *s);

/* Solve p: value (exact, or bounds + heuristic in bounded mode), best move,
 * principal variation.  SOW_OK; SOW_E_INTERRUPTED (the stop flag);
 * SOW_E_NOMEM (out of memory); SOW_E_TOO_BIG (the exact mode's closure would
 * not fit the --memory budget, search_opts.memory) with the reason in
 * search_last_error.  Not SOW_OK: r->interrupted, nothing valid. */
SOW_API enum sow_status search_solve(struct search_ctx *s, const sow_position *p,
                                     struct search_result *r);

/* Exact value of p only (exact mode).  Statuses as search_solve. */
SOW_API enum sow_status search_value(struct search_ctx *s, const sow_position *p, int *value);

/* Exact value of each legal move of p, in rules_generate order (vals[i] for
 * move i).  Returns the number of moves, or -1 (status in search_last_error). */
SOW_API int search_move_values(struct search_ctx *s, const sow_position *p, int *vals);

/* The status and message of the last call (SOW_OK, "" if it succeeded);
 * valid until the next call on s. */
SOW_API const struct sow_error *search_last_error(const struct search_ctx *s);

/* Nodes (positions visited) and table hits counted since search_new / the
 * last reset; search_expanded: positions expanded (see search_result). */
SOW_API void search_counters(const struct search_ctx *s, uint64_t *nodes, uint64_t *tb_hits);
SOW_API uint64_t search_expanded(const struct search_ctx *s);
SOW_API void search_reset_counters(struct search_ctx *s);

/* ---- solution files (docs/solutions.md) ---- */

/* Write the solved closure of root (the last exact solve of root by the
 * closure alone: search_opts.level_budget < 0, no tables) to path. */
SOW_API enum sow_status search_save(struct search_ctx *s, const sow_position *root,
                                    const char *path, struct sow_error *e);

/* A solution file, memory-mapped and verified (checksums, header, ranges):
 * SOW_E_INPUT with one line for a damaged or foreign file.  Read-only once
 * open: answers may come from many threads. */
struct sol;
SOW_API enum sow_status search_solution_open(const struct ruleset *rs, const char *path,
                                             struct sol **out, struct sow_error *e);
SOW_API void search_solution_close(struct sol *s);
SOW_API uint64_t search_solution_size(const struct sol *s);
/* p's exact value, best move and PV into *r, every legal move's value into
 * vals (rules_generate order); the number of moves, or -1 if p is not in
 * the solution. */
SOW_API int search_solution_answer(const struct sol *s, const sow_position *p,
                                   struct search_result *r, int *vals);

/* Solution files kept in a tables directory are found by name
 * (docs/solutions.md "Solution files"): RULES-2xPITS-LLL.sowsol, LLL the
 * root's seed count on three digits, e.g. odu-2x6-048.sowsol for the odu
 * start.  search_solution_name writes DIR/that name into buf.
 * search_solution_find opens, in increasing LLL from p's seed count up,
 * every such file of rs in dir and keeps the first that holds p: SOW_OK
 * with *out (and its path in path) or *out = NULL if none does; SOW_E_INPUT
 * if one of them is damaged or foreign (one line naming it). */
SOW_API void search_solution_name(const struct ruleset *rs, const char *dir, int level, char *buf,
                                  size_t len);
SOW_API enum sow_status search_solution_find(const struct ruleset *rs, const char *dir,
                                             const sow_position *p, struct sol **out,
                                             char *path, size_t pathlen, struct sow_error *e);

#endif
