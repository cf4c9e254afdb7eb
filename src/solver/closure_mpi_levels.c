/* The closure on disk across MPI ranks, level by level
 * (closure_mpi_internal.h; docs/distributed.md "The exact solver across
 * ranks"): the two passes of closure_disk.c with each level split over the
 * ranks by cm_owner.
 *
 * Down (cm_down): each rank expands the positions of level m it owns, in
 * rounds; a child it does not own goes to its owner in the round's
 * exchange (MPI_Alltoallv), in-level children into the owner's set, exits
 * to level l < m into the owner's incoming file of l.  A round's first
 * collective sums the positions still waiting on every rank: the level
 * ends when none are.  Each rank then writes its share, sorted.
 *
 * Up (cm_up): each rank generates the moves of its share again, in batches
 * of J->piece positions; per batch one exchange carries the exits' look-ups
 * (answered by their owners from their shares of the lower levels, a
 * second exchange bringing the values back in the order asked) and the
 * in-level edges, each told to its target's owner with the global index
 * (rank << 32 | local index) of the position it comes from: the reverse
 * edges of the rank's share.  Then the retrograde of retro/retro.h on the
 * copies (p,L), (p,H) of the rank's share, thresholds t = m .. -m, each in
 * supersteps: the rank scans its share for the copies final at t (bucket
 * by be, as closure_retro.c's scans), makes what follows from its final
 * copies (its own predecessors at once, the others' as 8-byte updates to
 * their owners: count an H copy down, claim an L copy), exchanges, applies
 * what came, and the threshold ends when no rank has a copy left to pass
 * on.  The copies final at t are the least fixpoint of round t whatever the
 * order of the work, so the values are one process's.
 *
 * Thread-safety: one thread per rank in the passes; the retrograde runs on
 * env->threads (each thread its own queues of updates for the other
 * ranks, gathered by rank at each superstep). */
#include "closure_mpi_internal.h"

/* ---- down ---- */

/* The k buffers from[0 .. k) appended to to[0 .. k), each emptied (the
 * threads' words gathered in thread order); false: out of memory. */
static bool cm_append(struct cm_buf *to, struct cm_buf *from, size_t k)
{
    bool ok = true;
    for (size_t i = 0; i < k; i++) {
        ok &= cm_push(&to[i], from[i].v, from[i].n);
        from[i].n = 0;
    }
    return ok;
}

/* The words of the k buffers b[0 .. k) given back (b NULL: none); the
 * array itself stays the caller's. */
static void cm_bufs_free(struct cm_buf *b, size_t k)
{
    for (size_t i = 0; b && i < k; i++)
        free(b[i].v);
}

/* Key w exits to level l: buffered in et for l's incoming file (blocks of
 * DK_BUF, appended under dk_flush's lock). */
static void cm_exit(const struct cm *J, struct dk_thread *et, int l, const uint64_t *w)
{
    struct clos *c = J->c;
    const int K = c->K;
    if (!et->buf[l] && !(et->buf[l] = malloc(8 * (size_t)K * DK_BUF))) {
        et->oom = true;
        return;
    }
    memcpy(&et->buf[l][(uint64_t)et->nb[l] * K], w, 8 * (size_t)K);
    if (++et->nb[l] == DK_BUF) {
        dk_flush(c, l, et->buf[l], DK_BUF);
        et->nb[l] = 0;
    }
}

/* Expand own position i of level m on thread tid (par: one of several at
 * once): its in-level moves counted in et->inl, children of other ranks
 * into send[owner], own in-level ones into the set, own exits into et. */
static void cm_expand(const struct cm *J, uint64_t i, int m, int tid, struct dk_thread *et,
                      struct cm_buf *send, bool par)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    const struct ruleset *rs = c->rs;
    const int K = c->K, me = J->M.rank, R = J->M.size;
    sow_position p;
    struct sow_movelist *ml = &et->ml;
    clos_unpack(rs, K, &c->key[i * K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    env->nodes[tid]++;
    env->visits[tid] += (uint64_t)ml->n;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int cl = m - retro_taken(ch), tv;
        if (tb_exit(env, J->tbmax, ch, cl, &tv)) {
            if (cl <= env->tb_hits_max)
                env->tb_hits[tid]++;
            continue;
        }
        uint64_t w[MAX_KEY_WORDS + 1];
        w[0] = (uint64_t)cl;
        clos_pack(rs, K, &ch->pos, w + 1);
        int o = cm_owner(w + 1, K, R);
        if (cl == m)
            et->inl++;
        if (o != me) {
            if (!cm_push(&send[o], w, (size_t)K + 1))
                et->oom = true;
        } else if (cl == m) {
            bool added;
            set_insert(c, w + 1, clos_hash(w + 1, K), par, &added);
        } else {
            cm_exit(J, et, cl, w + 1);
        }
    }
}

