/* The closure's expansion (closure.c, step 1): the root's closure under
 * all moves in breadth-first layers, each layer's nodes expanded in rounds
 * split between threads; then the renumbering by level (step 2).  Part of
 * the closure solver: closure_internal.h maps its files. */
#include "closure_internal.h"

/* ---- expansion ---- */

struct exp_thread {
    struct sow_movelist ml;
    uint64_t lvl[SOW_MAX_SEEDS + 1]; /* positions added, per level */
};

/* Expand nodes i0 .. i0+g-1 (g at most EXP_GROUP): every node's moves
 * generated once and its children's set cells prefetched, then each
 * child's first cell with its fingerprint looked at and the node it names
 * prefetched (the key to compare), then the children found or added, node
 * by node in order: the order of one node at a time, so one thread numbers
 * the positions as before, with the cache misses of a group in flight
 * together instead of one node's few. */
#define EXP_GROUP 8
static void expand_group(struct clos *c, const struct clos_env *env, uint64_t i0, int g, int tid,
                         const struct tb_direct *td, bool par, struct exp_thread *et)
{
    const struct ruleset *rs = c->rs;
    const int K = c->K;
    struct sow_movelist *ml = &et->ml;
    uint64_t w[EXP_GROUP * (SOW_MAX_PITS + 1)][MAX_KEY_WORDS], h[EXP_GROUP * (SOW_MAX_PITS + 1)];
    int cls[EXP_GROUP * (SOW_MAX_PITS + 1)], nk = 0;
    for (int j = 0; j < g; j++) {
        const uint64_t *key = &c->key[(i0 + (uint64_t)j) * K];
        sow_position p;
        clos_unpack(rs, K, key, &p);
        rs->generate(rs, &p, ml, env->cache[tid], NULL);
        env->nodes[tid]++;
        env->visits[tid] += (uint64_t)ml->n;
        int n = key_level(key, K);
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cl = n - retro_taken(ch), tv;
            const int8_t *at;
            if (tb_exit_at(env, td, ch, cl, &at, &tv)) { /* (its value is not needed here) */
                if (cl <= env->tb_hits_max)
                    env->tb_hits[tid]++;
                continue;
            }
            clos_pack(rs, K, &ch->pos, w[nk]);
            h[nk] = clos_hash(w[nk], K);
            set_prefetch(c, h[nk]);
            cls[nk++] = cl;
        }
    }
    for (int k = 0; k < nk; k++) {
        const uint32_t fp = (uint32_t)h[k];
        for (uint64_t s = slot_of(h[k], c->scap);; s = s + 1 == c->scap ? 0 : s + 1) {
            uint64_t x = par ? __atomic_load_n(&c->set[s], __ATOMIC_RELAXED) : c->set[s];
            if (x == EMPTY_CELL)
                break;
            if (CELL_FP(x) == fp) {
                if (CELL_IDX(x) != BUSY_IDX)
                    __builtin_prefetch(&c->key[(uint64_t)CELL_IDX(x) * K]);
                break;
            }
        }
    }
    for (int k = 0; k < nk; k++) {
        bool added = false;
        set_insert(c, w[k], h[k], par, &added);
        if (added)
            et->lvl[cls[k]]++;
    }
}

bool clos_stopped(const struct clos_env *env)
{
    /* (atomic: a watch thread may set it, watch.h; a signal handler too) */
    return env->stop && __atomic_load_n(env->stop, __ATOMIC_RELAXED);
}

void clos_say(const struct clos_env *env, double *last, bool force, const char *fmt, ...)
{
    if (!env->progress)
        return;
    double now = util_now();
    if (!force && now - *last < 1.0)
        return;
    *last = now;
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    env->progress(env->progress_arg, line);
}

/* Bytes the whole solve needs with N positions of which the largest level
 * holds L: the expansion's arrays, the renumbering (two key arrays, no
 * set), the level phase (arrays, set and the largest level's work). */
