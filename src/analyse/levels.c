/* The shared levels (sow/analyse.h analyse_levels): the lowest levels of one
 * rule set and size solved in memory with their forced bounds, and every
 * move's value and the principal variation read from them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse_internal.h"
#include "tables/tables.h"

/* mem: levels 0..tb_mem_top(mem), extended under rw's write lock and probed
 * under its read lock.  refused: the first level that did not fit in memory
 * (none above it is tried again), -1 if none. */
struct analyse_levels {
    struct ruleset rs;
    unsigned long long positions;
    pthread_rwlock_t rw;
    struct tb_mem *mem;
    int refused;
};

struct analyse_levels *analyse_levels_new(const struct ruleset *rs, unsigned long long positions)
{
    struct analyse_levels *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->rs = *rs;
    l->positions = positions;
    l->refused = -1;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    /* a call waiting to extend the levels is not starved by probes */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int r = pthread_rwlock_init(&l->rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    if (r != 0) {
        free(l);
        return NULL;
    }
    return l;
}

void analyse_levels_free(struct analyse_levels *l)
{
    if (!l)
        return;
    tb_mem_free(l->mem);
    pthread_rwlock_destroy(&l->rw);
    free(l);
}

/* The levels holding level n, read-locked: true (the caller unlocks l->rw)
 * or false.  Levels 0..n are built first (write-locked) if together they fit
 * l->positions: the one call that builds them waits for it, every later one
 * probes.  Disk tables hold values only, and a move that keeps the seeds on
 * the board needs its position's forced bounds, which only levels solved in
 * memory keep (docs/serve.md). */
static bool levels_lock(struct analyse_levels *l, int n, const struct analyse_opts *o)
{
    if (!l->positions || n > TB_MAX_LEVEL)
        return false;
    pthread_rwlock_rdlock(&l->rw);
    if (l->mem && tb_mem_top(l->mem) >= n)
        return true;
    bool refused = l->refused >= 0 && n >= l->refused;
    pthread_rwlock_unlock(&l->rw);
    if (refused)
        return false;
    struct tb_index ix;
    tb_index_init(&ix, &l->rs);
    unsigned long long need = 0;
    for (int k = 0; k <= n; k++)
        need += tb_level_entries(&ix, k);
    if (need > l->positions)
        return false; /* levels this big are the solver's, per call */

    pthread_rwlock_wrlock(&l->rw);
    if (!l->mem)
        l->mem = tb_mem_new(&l->rs, NULL);
    if (l->mem && tb_mem_top(l->mem) < n && !(l->refused >= 0 && n >= l->refused)) {
        struct tb_mem_opts mo = {
            .threads = o->threads > 0 ? o->threads : 1,
            .budget = l->positions,
            .memory = o->memory,
            .stop = o->stop,
        };
        struct sow_error e;
        enum sow_status st = tb_mem_extend(l->mem, n, &mo, &e);
        if (st != SOW_E_INTERRUPTED && tb_mem_top(l->mem) < n)
            l->refused = tb_mem_top(l->mem) + 1; /* memory: no higher level is tried */
    }
    pthread_rwlock_unlock(&l->rw);
    pthread_rwlock_rdlock(&l->rw);
    if (l->mem && tb_mem_top(l->mem) >= n)
        return true;
    pthread_rwlock_unlock(&l->rw);
    return false;
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Every move's value of p from levels L, as the exact solver finds them
 * (src/solver/levels.c): a capture nets d - V(q); a move that keeps the
 * seeds on the board is worth clamp(cyc(p), -hi(q), -lo(q)).  false if L
 * misses a position (jerin's opening is not indexed). */
static bool move_values(const struct ruleset *rs, const struct tb_set *L, const sow_position *p,
                        const struct sow_movelist *ml, int *vals)
{
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int vq;
        if (ch->captured[0] + ch->captured[1]) {
            if (!tb_probe(L, &ch->pos, &vq))
                return false;
            vals[k] = ch->captured[p->side] - ch->captured[!p->side] - vq;
        } else {
            int lo, hi;
            if (!tb_probe_bounds(L, &ch->pos, &lo, &hi, &vq))
                return false;
            vals[k] = clampi(rules_cycle_value(rs, p), -hi, -lo);
        }
    }
    return true;
}

/* p answered from levels L: V(p), every move's value, and the PV as the
 * exact solver walks it (search.c pv_walk: at each position the first move
 * worth its value, until the game ends, a position repeats or SEARCH_MAX_PV
 * moves; it stops early at a level without bounds).  false if L misses p or
 * a child (or the bounds of p's level). */
static bool answer(const struct ruleset *rs, const struct tb_set *L, const sow_position *p,
                   const char *source, struct analysis *a)
{
    int v;
    if (a->ml.n == 0)
        v = a->ml.settle[p->side] - a->ml.settle[!p->side];
    else if (!tb_probe(L, p, &v) || !move_values(rs, L, p, &a->ml, a->vals))
        return false;
    a->source = source;
    a->exact = true;
    a->over = a->ml.n == 0;
    a->value = v;
    a->depth = -1;
    a->pv_len = 0;
    a->pv_repeats = false;
    sow_position hist[SEARCH_MAX_PV + 1], q = *p;
    hist[0] = q;
    while (a->pv_len < SEARCH_MAX_PV) {
        struct sow_movelist ml;
        int vals[SOW_MAX_PITS + 1], pick = 0;
        rs->generate(rs, &q, &ml, NULL, NULL);
        if (ml.n == 0 || !move_values(rs, L, &q, &ml, vals))
            break;
        for (int k = ml.n - 1; k >= 0; k--)
            if (vals[k] == v)
                pick = k;
        const struct sow_child *ch = &ml.c[pick];
        a->pv[a->pv_len++] = ch->move;
        if (ch->captured[0] + ch->captured[1]) {
            v = ch->captured[q.side] - ch->captured[!q.side] - v;
        } else {
            for (int j = a->pv_len - 1; j >= 0; j--)
                if (rules_same_position(&hist[j], &ch->pos)) {
                    a->pv_repeats = true;
                    return true;
                }
            if (!tb_probe(L, &ch->pos, &v))
                break;
        }
        q = ch->pos;
        hist[a->pv_len] = q;
    }
    return true;
}

bool analyse_levels_answer(struct analyse_levels *l, const struct ruleset *rs,
                           const sow_position *p, const struct analyse_opts *o,
                           struct analysis *a)
{
    if (strcmp(l->rs.name, rs->name) != 0 || l->rs.pits != rs->pits)
        return false;
    if (!levels_lock(l, rules_board_seeds(rs, p), o))
        return false;
    bool ok = answer(rs, tb_mem_set(l->mem), p, "levels", a);
    pthread_rwlock_unlock(&l->rw);
    return ok;
}

bool analyse_tables_answer(const struct tb_set *tb, const struct ruleset *rs,
                           const sow_position *p, struct analysis *a)
{
    const struct tb_index *ix = tb_set_index(tb);
    int n;
    uint64_t idx;
    /* only where the tables hold p's level with its bounds: its in-level
     * moves' values need them */
    if (ix->pits != rs->pits || !tb_index_of(ix, p, &n, &idx) || !tb_level_has_bounds(tb, n))
        return false;
    return answer(rs, tb, p, "tables", a);
}