/* Own positions [a, b) of level m expanded: on one thread (J->et,
 * J->send), or on T threads (et[t], their sends ts[t * R ..] appended to
 * J->send in thread order after the round; the set takes the in-level
 * children atomically).  The order the children reach their sets in does
 * not matter: each level is sorted once expanded. */
static void cm_expand_round(struct cm *J, int m, uint64_t a, uint64_t b, int T,
                            struct dk_thread *et, struct cm_buf *ts)
{
    const int R = J->M.size;
    const uint64_t min = J->env->par_min ? J->env->par_min : 256; /* (tests: any round) */
    if (T <= 1 || !et || !ts || b - a < min) {
        for (uint64_t i = a; i < b; i++)
            cm_expand(J, i, m, 0, &J->et, J->send, false);
        return;
    }
#pragma omp parallel num_threads(T)
    {
        const int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64) nowait
        for (uint64_t i = a; i < b; i++)
            cm_expand(J, i, m, tid, &et[tid], &ts[(size_t)tid * (size_t)R], true);
    }
    for (int t = 0; t < T; t++)
        J->et.oom |= !cm_append(J->send, &ts[(size_t)t * (size_t)R], (size_t)R) || et[t].oom;
}

/* Room for `more` new positions of the level in the node arrays and the set. */
static enum clos_err cm_room(struct cm *J, uint64_t more)
{
    struct clos *c = J->c;
    enum clos_err e = clos_grow_nodes(c, J->env, c->n + more);
    if (e == CLOS_OK && c->n + more > c->scap / LOAD_DEN * LOAD_NUM)
        e = dk_grow_set(c, J->env, clos_set_cap_for(c->n + more));
    return e;
}

/* This rank's refusal of its share of level m (n positions). */
static void cm_refuse(struct cm *J, int m, uint64_t n, double need, const char *what)
{
    struct clos_info *info = J->info;
    const struct clos_env *env = J->env;
    if (J->c->refused > need)
        need = J->c->refused;
    info->by_memory = true;
    info->need = need;
    struct util_gb2 g = util_gb2(need, env->memory);
    snprintf(info->why, sizeof info->why,
             "level %d across %d ranks: rank %d's share (%llu positions) needs %.12s GB to "
             "%.32s; each rank's --memory is %.12s GB: raise it, or run more ranks",
             m, J->M.size, J->M.rank, (unsigned long long)n, g.need, what, g.budget);
}

/* The round's children that came from the other ranks: in-level ones into
 * the set, exits into their incoming files. */
static enum clos_err cm_take(struct cm *J, int m, const uint64_t *rv, size_t nr)
{
    struct clos *c = J->c;
    const size_t K = (size_t)c->K;
    uint64_t nin = 0;
    for (size_t j = 0; j < nr; j += K + 1)
        nin += rv[j] == (uint64_t)m;
    enum clos_err e = nin ? cm_room(J, nin) : CLOS_OK;
    if (e == CLOS_TOO_BIG)
        cm_refuse(J, m, c->n + nin, c->refused, "hold it while it is expanded");
    for (size_t j = 0; e == CLOS_OK && j < nr; j += K + 1) {
        if (rv[j] == (uint64_t)m) {
            bool added;
            set_insert(c, &rv[j + 1], clos_hash(&rv[j + 1], (int)K), false, &added);
        } else {
            cm_exit(J, &J->et, (int)rv[j], &rv[j + 1]);
        }
    }
    return e;
}

/* Level m expanded on this rank: exits flushed, its share sorted into its
 * keys file, the incoming file gone, the state saved. */
static enum clos_err cm_down_done(struct cm *J, int m, uint64_t deg_a, uint64_t inl)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const size_t kb = 8 * (size_t)K;
    for (int l = 0; l < m; l++)
        if (J->et.nb[l]) {
            dk_flush(c, l, J->et.buf[l], J->et.nb[l]);
            J->et.nb[l] = 0;
        }
    dk_close_in(dk, true);
    if (dk->ioerr || J->et.oom) {
        snprintf(J->info->why, sizeof J->info->why, "the closure on disk, level %d, rank %d: %.200s",
                 m, J->M.rank, J->et.oom ? "out of memory" : dk->err.msg);
        return CLOS_OOM;
    }
    const uint64_t n = c->n;
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double bb = clos_arrays_bytes(c, c->cap, 0) + (double)n * (double)kb;
    if (clos_over(c, env, bb)) {
        double deg = deg_a ? (double)inl / (double)deg_a : (double)c->slots;
        cm_refuse(J, m, n, dk_need(c, env, n, deg), "sort it");
        return CLOS_TOO_BIG;
    }
    clos_note_peak(c, bb);
    return dk_keys_write(c, env, m, J->info->why, sizeof J->info->why);
}

