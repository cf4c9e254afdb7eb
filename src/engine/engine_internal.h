/* The alpha-beta engine's files share this (not part of the API; the API
 * is sow/engine.h).  One idea per file:
 *
 *   engine.c            construction, the API, engine_search: the root,
 *      |                its tables and history, the helper threads
 *      |-- engine_root.c       a root the tables hold: the move that keeps
 *      |                       its value (bounds, or the root's closure)
 *      |-- engine_swindle.c    at a proven root, the move that keeps the
 *      |                       value and leaves the opponent the fewest
 *      |                       replies keeping his
 *      |-- engine_iterate.c    iterative deepening per thread, aspiration,
 *      |                       info lines, publishing between threads
 *      |      `-- engine_tree.c       the tree search (PVS): node head,
 *      |                              repetitions, ABDADA marks, leaves
 *      `-- engine_lockstep.c   lockstep turns (engine_opts.lockstep)
 *   below them: engine_pick.h (move order), engine_fast.h (fast paths),
 *   engine_know.h (solution files), eval.c (evaluation), tt_impl.h
 *
 * Shared functions are named eng_* (ls_* for the lockstep turns).
 */
#ifndef SOW_ENGINE_ENGINE_INTERNAL_H
#define SOW_ENGINE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/engine.h"
#include "tables/tables.h"
#include "tt.h"
#include "util.h"
#include "tt_impl.h"
#include "engine_fast.h"
#include "engine_know.h"
#include "engine_pick.h"

#define PATH_MAX_LEN (ENGINE_MAX_HISTORY + ENGINE_MAX_PLY + 8)
#define CHECK_EVERY 255
/* Nodes this close to the leaves neither probe nor store heuristic results:
 * a probe is a cache miss, and their subtrees cost about as much. */
#ifndef TT_MIN_DEPTH
#define TT_MIN_DEPTH 1
/* ABDADA (threads > 1): at a node with at least BUSY_DEPTH plies left, a
 * move after the first whose child another thread is searching now is
 * put last (its key demoted by BUSY_DEMOTE), so that the threads split a
 * node's moves instead of searching the same child side by side.  The
 * marks live in BUSY_SLOTS words indexed by the child's key. */
#define BUSY_DEPTH 8
#define BUSY_SLOTS 16384
#define BUSY_DEMOTE ((int64_t)1 << 50)
#endif

struct clos;

struct ethr {
    struct engine *e;
    int tid;
    uint64_t nodes, tb_hits;
    uint64_t deferred;             /* ABDADA: moves put last (busy_has) */
    int seldepth;
    bool abort;
    bool superseded;               /* abort: another thread completed cur_depth */
    uint64_t ls_last;              /* lockstep: nodes at the last turn given up */
    int cur_depth;                 /* the iteration being searched */
    struct sow_relay_cache *cache;
    struct pick pk;
    /* The game history, then the search path, for repetitions: the
     * positions themselves (compared exactly, so leaves need no key) and
     * their seeds on the board.  hist holds copies of the history. */
    const sow_position *path[PATH_MAX_LEN];
    uint16_t lvl[PATH_MAX_LEN];
    /* One bit (efast_pos_bit) per position of the stretch at the same
     * level up to each entry: a repetition is looked for only if the bit
     * of the new position is already set (a filter, exact either way). */
    uint64_t seen[PATH_MAX_LEN];
    int base;                      /* path entries of the game history */
    sow_position hist[ENGINE_MAX_HISTORY];
    sow_move pv[ENGINE_MAX_PLY + 1][ENGINE_MAX_PLY + 1];
    int pvlen[ENGINE_MAX_PLY + 1];
    struct sow_movelist ml[ENGINE_MAX_PLY + 2];
    pthread_t th;
    /* the root: */
    sow_position root;
    int max_depth;
};