static double solve_need(const struct clos *c, uint64_t N, uint64_t L)
{
    uint64_t cap = N + N / 2, scap = clos_set_cap_for(N) * 3 / 2;
    double expand = clos_arrays_bytes(c, cap, scap);
    double renum = (double)N * (16.0 * c->K + 3.0);
    double level = clos_arrays_bytes(c, N, clos_set_cap_for(N)) + clos_level_work_per(c) * (double)L;
    double m = expand > renum ? expand : renum;
    return m > level ? m : level;
}

/* An expansion: what its layers and rounds share. */
struct exp_run {
    struct clos *c;
    const struct clos_env *env;
    struct clos_info *info;
    const struct exp_ck *ck;
    struct exp_thread *et;
    int nt, tbmax;
    bool keep;   /* the state saved (env->work, not a capped try) */
    double last, t0;
    uint64_t a0; /* the nodes expanded before this run */
    struct tb_direct td; /* the table exits, looked up in place */
};

/* The positions found so far per level (lvl), the root's included: the
 * threads' counts summed. */
static void exp_levels(const struct clos *c, const struct exp_thread *et, int nt, uint64_t *lvl)
{
    memset(lvl, 0, sizeof *lvl * (SOW_MAX_SEEDS + 1));
    for (int t = 0; t < nt; t++)
        for (int m = 0; m <= SOW_MAX_SEEDS; m++)
            lvl[m] += et[t].lvl[m];
    lvl[key_level(&c->key[0], c->K)]++; /* the root */
}

/* A breadth-first layer starts: [a, end) are the positions the
 * last layer found.  Limits are checked here, where the positions
 * found so far are the same set whatever the thread count
 * (within a layer, the order of indices is not), so that a
 * refused closure has cost the same nodes every time.  top: the state
 * before the layer (the checkpoint of a refusal), frontier: the
 * positions the layer expands.  CLOS_TOO_BIG: refused. */
static enum clos_err exp_layer(struct exp_run *x, uint64_t *lvl, const struct exp_state *top,
                               uint64_t frontier)
{
    struct clos *c = x->c;
    const struct clos_env *env = x->env;
    struct clos_info *info = x->info;
    const uint64_t slots = (uint64_t)c->slots;
    const uint64_t a = top->a;
    uint64_t L = 0;
    exp_levels(c, x->et, x->nt, lvl);
    for (int m = 0; m <= SOW_MAX_SEEDS; m++)
        if (lvl[m] > L)
            L = lvl[m];
    /* next layer: the last layer's growth per position expanded
     * (moves per position at first), at most all moves new */
    double g = top->prev_frontier ? (double)top->prev_found / (double)top->prev_frontier
                                  : (double)slots;
    if (g > (double)slots)
        g = (double)slots;
    uint64_t est = c->n + (uint64_t)(g * (double)frontier);
    uint64_t Lest = (uint64_t)((double)L * ((double)est / (double)c->n)) + 1;
    double need = solve_need(c, est, Lest);
    info->layers++;
    info->next_est = est;
    info->need = need;
    memcpy(info->level_count, lvl, sizeof info->level_count); /* found so far */
    double dt = util_now() - x->t0;
    clos_say(env, &x->last, frontier >= BIG_LINE,
             "closure layer %llu: %llu positions (%llu to expand), %.2f M/s, %.2f GB held "
             "(%.1f B/position); with the next layer the solve needs ~%.2f GB",
             (unsigned long long)info->layers, (unsigned long long)c->n,
             (unsigned long long)frontier, dt > 0 ? (double)(a - x->a0) / dt / 1e6 : 0.0,
             clos_arrays_bytes(c, c->cap, c->scap) / 1e9,
             clos_arrays_bytes(c, c->cap, c->scap) / (double)c->n, need / 1e9);
    if (c->n > env->max_nodes)
        return CLOS_TOO_BIG;
    if (clos_over(c, env, need) || est > MAX_NODES) {
        info->by_memory = est <= MAX_NODES;
        if (x->keep && info->by_memory && clos_ck_save_expand(c, env, x->ck, top))
            clos_say(env, &x->last, true, "the expansion so far (%llu positions) kept in %s: "
                     "a rerun with more --memory goes on from there",
                     (unsigned long long)c->n, env->work);
        return CLOS_TOO_BIG;
    }
    return CLOS_OK;
}