/* The down pass's per-thread exits and sends given back. */
static void cm_threads_free(struct dk_thread *et, struct cm_buf *ts, int T, int R)
{
    for (int t = 0; et && t < T; t++)
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            free(et[t].buf[l]);
    cm_bufs_free(ts, (size_t)T * (size_t)R);
    free(et);
    free(ts);
}

enum clos_err cm_down(struct cm *J, int m)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t slots = (uint64_t)c->slots;
    const double t0 = util_now();
    dk_keys_only(c, true);
    c->n = 0;
    c->refused = 0;
    J->et.oom = false;
    J->et.inl = 0;
    const int T = env->threads > 1 ? env->threads : 1, R = J->M.size;
    struct dk_thread *et = T > 1 ? calloc((size_t)T, sizeof *et) : NULL;
    struct cm_buf *ts = T > 1 ? calloc((size_t)T * (size_t)R, sizeof *ts) : NULL;
    enum clos_err e = clos_rebuild_set(c, env, 4096);
    uint64_t incoming = 0;
    if (e == CLOS_OK && m == J->top) {
        if (cm_owner(J->rootw, K, J->M.size) == J->M.rank)
            e = dk_seed(c, env, J->rootw);
    } else if (e == CLOS_OK && dk->st.inlen[m]) {
        bool damaged = false;
        double last = 0;
        e = dk_read_seeds(c, env, m, &incoming, &last, &damaged);
        if (e == CLOS_OK && damaged) {
            snprintf(J->info->why, sizeof J->info->why, "the closure on disk in %.150s: level %d's "
                     "incoming file is damaged", dk->dir, m);
            e = CLOS_OOM;
        }
    }
    if (e == CLOS_TOO_BIG)
        cm_refuse(J, m, c->n, c->refused, "hold its seeds");
    const uint64_t rmax = env->round_max ? env->round_max : (uint64_t)1 << 14;
    uint64_t a = 0, inl = 0, rounds = 0;
    for (;; rounds++) {
        uint64_t x[3] = {e == CLOS_OK ? c->n - a : 0, clos_stopped(env), e != CLOS_OK || J->et.oom};
        cm_reduce(J, x, 3, MPI_SUM);
        if (x[2]) { /* some rank failed: its reason on every rank */
            if (e == CLOS_OK && J->et.oom) {
                snprintf(J->info->why, sizeof J->info->why, "level %d across ranks, rank %d: out "
                         "of memory", m, J->M.rank);
                e = CLOS_OOM;
            }
            cm_threads_free(et, ts, T, R);
            return cm_agree(J, e);
        }
        if (x[1]) {
            cm_threads_free(et, ts, T, R);
            return CLOS_STOPPED;
        }
        if (!x[0])
            break;
        uint64_t r = c->n - a < rmax ? c->n - a : rmax;
        if (r) {
            double deg = a ? (double)inl / (double)a : (double)slots;
            double need = dk_need(c, env, c->n, deg);
            if (clos_over(c, env, need)) {
                cm_refuse(J, m, c->n, need, "hold it and solve it");
                e = CLOS_TOO_BIG;
            } else if ((e = cm_room(J, r * slots)) == CLOS_TOO_BIG) {
                cm_refuse(J, m, c->n, c->refused, "hold it while it is expanded");
            }
        }
        if (e == CLOS_OK)
            cm_expand_round(J, m, a, a + r, T, et, ts);
        inl = J->et.inl;
        for (int t = 0; et && t < T; t++)
            inl += et[t].inl;
        if (rounds == 1)
            tbm_test_kill(&J->M, m, 'd'); /* (tests: SOW_MPI_TEST_KILL=RANK:LEVEL:d) */
        a += r;
        uint64_t *rv;
        size_t nr;
        cm_exchange(J, &rv, &nr, NULL);
        if (e == CLOS_OK)
            e = cm_take(J, m, rv, nr);
        free(rv);
    }
    /* the threads' exits still buffered, appended before the level's end */
    for (int t = 0; et && t < T; t++)
        for (int l = 0; l < m; l++)
            if (et[t].nb[l]) {
                dk_flush(c, l, et[t].buf[l], et[t].nb[l]);
                et[t].nb[l] = 0;
            }
    cm_threads_free(et, ts, T, R);
    cm_release(J);
    e = cm_agree(J, cm_down_done(J, m, a, inl));
    if (e != CLOS_OK)
        return e;
    uint64_t g[2] = {dk->st.cnt[m], incoming};
    cm_reduce(J, g, 2, MPI_SUM);
    J->gcnt[m] = g[0];
    double dt = util_now() - t0;
    clos_say(env, &J->last, true,
             "closure on disk across %d ranks, level %d expanded: %llu positions (%llu incoming, "
             "%llu rounds), %.2f M/s; this rank's share %llu", J->M.size, m,
             (unsigned long long)g[0], (unsigned long long)(m == J->top ? 1 : g[1]),
             (unsigned long long)rounds, dt > 0 ? (double)g[0] / dt / 1e6 : 0.0,
             (unsigned long long)dk->st.cnt[m]);
    return CLOS_OK;
}

