/* The exact solver's closure: every position reachable from a root (by all
 * moves, through every lower level), each expanded once, then solved level by
 * level (fewest seeds first) with a bucket-queue retrograde over the explored
 * in-level graph.  docs/solver.md "Algorithm" explains why this is the value
 * of docs/rules.md; closure.c says how.  Internal to src/search.
 *
 * Layout (per node i, arrays indexed by node; S = words per position):
 *   pw[i*S .. i*S+S-1]  board words 0..nw-1, then side | state << 8
 *   lvl[i]              seeds on the board (the level)
 *   nmv[i]              moves generated; NMV_OPEN not expanded yet,
 *                       NMV_KNOWN value from the endgame tables (never expanded)
 *   kid[i*slots + k]    node of move k's child (rules_generate order)
 *   dcap[i*slots + k]   mover's net capture of move k (0 for in-level moves)
 *   lo[i], hi[i], v[i]  results (v only for NMV_KNOWN)
 * Set: open addressing, 16-byte cells {key, idx}, key = mix of the S words
 * (never 0), positions compared word-wide on a key match.
 * Example (oware 2x6, S = 3): 1,0,1,0,1,1/0,1,1,0,0,1/A is
 *   pw = {0x0001000101000101, 0x0000000001000001, 0x0000}, lvl = 7.
 *
 * Thread-safety: one caller at a time per struct clos; clos_build runs
 * env->threads OpenMP threads inside (concurrent insertion: CAS on the key,
 * index published with release; see closure.c).  clos_find is read-only.
 */
#ifndef SOW_SEARCH_CLOSURE_H
#define SOW_SEARCH_CLOSURE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/tables.h"

struct clos;

struct clos_env {
    int threads;
    struct sow_relay_cache **cache;   /* [threads], entries may be NULL */
    volatile sig_atomic_t *stop;      /* may be NULL */
    const struct tb_set *tb;          /* may be NULL */
    uint64_t *nodes;                  /* [threads]: positions expanded */
    uint64_t *visits;                 /* [threads]: children made and looked up */
    uint64_t *tb_hits;                /* [threads]: probes of levels <= tb_hits_max */
    int tb_hits_max;                  /* highest level loaded from files (-1: none) */
    uint64_t max_nodes;               /* refuse closures larger than this
                                         (checked between breadth-first layers) */
    uint64_t hard_nodes;              /* ... and stop any round past this */
    /* Called between expansion rounds and levels, from the calling thread,
     * at most about once a second: positions found, expanded, and the
     * level being solved (-1 while expanding).  May be NULL. */
    void (*progress)(void *arg, uint64_t found, uint64_t expanded, int level);
    void *progress_arg;
};

enum clos_err { CLOS_OK = 0, CLOS_STOPPED, CLOS_OOM, CLOS_TOO_BIG };

struct clos *clos_new(const struct ruleset *rs);
void clos_free(struct clos *c);
void clos_reset(struct clos *c);

/* Replace the closure by the one of root and solve it. */
enum clos_err clos_build(struct clos *c, const struct clos_env *env, const sow_position *root);

/* p's exact results if p is in the closure: lo, hi (mover's view, clamped to
 * [-n, n]; only if *expanded) and the value v.  false if p is not in it. */
bool clos_find(const struct clos *c, const sow_position *p, int *lo, int *hi, int *v,
               bool *expanded);

/* Positions in the closure. */
uint64_t clos_size(const struct clos *c);

#endif