struct engine {
    const struct ruleset *rs;
    struct engine_opts o;
    bool lmr;                      /* engine_opts.lmr resolved for the rule set */
    struct eval_weights w;
    struct efast fx;               /* the rule set's fast paths (engine_fast.h) */
    struct tt *tt;
    struct tb_mem *mem;            /* loaded tables + small levels solved in memory */
    const struct tb_set *set;      /* what to probe: mem's set, or the loaded tables */
    int tbmax;
    long long budget;              /* positions of levels to solve in memory */
    int nthreads;
    struct ethr **th;
    atomic_int stop;
    atomic_int halt;               /* engine_stop: also ends eng_swindle */
    bool in_swindle;               /* eng_swindle's searches: no swindle */
    /* Lazy SMP (publish()): the deepest completed iteration of any thread,
     * and the depth the main thread is searching. */
    atomic_int done_depth, main_depth;
    /* ABDADA's "being searched" marks (threads > 1, see busy_has): the
     * keys of the children some thread is searching now, one word a slot
     * (relaxed atomics: a lost or stale mark only changes an order). */
    uint64_t *busy;
    pthread_mutex_t mu;            /* guards done */
    struct engine_info done;
    /* Lockstep (engine_opts.lockstep): the thread whose turn it is, and
     * which threads still run; guarded by ls_mu. */
    pthread_mutex_t ls_mu;
    pthread_cond_t ls_cv;
    int ls_turn;
    bool *ls_running;
    volatile sig_atomic_t *ext_stop;
    double deadline;               /* 0: none; on e->clock's clock */
    /* engine_limits.soft, from `started` on e->clock's clock; the main
     * thread's view of the best move's stability (soft_time_up) */
    double soft, started, changes;
    sow_move prev_best;
    bool one_move;
    double (*clock)(void);         /* util_now, or util_cpu_now (engine_limits.cpu_clock) */
    uint64_t node_limit;
    uint64_t total_nodes;
    void (*info_cb)(void *arg, const struct engine_info *i);
    void *info_arg;
    /* results of the main thread */
    struct engine_info last;
    bool have_last;
    double t0;
    /* engine_root.c: the last root closure built (NULL: none yet), and
     * whether it is solved (it answers the roots it holds) */
    struct clos *clos;
    bool clos_solved;
    /* The root's moves the search may play (root_known.allow), if
     * root_filter; read by every thread at ply 0. */
    bool root_filter;
    uint64_t root_allow[4];
};

static inline bool eng_root_allows(const struct engine *e, sow_move m)
{
    return (e->root_allow[m >> 6] >> (m & 63)) & 1;
}

static inline int seeds_on_board(const struct ruleset *rs, const sow_position *p)
{
    return board_sum_range(&p->board, 0, rs->holes);
}

/* ---- engine_tree.c ---- */

int eng_root_search(struct ethr *t, int alpha, int beta, int depth, bool *proven);

/* ---- engine_root.c ---- */

/* What the tables tell of a root (eng_root_known). */
struct root_known {
    int value;                     /* V(p) */
    sow_move best;                 /* a move to play at once, or SOW_MOVE_NONE */
    /* The moves known to keep V that stay in the level and do not repeat
     * a position of the game (bit m of allow[m / 64] for move m): where
     * there are two or more, the search chooses among them alone; 0: not
     * known, the search chooses among all. */
    int ncand;
    uint64_t allow[4];
    uint64_t nodes;                /* of a closure built for the root */
};

_Static_assert(sizeof(sow_move) == 1, "root_known.allow has a bit for every move");

/* p (moves ml; the game's history at its level hist[from..nhist)) in the
 * tables: true and *k filled; false if the tables do not hold p. */
bool eng_root_known(struct engine *e, const sow_position *p, const struct sow_movelist *ml,
                    const sow_position *hist, int from, int nhist,
                    const struct engine_limits *lim, struct root_known *k);

/* ---- engine_swindle.c ---- */

void eng_swindle(struct engine *e, const sow_position *p, const struct sow_movelist *ml,
                 const sow_position *hist, int nhist, const struct engine_limits *lim,
                 struct engine_result *r);

/* ---- engine_iterate.c ---- */

int eng_adopt(struct engine *e, int *score);
void eng_iterate(struct ethr *t);

/* ---- engine_lockstep.c ---- */

void ls_wait(struct engine *e, int tid);
void ls_yield(struct engine *e, int tid);
void ls_exit(struct engine *e, int tid);

#endif