/* ---- up ---- */

/* What the up pass holds on this rank for one level. */
struct cm_up {
    int m;
    uint64_t n;
    int16_t *be;          /* best exit so far (int: exits reach 2m), then clamped */
    uint8_t *cnt;         /* in-level moves, counted down by the retrograde */
    struct cm_buf *pend;  /* [size]: (p << 16 | gain) of each exit asked of rank r, in order */
    struct cm_buf edges;  /* pairs (own target, global predecessor) */
    bool missing;         /* a child not in the closure (cannot happen) */
};

/* Where cm_moves puts what it finds: the rank's own buffers (one thread),
 * or a thread's, appended to them in thread order after the batch (the
 * threads take contiguous ranges, so the words are in the one thread's
 * order: the answers come back in the order asked). */
struct cm_sink {
    struct sow_movelist ml;
    struct sow_relay_cache *cache;
    struct cm_buf *send, *pend; /* [size] each */
    struct cm_buf *edges;
    bool oom, missing;
};

/* Own position p's moves: be and cnt, exits looked up (own ones at once,
 * others asked), in-level edges told to their targets' owners. */
static void cm_moves(const struct cm *J, struct cm_up *U, struct cm_sink *S, uint64_t p)
{
    const struct clos *c = J->c;
    const struct clos_env *env = J->env;
    const struct ruleset *rs = c->rs;
    const int K = c->K, me = J->M.rank, R = J->M.size, m = U->m;
    struct sow_movelist *ml = &S->ml;
    sow_position pos;
    clos_unpack(rs, K, &c->key[p * K], &pos);
    rs->generate(rs, &pos, ml, S->cache, NULL);
    U->be[p] = RETRO_NONE_EXIT;
    U->cnt[p] = 0;
    if (ml->n > c->slots) { /* more moves than slots: cannot happen with the rule sets */
        S->missing = true;
        return;
    }
    int b = retro_be_start(ml), deg = 0;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        const int cap = retro_taken(ch), d = retro_gain(ch);
        uint64_t w[MAX_KEY_WORDS + 2];
        if (cap) {
            int tv, l = m - cap;
            if (tb_exit(env, J->tbmax, ch, l, &tv)) {
                if (d - tv > b)
                    b = d - tv;
                continue;
            }
            w[0] = (uint64_t)l;
            clos_pack(rs, K, &ch->pos, w + 1);
            int o = cm_owner(w + 1, K, R);
            if (o == me) {
                int64_t q = dk_find(c, l, w + 1);
                if (q < 0)
                    S->missing = true;
                else if (d - dk_value(c, l, q) > b)
                    b = d - dk_value(c, l, q);
                continue;
            }
            uint64_t pd = p << 16 | (uint16_t)(int16_t)d;
            if (!cm_push(&S->send[o], w, (size_t)K + 1) || !cm_push(&S->pend[o], &pd, 1))
                S->oom = true;
            continue;
        }
        deg++;
        w[0] = CM_KIND_EDGE | (uint64_t)m;
        clos_pack(rs, K, &ch->pos, w + 1);
        int o = cm_owner(w + 1, K, R);
        w[K + 1] = (uint64_t)me << 32 | p;
        if (o == me) {
            int64_t q = clos_key_find(c->key, U->n, w + 1, K);
            uint64_t e2[2] = {(uint64_t)q, w[K + 1]};
            if (q < 0)
                S->missing = true;
            else if (!cm_push(S->edges, e2, 2))
                S->oom = true;
        } else if (!cm_push(&S->send[o], w, (size_t)K + 2)) {
            S->oom = true;
        }
    }
    U->be[p] = (int16_t)b;
    U->cnt[p] = (uint8_t)deg;
}

