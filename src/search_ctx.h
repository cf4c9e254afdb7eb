/* The searchers' shared context (not part of the API): the context, the
 * per-thread state, progress lines.  It is the floor the rooms stand on:
 *
 *   search/search.c          dispatcher: sow/search.h entry points, PV walk
 *      |                     (calls each room through its own header)
 *      |-- solver/solver.h           the exact mode: levels in memory
 *      |                             (tables.h tb_mem), then the position's
 *      |                             closure (closure.h), solution files
 *      |-- threshold/threshold.h     threshold (attractor) tests, their
 *      |                             MTD(f) driver and the bounded mode;
 *      |                             move order from movepick.c
 *      `-- engine/search_engine.h    the bounded mode by the alpha-beta
 *              |                     engine (sow/engine.h)
 *   search_ctx.h, search_ctx.c  this file: struct search_ctx, struct thr,
 *                               search_progress, search_total_nodes
 *
 * Includes and calls go down only: the rooms include this file and the
 * modules below it (tables, tt, util, rules), never the dispatcher nor each
 * other, except the engine reading solution files (engine/engine_know.c ->
 * solver/solution.h).  Each room's header maps its own files.
 *
 * Thread-safety: as sow/search.h; the rooms' functions run on the caller's
 * thread and start their own threads where they say so.
 */
#ifndef SOW_SEARCH_CTX_H
#define SOW_SEARCH_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "sow/search.h"
#include "sow/status.h"

#define MAX_LEVELS (SOW_MAX_SEEDS + 2) /* nested level tests: one per seed count */

enum cutmode { CUT_EXACT, CUT_BOUND, CUT_HEUR };

struct level;

struct thr {
    struct search_ctx *s;
    const struct ruleset *rs;
    struct tt *tt;
    const struct tb_set *tb;
    int tbmax;
    struct sow_relay_cache *cache;
    int tid;
    uint64_t nodes, visits, tb_hits; /* nodes: positions expanded */
    enum cutmode cut;
    bool abort;
    bool tainted;                 /* a depth cut was used: store nothing */
    volatile int *done;           /* another thread answered this test */
    int lvl;                      /* nesting of level tests */
    struct level *levels;         /* [MAX_LEVELS] work areas */
    struct sow_movelist *ml;      /* [MAX_LEVELS + 1] */
};

struct search_ctx {
    const struct ruleset *rs;
    struct search_opts o;
    struct tt *tt;
    int nthreads;
    struct thr **th;
    double deadline;              /* 0 = none */
    /* What stopped the last call: flags any thread may set (each set once,
     * read after the threads joined); fail_status turns them into err. */
    bool timed_out, too_deep, oom, interrupted;
    char why[320];                /* the message when it is specific */
    struct sow_error err;         /* search_last_error */
    bool quiet;                   /* no progress lines (PV, move values) */
    /* exact mode (closure.h): the last solved closure, kept for the PV and
     * move values; per-thread counters and relay caches */
    struct clos *clos;
    struct sow_relay_cache **caches;
    uint64_t *cnodes, *cvisits, *ctbh;
    /* exact mode: levels 0..memmax solved whole in memory (those of o.tb,
     * 0..diskmax, borrowed; the rest built on the fly: tables.h, tb_mem) */
    struct tb_mem *mem;
    int memmax, diskmax;
    uint64_t dmoves, dentries;
    /* bounded mode by the alpha-beta engine (search_engine.c, engine.h):
     * made on first use; its nodes and table hits so far */
    struct engine *eng;
    uint64_t engine_nodes, engine_tbh;
};

static inline int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* ---- search_ctx.c ---- */

/* A progress line through o.progress (unless quiet). */
void search_progress(struct search_ctx *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Nodes (positions visited) over every method and thread. */
uint64_t search_total_nodes(const struct search_ctx *s);

#endif
