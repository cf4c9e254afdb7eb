/* The closure solver (closure.h; docs/solver.md "Algorithm", "Memory").
 *
 * 1. Expansion: the root's closure under all moves, mover-normalised,
 *    discovered in breadth-first layers (each layer's nodes are expanded in
 *    rounds split between threads).  Every node's moves are generated once;
 *    each child is found or added in the set; exit children at levels the
 *    endgame tables cover are not added (the tables answer them).  Nothing
 *    but the key is kept per node: the children are not stored.
 * 2. Renumbering: nodes sorted by level (counting sort of the keys), the set
 *    rebuilt, so that level m is the index range [start[m], start[m+1]).
 * 3. Values, level by level from the fewest seeds up.  For level m each node
 *    p's moves are generated again (threads split the level): be(p) = best
 *    exit value (d - V(child), children one level down are final, from the
 *    set or the tables; a settlement is an exit), its in-level children (a
 *    local forward list, inverted into a reverse CSR).  Then one game on
 *    the copies (p,L) and (p,H) in X-values (X = the player for whom
 *    endless play is -infinity):
 *        (p,L) = max(be(p), (q,H) for in-level q)   = lo(p)
 *        (p,H) = min(-be(p), (q,L) for in-level q)  = -hi(p)
 *    solved by a bucket queue over t = m .. -m: an L copy is final the first
 *    time one of its options reaches t (a bucket at be, or a child's H copy
 *    final at t); an H copy when its last in-level child's L copy is final
 *    (counter), at min(-be, t) (deferred to bucket -be if that is lower).
 *    Copies never final are endless: lo = -m, hi = m.  V = clamp(cyc, lo, hi).
 *    This is the least-fixed-point (attractor) computation of the definition
 *    (W_t, L_u) for every threshold at once, on exactly the positions the root
 *    can reach, so it is exact with cycles and no result depends on a path.
 *    Mover normalisation changes none of it: lo, hi, V and the cycle value
 *    are all the mover's, and the rules are the same for both sides.
 *
 * Memory (the budget env->memory): the bytes of the arrays are modelled
 * exactly from their capacities (bytes_now); before each layer the next one
 * is estimated from the last layer's growth and the whole solve's need
 * (expansion, renumbering, the largest level's work) is checked against
 * the budget; any growth past it during a layer stops the build as well.
 *
 * Races (threads > 1, expansion only): a free cell is claimed by CAS to
 * BUSY; the claimer takes a node index (atomic add), writes the key, then
 * publishes the index with a release store; a thread meeting BUSY spins
 * until the index is published, then compares the keys.  Each node is
 * expanded by exactly one thread (its round range is split), and in the
 * level phase each node is written by the thread that generates its moves.
 * Which index a position gets during the expansion depends on timing; the
 * closure (a set), the level order of the renumbered nodes within a level
 * does too, but the values, the sizes and the node counts do not.
 */
#include "closure_internal.h"

/* ---- the struct ---- */

struct clos *clos_new(const struct ruleset *rs)
{
    struct clos *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rs = rs;
    c->pits = rs->pits;
    c->holes = rs->holes;
    c->slots = SOW_MAX_PITS + 1;
    if (rs->pits + 1 < c->slots)
        c->slots = rs->pits + 1;
    c->K = 1;
    return c;
}

void clos_free(struct clos *c)
{
    if (!c)
        return;
    dk_free(c);
    clos_free_arrays(c);
    free(c);
}

void clos_reset(struct clos *c)
{
    dk_free(c);
    dk_keys_only(c, false); /* (a build on disk stopped while expanding) */
    c->um = false;
    c->n = 0;
    memset(c->start, 0, sizeof c->start);
}

uint64_t clos_size(const struct clos *c)
{
    return c->dk ? dk_total(c) : c->n;
}

bool clos_on_disk(const struct clos *c)
{
    return c->dk != NULL;
}

int clos_key_words(const struct clos *c) { return c->K; }

const uint64_t *clos_keys(const struct clos *c) { return c->key; }

const int8_t *clos_lo(const struct clos *c) { return c->lo; }

const int8_t *clos_hi(const struct clos *c) { return c->hi; }

const int8_t *clos_v(const struct clos *c) { return c->v; }

uint64_t clos_cells(const struct clos *c) { return c->scap; }