/* A batch [a, b) of own positions' moves: on one thread into the rank's
 * buffers, or on T threads (contiguous ranges, each into its sink of
 * ts[1 .. T-1]; thread 0's range too) appended in thread order. */
static void cm_moves_batch(struct cm *J, struct cm_up *U, struct cm_sink *ts, int T, uint64_t a,
                           uint64_t b)
{
    const int R = J->M.size;
    if (a >= b) /* (every rank plays as many batches as the largest share) */
        return;
    if (T <= 1 || b - a < (J->env->par_min ? J->env->par_min : 64)) {
        struct cm_sink S = {.cache = J->env->cache[0], .send = J->send, .pend = U->pend,
                            .edges = &U->edges};
        for (uint64_t p = a; !S.oom && p < b; p++)
            cm_moves(J, U, &S, p);
        J->et.oom |= S.oom;
        U->missing |= S.missing;
        return;
    }
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 0; t < T; t++) {
        struct cm_sink *S = &ts[t];
        const uint64_t from = a + (b - a) * (uint64_t)t / (uint64_t)T;
        const uint64_t to = a + (b - a) * (uint64_t)(t + 1) / (uint64_t)T;
        for (uint64_t p = from; !S->oom && p < to; p++)
            cm_moves(J, U, S, p);
    }
    for (int t = 0; t < T; t++) {
        struct cm_sink *S = &ts[t];
        /* (| not ||: every buffer is emptied) */
        J->et.oom |= !cm_append(J->send, S->send, (size_t)R) |
                     !cm_append(U->pend, S->pend, (size_t)R) | !cm_append(&U->edges, S->edges, 1) |
                     S->oom;
        U->missing |= S->missing;
        S->oom = S->missing = false;
    }
}

/* The threads' sinks for the up pass (T of them; NULL: out of memory),
 * and their release. */
static void cm_sinks_free(const struct cm *J, struct cm_sink *ts, int T);

static struct cm_sink *cm_sinks(const struct cm *J, int T)
{
    const int R = J->M.size;
    struct cm_sink *ts = calloc((size_t)T, sizeof *ts);
    bool ok = ts != NULL;
    for (int t = 0; ok && t < T; t++) {
        ts[t].cache = J->env->cache[t];
        ts[t].send = calloc((size_t)R, sizeof(struct cm_buf));
        ts[t].pend = calloc((size_t)R, sizeof(struct cm_buf));
        ts[t].edges = calloc(1, sizeof(struct cm_buf));
        ok = ts[t].send && ts[t].pend && ts[t].edges;
    }
    if (!ok) {
        cm_sinks_free(J, ts, T);
        return NULL;
    }
    return ts;
}

static void cm_sinks_free(const struct cm *J, struct cm_sink *ts, int T)
{
    for (int t = 0; ts && t < T; t++) {
        cm_bufs_free(ts[t].send, (size_t)J->M.size);
        cm_bufs_free(ts[t].pend, (size_t)J->M.size);
        free(ts[t].send);
        free(ts[t].pend);
        if (ts[t].edges)
            free(ts[t].edges->v);
        free(ts[t].edges);
    }
    free(ts);
}

/* The in-level edges among a batch's messages, kept. */
static void cm_answer(struct cm *J, struct cm_up *U, const uint64_t *rv, size_t nr)
{
    struct clos *c = J->c;
    const size_t K = (size_t)c->K;
    for (size_t j = 0; j < nr;) {
        const uint64_t w0 = rv[j];
        if (w0 & CM_KIND_EDGE) {
            int64_t q = clos_key_find(c->key, U->n, &rv[j + 1], (int)K);
            uint64_t e2[2] = {(uint64_t)q, rv[j + 1 + K]};
            if (q < 0)
                U->missing = true;
            else if (!cm_push(&U->edges, e2, 2))
                J->et.oom = true;
            j += K + 2;
        } else {
            j += K + 1;
        }
    }
}

/* The look-ups among rv's words (from rank r: words [at[r], at[r + 1])),
 * answered into J->send[r]. */
static void cm_lookups(struct cm *J, const uint64_t *rv, const int *rcnt)
{
    struct clos *c = J->c;
    const size_t K = (size_t)c->K;
    size_t j = 0;
    for (int r = 0; r < J->M.size; r++) {
        const size_t end = j + (size_t)rcnt[r];
        for (; j < end;) {
            const uint64_t w0 = rv[j];
            if (w0 & CM_KIND_EDGE) {
                j += K + 2;
                continue;
            }
            int l = (int)(w0 & 0xFFFFFFFFu);
            int64_t q = dk_find(c, l, &rv[j + 1]);
            uint64_t v = q < 0 ? CM_MISSING : (uint64_t)(uint8_t)dk_value(c, l, q);
            if (!cm_push(&J->send[r], &v, 1))
                J->et.oom = true;
            j += K + 1;
        }
    }
}