/* One round: nodes [a, b) expanded, split between the threads when it is
 * large enough. */
static void exp_round(struct exp_run *x, uint64_t a, uint64_t b)
{
    struct clos *c = x->c;
    const struct clos_env *env = x->env;
    struct exp_thread *et = x->et;
    const int nt = x->nt;
    bool par = nt > 1 && b - a >= 256;
    if (!par) {
        for (uint64_t i = a; i < b; i += EXP_GROUP)
            expand_group(c, env, i, b - i < EXP_GROUP ? (int)(b - i) : EXP_GROUP, 0, &x->td, false,
                         &et[0]);
    } else {
        const uint64_t ng = (b - a + EXP_GROUP - 1) / EXP_GROUP;
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 8) nowait
            for (uint64_t j = 0; j < ng; j++) {
                uint64_t i = a + j * EXP_GROUP;
                expand_group(c, env, i, b - i < EXP_GROUP ? (int)(b - i) : EXP_GROUP, tid, &x->td,
                             true, &et[tid]);
            }
        }
    }
}

/* Expand from *st (fresh: all 0, the root alone found; resumed: as the
 * checkpoint left it).  With env->work the state is saved at a round
 * boundary when stopped, when the budget refuses the next layer (a rerun
 * with more --memory goes on) and at most every CKPT_EVERY seconds at a
 * layer's start; a capped try (env->max_nodes) is never saved: it would
 * replace the checkpoint of the solve it precedes. */
enum clos_err clos_expand_all(struct clos *c, const struct clos_env *env, int tbmax,
                              struct clos_info *info, uint64_t *lvl, struct exp_state *st,
                              const struct exp_ck *ck)
{
    const uint64_t slots = (uint64_t)c->slots;
    uint64_t a = st->a, end = st->end, prev_frontier = st->prev_frontier,
             prev_found = st->prev_found;
    int nt = env->threads;
    struct exp_run x = {c, env, info, ck, NULL, nt, tbmax, false, 0, util_now(), st->a, {0}};
    double lastck = x.t0;
    tb_direct_init(&x.td, env, tbmax);
    x.keep = env->work && env->max_nodes == UINT64_MAX;
    struct exp_thread *et = x.et = calloc((size_t)nt, sizeof *et);
    if (!et)
        return CLOS_OOM;
    info->layers = st->layers;
    if (c->n > 1) { /* resumed: the positions found so far, per level */
        for (uint64_t i = 0; i < c->n; i++)
            et[0].lvl[key_level(&c->key[i * c->K], c->K)]++;
        et[0].lvl[key_level(&c->key[0], c->K)]--; /* the root is added apart */
    }
    enum clos_err e = CLOS_OK;
    while (a < c->n) {
        struct exp_state top = {a, end, info->layers, prev_frontier, prev_found};
        if (clos_stopped(env)) {
            if (x.keep && clos_ck_save_expand(c, env, ck, &top))
                clos_say(env, &x.last, true, "stopped: the expansion (%llu positions, %llu expanded) "
                         "kept in %s", (unsigned long long)c->n, (unsigned long long)a, env->work);
            e = CLOS_STOPPED;
            break;
        }
        if (x.keep && a == end && a > 0 && util_now() - lastck >= CKPT_EVERY) {
            clos_ck_save_expand(c, env, ck, &top);
            lastck = util_now();
        }
        if (a == end) { /* a layer starts: its limits (exp_layer) */
            end = c->n;
            if ((e = exp_layer(&x, lvl, &top, end - a)) != CLOS_OK)
                break;
            prev_frontier = end - a;
            prev_found = 0;
        }
        uint64_t want = end - a;
        uint64_t limit = c->scap / LOAD_DEN * LOAD_NUM;
        uint64_t room = limit > c->n ? (limit - c->n) / slots : 0;
        if (room < want && room < 4096) {
            /* by half each time (rounds shrink to the room left), so that
             * the set never jumps to a layer's worst case of all moves new */
            uint64_t ncap = c->scap * 3 / 2, least = clos_set_cap_for(c->n + 4096 * slots);
            if ((e = clos_rebuild_set(c, env, ncap > least ? ncap : least)) != CLOS_OK) {
                info->by_memory = e == CLOS_TOO_BIG;
                break;
            }
            continue;
        }
        uint64_t r = want < room ? want : room;
        if ((e = clos_grow_nodes(c, env, c->n + r * slots)) != CLOS_OK) {
            info->by_memory = e == CLOS_TOO_BIG;
            break;
        }
        uint64_t before = c->n;
        exp_round(&x, a, a + r);
        prev_found += c->n - before;
        a += r;
        clos_say(env, &x.last, false, "closure: %llu positions found, %llu expanded, %.2f GB held",
                 (unsigned long long)c->n, (unsigned long long)a,
                 clos_arrays_bytes(c, c->cap, c->scap) / 1e9);
    }
    if (e == CLOS_OK)
        exp_levels(c, et, nt, lvl);
    free(et);
    info->expand_s = util_now() - x.t0;
    return e;
}