uint32_t clos_cell(const struct clos *c, uint64_t j)
{
    return c->set[j] == EMPTY_CELL ? UINT32_MAX : CELL_IDX(c->set[j]);
}

/* clos_build's start: the set emptied (a small one in place of a big one
 * kept from an earlier solve), big node arrays dropped, room for the root. */
static enum clos_err clos_fresh_arrays(struct clos *c, const struct clos_env *env)
{
    enum clos_err e = CLOS_OK;
    if (!c->set || c->scap > ((uint64_t)1 << 16)) {
        /* a small start: a big set kept from an earlier solve would cost
         * every small solve its clearing */
        free(c->set);
        c->set = NULL;
        c->scap = 0;
        e = clos_rebuild_set(c, env, 1 << 12);
    } else {
        memset(c->set, 0xFF, sizeof *c->set * (size_t)c->scap);
    }
    if (e == CLOS_OK && c->cap > ((uint64_t)1 << 20)) {
        clos_keys_free(c);
        free(c->lo);
        free(c->hi);
        free(c->v);
        c->key = NULL;
        c->lo = c->hi = c->v = NULL;
        c->cap = 0;
    }
    if (e == CLOS_OK)
        e = clos_grow_nodes(c, env, 1);
    return e;
}

/* The closure in memory with no keys checkpoint: expanded (from the root,
 * or resumed from closure.expand), numbered by level (lvl: positions per
 * level), and the keys checkpoint written with env->work. */
static enum clos_err clos_expand_numbered(struct clos *c, const struct clos_env *env, int tbmax,
                                          const uint64_t *rootw, struct clos_info *info,
                                          uint64_t *lvl, double *last)
{
    enum clos_err e = CLOS_OK;
    struct ck_meta base;
    clos_ck_meta_of(c, env, tbmax, rootw, &base);
    struct exp_state st = {0};
    struct exp_ck ck = {tbmax, rootw, &base};
    bool resumed = false;
    if (env->work && env->max_nodes == UINT64_MAX)
        e = clos_ck_load_expand(c, env, tbmax, rootw, &st, &resumed);
    if (e == CLOS_OK && resumed) {
        e = clos_rebuild_set(c, env, clos_set_cap_for(c->n));
        clos_say(env, last, true, "closure expansion resumed from %s: %llu positions, "
                 "%llu expanded, %llu layers", env->work, (unsigned long long)c->n,
                 (unsigned long long)st.a, (unsigned long long)st.layers);
    } else if (e == CLOS_OK) {
        c->n = 0;
        bool added;
        set_insert(c, rootw, clos_hash(rootw, c->K), false, &added);
    }
    if (e == CLOS_OK)
        e = clos_expand_all(c, env, tbmax, info, lvl, &st, &ck);
    if (e == CLOS_OK && (e = clos_renumber(c, env, lvl)) == CLOS_TOO_BIG) {
        info->by_memory = true;
        struct util_gb2 g = util_gb2(c->refused, env->memory);
        snprintf(info->why, sizeof info->why,
                 "%llu positions, every layer expanded; numbering them by level needs %s "
                 "GB, the budget is %s GB: raise --memory, or solve more levels first",
                 (unsigned long long)c->n, g.need, g.budget);
    }
    if (e == CLOS_OK && env->work) {
        if (!clos_ck_save_keys(c, env, tbmax, rootw, &base))
            clos_say(env, last, true, "cannot write the checkpoint in %s: continuing without",
                     env->work);
        else if (env->max_nodes == UINT64_MAX) {
            char path[4096];
            snprintf(path, sizeof path, "%s/closure.expand", env->work);
            unlink(path);
        }
    }
    return e;
}