/* The answers to this rank's look-ups (from rank r in the order asked)
 * folded into be. */
static void cm_fold(struct cm *J, struct cm_up *U, const uint64_t *rv, const int *rcnt)
{
    size_t j = 0;
    for (int r = 0; r < J->M.size; r++) {
        if ((size_t)rcnt[r] != U->pend[r].n) {
            U->missing = true;
            j += (size_t)rcnt[r];
            U->pend[r].n = 0;
            continue;
        }
        for (size_t i = 0; i < U->pend[r].n; i++, j++) {
            const uint64_t pd = U->pend[r].v[i];
            const uint64_t p = pd >> 16;
            const int d = (int16_t)(uint16_t)(pd & 0xFFFF);
            if (rv[j] == CM_MISSING) {
                U->missing = true;
                continue;
            }
            int val = d - (int8_t)(uint8_t)rv[j];
            if (val > U->be[p])
                U->be[p] = (int16_t)val;
        }
        U->pend[r].n = 0;
    }
}

/* Level m's share read back: the node arrays for it (the refusal if the
 * budget does not hold them), its keys from its file. */
static enum clos_err cm_up_load(struct cm *J, int m, uint64_t n)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    struct clos_disk *dk = c->dk;
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double need = dk_need_by(c, env, n, 0.0, false);
    if (clos_over(c, env, need)) {
        cm_refuse(J, m, n, need, "solve it");
        return CLOS_TOO_BIG;
    }
    if (2 * n + 1 >= UINT32_MAX) { /* the retrograde's copies are 32-bit (2p, 2p + 1) */
        snprintf(J->info->why, sizeof J->info->why, "level %d across %d ranks: rank %d's share "
                 "(%llu positions) is past 2^31: run more ranks", m, J->M.size, J->M.rank,
                 (unsigned long long)n);
        return CLOS_TOO_BIG;
    }
    dk_keys_only(c, false);
    enum clos_err e = clos_grow_nodes(c, env, n ? n : 1);
    if (e == CLOS_TOO_BIG)
        cm_refuse(J, m, n, c->refused, "solve it");
    if (e != CLOS_OK)
        return e;
    struct dk_lvl hd, want;
    dk_lvl_of(c, m, 0, &want);
    void *parts[2] = {&hd, c->key};
    uint64_t sizes[2] = {sizeof hd, n * 8 * (uint64_t)c->K};
    char name[64];
    snprintf(name, sizeof name, dk_fmt[0], m);
    if (!clos_ck_read(dk->dir, name, dk_magic[0], parts, sizes, 2) ||
        memcmp(&hd, &want, sizeof hd) != 0) {
        snprintf(J->info->why, sizeof J->info->why, "the closure on disk in %.150s: %s is damaged",
                 dk->dir, name);
        return CLOS_OOM;
    }
    c->n = n;
    return CLOS_OK;
}

/* The reverse edges of the share (roff[n + 1], rev: global predecessors)
 * from U->edges (freed). */
static bool cm_reverse(struct cm_up *U, uint64_t **roff, uint64_t **rev)
{
    const uint64_t n = U->n, ne = U->edges.n / 2;
    uint64_t *o = calloc(n + 2, sizeof *o), *v = malloc((ne + 1) * sizeof *v);
    if (!o || !v) {
        free(o);
        free(v);
        return false;
    }
    for (uint64_t j = 0; j < ne; j++)
        o[U->edges.v[2 * j] + 1]++;
    for (uint64_t p = 0; p < n; p++)
        o[p + 1] += o[p];
    for (uint64_t j = 0; j < ne; j++)
        v[o[U->edges.v[2 * j]]++] = U->edges.v[2 * j + 1];
    for (uint64_t p = n; p > 0; p--)
        o[p] = o[p - 1];
    o[0] = 0;
    free(U->edges.v);
    U->edges = (struct cm_buf){0};
    *roff = o;
    *rev = v;
    return true;
}

/* The share's retrograde across the ranks (closure_rounds.c with
 * clos_ranks): updates for other ranks' copies queued in J->send, and
 * every superstep and round agreed with MPI_Allreduce. */
struct cm_rx {
    struct cm *J;
    struct cm_buf *ts; /* [threads * ranks]: thread th's words for rank o at th * ranks + o */
    int threads;
    bool any_fail;     /* a rank failed (agreed) */
};