/* ---- renumbering by level ---- */

enum clos_err clos_renumber(struct clos *c, const struct clos_env *env, const uint64_t *lvl)
{
    const int K = c->K;
    const uint64_t N = c->n;
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double b = (double)c->cap * (8.0 * K + 3.0) + (double)N * 8.0 * K;
    if (clos_over(c, env, b))
        return CLOS_TOO_BIG;
    clos_note_peak(c, b);
    const size_t nb = clos_keys_bytes(N * K + 1);
    uint64_t *nk = clos_keys_map(nb);
    if (!nk)
        return CLOS_OOM;
    c->start[0] = 0;
    for (int m = 0; m <= SOW_MAX_SEEDS; m++)
        c->start[m + 1] = c->start[m] + lvl[m];
    /* a stable counting sort: each thread counts a block of the nodes by
     * level, then copies its block behind the blocks before it, so that
     * the order is the serial one's whatever the threads */
    const int nth = env->threads > 1 && N >= ((uint64_t)1 << 16)
                        ? (env->threads < 64 ? env->threads : 64) : 1;
    uint64_t (*pos)[SOW_MAX_SEEDS + 1] = calloc((size_t)nth, sizeof *pos);
    if (!pos) {
        munmap(nk, nb);
        return CLOS_OOM;
    }
#pragma omp parallel num_threads(nth)
    {
        const int t = omp_get_thread_num(), k = omp_get_num_threads();
        const uint64_t a = N * (uint64_t)t / (uint64_t)k, b = N * (uint64_t)(t + 1) / (uint64_t)k;
        uint64_t *my = pos[t];
        for (uint64_t i = a; i < b; i++)
            my[key_level(&c->key[i * K], K)]++;
#pragma omp barrier
#pragma omp single
        for (int m = 0; m <= SOW_MAX_SEEDS; m++) {
            uint64_t at = c->start[m];
            for (int u = 0; u < k; u++) {
                uint64_t x = pos[u][m];
                pos[u][m] = at;
                at += x;
            }
        }
        for (uint64_t i = a; i < b; i++) {
            const uint64_t *w = &c->key[i * K];
            uint64_t j = my[key_level(w, K)]++;
            memcpy(&nk[j * K], w, (size_t)K * 8);
        }
    }
    free(pos);
    clos_keys_free(c);
    c->key = nk;
    c->kbytes = nb;
    /* shrink the value arrays to N */
    int8_t *x;
    if ((x = realloc(c->lo, N + 1)))
        c->lo = x;
    if ((x = realloc(c->hi, N + 1)))
        c->hi = x;
    if ((x = realloc(c->v, N + 1)))
        c->v = x;
    c->cap = N;
    return clos_rebuild_set(c, env, clos_set_cap_for(N));
}