enum clos_err clos_build(struct clos *c, const struct clos_env *env, const sow_position *root)
{
    struct clos_info dummy, *info = env->info ? env->info : &dummy;
    memset(info, 0, sizeof *info);
    clos_reset(c);
    c->peak = 0;
    c->refused = 0;
    int n = rules_board_seeds(c->rs, root);
    int K = clos_words_for(c->rs, n);
    if (K > MAX_KEY_WORDS || n > 127) { /* values are kept in int8 */
        snprintf(info->why, sizeof info->why,
                 "the closure keeps values in one byte: at most 127 seeds on the board (%d)", n);
        return CLOS_TOO_BIG;
    }
    if (K != c->K) {
        clos_free_arrays(c);
        c->K = K;
    }
    enum clos_err e = clos_fresh_arrays(c, env);
    /* exits into levels the tables hold are answered by them */
    int tbmax = env->tb ? tb_max_level(env->tb) : -1;
    uint64_t lvl[SOW_MAX_SEEDS + 1] = {0}, rootw[MAX_KEY_WORDS] = {0};
    clos_pack(c->rs, K, root, rootw);
    int done = -1;
    bool loaded = false;
    double last = 0;
    if (e == CLOS_OK && env->disk && env->work && env->max_nodes == UINT64_MAX) {
        /* (diskclosure) level by level on disk */
        bool took = false; /* across MPI ranks (closure_mpi.c), when running under mpirun */
        if (clos_mpi_build)
            e = clos_mpi_build(c, env, n, tbmax, rootw, info, &took);
        if (!took)
            e = dk_build(c, env, n, tbmax, rootw, info);
        if (e == CLOS_TOO_BIG && c->refused > 0)
            info->by_memory = true;
        if (e == CLOS_TOO_BIG && c->refused > info->need)
            info->need = c->refused;
        info->bytes = clos_arrays_bytes(c, c->cap, c->scap);
        info->peak = c->peak;
        if (e != CLOS_OK && e != CLOS_TOO_BIG)
            memset(info->level_count, 0, sizeof info->level_count);
        if (e != CLOS_OK)
            clos_reset(c);
        return e;
    }
    if (e == CLOS_OK && env->work)
        e = clos_ck_load(c, env, tbmax, rootw, &done, &loaded);
    if (e == CLOS_OK && loaded) {
        for (int m = 0; m <= SOW_MAX_SEEDS; m++)
            lvl[m] = c->start[m + 1] - c->start[m];
        info->layers = 0;
        e = clos_rebuild_set(c, env, clos_set_cap_for(c->n));
        clos_say(env, &last, true, "closure resumed from %s: %llu positions, levels up to %d solved",
                 env->work, (unsigned long long)c->n, done);
    } else if (e == CLOS_OK) {
        e = clos_expand_numbered(c, env, tbmax, rootw, info, lvl, &last);
    }
    info->positions = c->n;
    if (e == CLOS_OK)
        e = clos_solve_levels(c, env, tbmax, info, done);
    if (e == CLOS_TOO_BIG && c->refused > 0)
        info->by_memory = true; /* the set or node arrays refused before any layer */
    if (e == CLOS_TOO_BIG && c->refused > info->need)
        info->need = c->refused; /* a growth mid-layer, past the layer's estimate */
    info->bytes = clos_arrays_bytes(c, c->cap, c->scap);
    info->peak = c->peak;
    if (e == CLOS_OK)
        memcpy(info->level_count, lvl, sizeof info->level_count);
    else if (e != CLOS_TOO_BIG)
        memset(info->level_count, 0, sizeof info->level_count);
    if (e != CLOS_OK)
        clos_reset(c);
    return e;
}

bool clos_find(const struct clos *c, const sow_position *p, int *lo, int *hi, int *v,
               bool *expanded)
{
    if (c->dk) { /* (diskclosure) the levels' files */
        uint64_t w[MAX_KEY_WORDS];
        if (!c->dk->solved || !clos_pack(c->rs, c->K, p, w))
            return false;
        int l = key_level(w, c->K);
        int64_t q = dk_find(c, l, w);
        if (q < 0 || !c->dk->map[1][l])
            return false;
        const int8_t *x = dk_payload(c->dk, 1, l);
        uint64_t N = c->dk->st.cnt[l];
        if (lo)
            *lo = x[q];
        if (hi)
            *hi = x[N + (uint64_t)q];
        if (v)
            *v = x[2 * N + (uint64_t)q];
        if (expanded)
            *expanded = true;
        return true;
    }
    if (!c->n || !c->start[SOW_MAX_SEEDS + 1])
        return false;
    uint64_t w[MAX_KEY_WORDS];
    if (!clos_pack(c->rs, c->K, p, w))
        return false;
    int64_t i = set_find(c, w);
    if (i < 0)
        return false;
    if (lo)
        *lo = c->lo[i];
    if (hi)
        *hi = c->hi[i];
    if (v)
        *v = c->v[i];
    if (expanded)
        *expanded = true;
    return true;
}