static bool cmr_send(void *ctx, int th, int o, uint64_t w)
{
    struct cm_rx *X = ctx;
    return cm_push(&X->ts[(size_t)th * (size_t)X->J->M.size + (size_t)o], &w, 1);
}

/* The threads' queues appended to J->send by rank; false: out of memory. */
static bool cmr_gather(struct cm_rx *X)
{
    const size_t R = (size_t)X->J->M.size;
    bool ok = true;
    for (int th = 0; th < X->threads; th++)
        ok &= cm_append(X->J->send, &X->ts[(size_t)th * R], R);
    return ok;
}

/* The stop and the failures agreed; true if either. */
static bool cmr_stopped(void *ctx, bool fail)
{
    struct cm_rx *X = ctx;
    uint64_t x[2] = {clos_stopped(X->J->env), fail};
    cm_reduce(X->J, x, 2, MPI_SUM);
    X->any_fail |= x[1] != 0;
    return x[0] || x[1];
}

static int cmr_superstep(void *ctx, bool fail, uint64_t **in, size_t *nin)
{
    struct cm_rx *X = ctx;
    struct cm *J = X->J;
    fail = !cmr_gather(X) || fail;
    uint64_t x[3] = {0, clos_stopped(J->env), fail};
    for (int r = 0; r < J->M.size; r++)
        x[0] += J->send[r].n;
    cm_reduce(J, x, 3, MPI_SUM);
    if (x[1] || x[2]) {
        for (int r = 0; r < J->M.size; r++)
            J->send[r].n = 0;
        X->any_fail |= x[2] != 0;
        return -1;
    }
    if (!x[0])
        return 0; /* every queue drained, nothing sent: the round is done */
    cm_exchange(J, in, nin, NULL);
    return 1;
}

static void cmr_sum(void *ctx, uint64_t *x, int n)
{
    cm_reduce(((struct cm_rx *)ctx)->J, x, n, MPI_SUM);
}

static enum clos_err cm_retro(struct cm *J, int m, uint64_t n, int8_t *be, uint8_t *cnt,
                              const uint64_t *roff, const uint64_t *rev)
{
    const int T = J->env->threads > 1 ? J->env->threads : 1;
    struct cm_rx X = {.J = J, .threads = T, .ts = calloc((size_t)T * (size_t)J->M.size,
                                                         sizeof(struct cm_buf))};
    const struct clos_ranks rk = {.ctx = &X,
                                  .me = J->M.rank,
                                  .roff = roff,
                                  .rev = rev,
                                  .send = cmr_send,
                                  .superstep = cmr_superstep,
                                  .stopped = cmr_stopped,
                                  .sum = cmr_sum};
    struct level_work w = {.be = be, .cnt = cnt, .nl = n};
    enum clos_err e = CLOS_OOM;
    if (X.ts && clos_retro_alloc(&w, n, true))
        e = clos_retro(J->c, J->env, m, 0, n, &w, &rk);
    else
        cmr_stopped(&X, true); /* the first agreement clos_retro makes */
    cm_bufs_free(X.ts, (size_t)T * (size_t)J->M.size);
    free(X.ts);
    free(w.order);
    free(w.pend);
    free(w.pdirty);
    if (e == CLOS_STOPPED && !X.any_fail)
        return CLOS_STOPPED;
    if (e == CLOS_OOM)
        snprintf(J->info->why, sizeof J->info->why, "level %d across ranks, rank %d: "
                 "out of memory in the retrograde", m, J->M.rank);
    return X.any_fail || e != CLOS_OK ? cm_agree(J, e == CLOS_OOM ? CLOS_OOM : CLOS_OK) : CLOS_OK;
}

/* Level m's share solved: V, its values file, both files mapped, the state. */
static enum clos_err cm_up_done(struct cm *J, int m, uint64_t n)
{
    struct clos *c = J->c;
    struct clos_disk *dk = c->dk;
    clos_level_values(c, 0, n, c->key, 1);
    if (dk_values_write(c, J->env, m, n)) {
        snprintf(J->info->why, sizeof J->info->why, "the closure on disk, level %d, rank %d: %.200s",
                 m, J->M.rank, dk->err.msg[0] ? dk->err.msg : "cannot map its files");
        return CLOS_OOM;
    }
    return CLOS_OK;
}

enum clos_err cm_up(struct cm *J, int m)
{
    struct clos *c = J->c;
    struct clos_disk *dk = c->dk;
    const double t0 = util_now();
    const uint64_t n = dk->st.cnt[m];
    J->et.oom = false;
    struct cm_up U = {.m = m, .n = n};
    enum clos_err e = cm_agree(J, cm_up_load(J, m, n));
    if (e != CLOS_OK)
        return e;
    U.be = malloc(sizeof *U.be * (n + 1));
    U.cnt = malloc(n + 1);
    U.pend = calloc((size_t)J->M.size, sizeof *U.pend);
    int *rcnt = malloc(sizeof *rcnt * (size_t)J->M.size);
    const int T = J->env->threads > 1 ? J->env->threads : 1;
    struct cm_sink *ts = T > 1 ? cm_sinks(J, T) : NULL;
    if (!U.be || !U.cnt || !U.pend || !rcnt || (T > 1 && !ts))
        J->et.oom = true;
    uint64_t pieces = J->et.oom ? 0 : (n + J->piece - 1) / J->piece;
    cm_reduce(J, &pieces, 1, MPI_MAX);
    for (uint64_t k = 0; k < pieces; k++) {
        uint64_t stop = clos_stopped(J->env);
        cm_reduce(J, &stop, 1, MPI_SUM);
        if (stop) { /* every rank at once: a rerun solves the level again */
            e = CLOS_STOPPED;
            break;
        }
        const uint64_t a = k * J->piece, b = a + J->piece < n ? a + J->piece : n;
        if (!J->et.oom)
            cm_moves_batch(J, &U, ts, T, a, b);
        uint64_t *rv, *rv2;
        size_t nr, nr2;
        cm_exchange(J, &rv, &nr, rcnt);
        cm_answer(J, &U, rv, nr);
        cm_lookups(J, rv, rcnt);
        free(rv);
        cm_exchange(J, &rv2, &nr2, rcnt);
        cm_fold(J, &U, rv2, rcnt);
        free(rv2);
    }
    if (e != CLOS_OK) {
        /* stopped */
    } else if (U.missing) {
        snprintf(J->info->why, sizeof J->info->why, "level %d on disk across ranks: a child is "
                 "missing (%.150s)", m, dk->dir);
        e = CLOS_OOM;
    } else if (J->et.oom) {
        snprintf(J->info->why, sizeof J->info->why, "level %d across ranks: out of memory", m);
        e = CLOS_OOM;
    }
    uint64_t *roff = NULL, *rev = NULL;
    const uint64_t ne = U.edges.n / 2;
    if (e == CLOS_OK) {
        double need = clos_arrays_bytes(c, c->cap, 0) + 3.0 * (double)n + 8.0 * (double)n +
                      24.0 * (double)ne;
        if (clos_over(c, J->env, need)) {
            cm_refuse(J, m, n, need, "solve it with its reverse edges");
            e = CLOS_TOO_BIG;
        } else {
            clos_note_peak(c, need);
        }
    }
    if (e == CLOS_OK && !cm_reverse(&U, &roff, &rev)) {
        snprintf(J->info->why, sizeof J->info->why, "level %d across ranks: out of memory", m);
        e = CLOS_OOM;
    }
    int8_t *be8 = e == CLOS_OK ? malloc(n + 1) : NULL;
    if (e == CLOS_OK && !be8)
        e = CLOS_OOM;
    for (uint64_t p = 0; e == CLOS_OK && p < n; p++) {
        int b = U.be[p];
        be8[p] = (int8_t)(b == RETRO_NONE_EXIT ? b : b < -m ? -m : b > m ? m : b);
    }
    e = cm_agree(J, e);
    tbm_test_kill(&J->M, m, 'u'); /* (tests: SOW_MPI_TEST_KILL=RANK:LEVEL:u) */
    if (e == CLOS_OK)
        e = cm_retro(J, m, n, be8, U.cnt, roff, rev);
    free(be8);
    free(roff);
    free(rev);
    free(U.be);
    free(U.cnt);
    free(U.edges.v);
    for (int r = 0; U.pend && r < J->M.size; r++)
        free(U.pend[r].v);
    free(U.pend);
    free(rcnt);
    cm_sinks_free(J, ts, T);
    cm_release(J);
    if (e != CLOS_OK)
        return e;
    e = cm_agree(J, cm_up_done(J, m, n));
    if (e != CLOS_OK)
        return e;
    uint64_t g[2] = {ne, 0};
    cm_reduce(J, g, 1, MPI_SUM);
    double dt = util_now() - t0;
    clos_say(J->env, &J->last, true,
             "closure on disk across %d ranks, level %d solved: %llu positions, %llu in-level "
             "moves, %.2f M/s", J->M.size, m, (unsigned long long)J->gcnt[m],
             (unsigned long long)g[0], dt > 0 ? (double)J->gcnt[m] / dt / 1e6 : 0.0);
    return CLOS_OK;
}
