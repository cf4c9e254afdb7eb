/* The closure on disk, pass 2 (closure_disk.c): up from the lowest level,
 * each level's moves generated again from its keys read back, exits looked
 * up in the lower levels' files, the same retrograde as in memory
 * (closure_retro.c), lo, hi, V written to disk-LLL.values.  Part of the
 * closure solver: closure_internal.h maps its files. */
#include "closure_internal.h"

/* V of level m's n nodes, their bounds solved: the keys read back from
 * disk-LLL.keys in blocks, checked against its checksum as they go (a
 * mismatch: *damaged, nothing kept). */
static enum clos_err dk_values(struct clos *c, int m, uint64_t n, bool *damaged)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t B = (uint64_t)1 << 16;
    char path[4200];
    dk_path(path, sizeof path, dk, dk_fmt[0], m);
    uint64_t *buf = malloc(8 * (size_t)K * B);
    XXH3_state_t *xs = XXH3_createState();
    FILE *f = clos_fopen_in(path);
    if (!buf || !xs) {
        free(buf);
        XXH3_freeState(xs);
        if (f)
            fclose(f);
        return CLOS_OOM;
    }
    uint8_t h[CK_HEAD];
    struct dk_lvl hd, want;
    dk_lvl_of(c, m, 0, &want);
    uint64_t sum = 0;
    bool ok = f && fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&hd, sizeof hd, 1, f) == 1 &&
              memcmp(&hd, &want, sizeof hd) == 0;
    if (ok) {
        memcpy(&sum, h + 16, 8);
        XXH3_64bits_reset(xs);
        XXH3_64bits_update(xs, &hd, sizeof hd);
    }
    for (uint64_t a = 0; ok && a < n; a += B) {
        uint64_t cnt = n - a < B ? n - a : B;
        ok = fread(buf, 8 * (size_t)K, (size_t)cnt, f) == (size_t)cnt;
        if (ok) {
            XXH3_64bits_update(xs, buf, 8 * (size_t)K * (size_t)cnt);
            clos_level_values(c, a, cnt, buf, 1);
        }
    }
    ok = ok && fgetc(f) == EOF && XXH3_64bits_digest(xs) == sum;
    if (f)
        fclose(f);
    XXH3_freeState(xs);
    free(buf);
    *damaged = !ok;
    return CLOS_OK;
}

static enum clos_err dk_up_done(struct clos *c, const struct clos_env *env, int m,
                                struct clos_info *info, double t0, uint64_t *done,
                                uint64_t resumed);

/* dk_up's start, level m's n keys: the arrays for them if the budget
 * lets them (the refusal in info if not), the keys read back.  *bad: the
 * keys file failed its check. */
static enum clos_err dk_up_load(struct clos *c, const struct clos_env *env, int m,
                                struct clos_info *info, double *need, bool *bad)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t n = dk->st.cnt[m];
    /* everything but the reverse edges first; those once counted */
    *need = dk_need(c, env, n, 0.0);
    enum clos_err e = CLOS_TOO_BIG;
    if (!clos_over(c, env, *need) && 2 * n + 1 < INT32_MAX) {
        free(c->set);
        c->set = NULL;
        c->scap = 0;
        dk_keys_only(c, false);
        e = clos_grow_nodes(c, env, n); /* it may refuse what dk_need let through */
    }
    if (e == CLOS_TOO_BIG) {
        if (c->refused > *need)
            *need = c->refused;
        info->by_memory = true;
        info->need = *need;
        struct util_gb2 g = util_gb2(*need, env->memory);
        snprintf(info->why, sizeof info->why,
                 "level %d, on disk, holds %llu positions: solving it in memory needs %s GB%s, "
                 "the budget is %s GB: raise --memory", m, (unsigned long long)n, g.need,
                 c->um ? "" : " and 4 bytes per in-level move", g.budget);
        return CLOS_TOO_BIG;
    }
    if (e != CLOS_OK)
        return e;
    struct dk_lvl hd, want;
    dk_lvl_of(c, m, 0, &want);
    void *parts[2] = {&hd, c->key};
    uint64_t sizes[2] = {sizeof hd, n * 8 * (uint64_t)K};
    char name[64];
    snprintf(name, sizeof name, dk_fmt[0], m);
    if (!clos_ck_read(dk->dir, name, dk_magic[0], parts, sizes, 2) ||
        memcmp(&hd, &want, sizeof hd) != 0)
        *bad = true;
    return CLOS_OK;
}

/* dk_up by unmoves (no reverse edges), w's moves counted: the keys stay
 * for the unmoves' look-ups, the seeds are scans of be, and the stacks are
 * short, the copies past them waiting in a bitmap.  Frees w. */
static enum clos_err dk_up_unmoves(struct clos *c, const struct clos_env *env, int m,
                                   struct level_work *w, double need, struct clos_info *info,
                                   double t0, uint64_t *done, uint64_t resumed)
{
    const uint64_t n = c->n;
    enum clos_err e = CLOS_OK;
    clos_note_peak(c, need);
    w->stack = env->um_stack ? env->um_stack : n / 16 + 4096;
    if (!clos_retro_alloc(w, n, false))
        e = CLOS_OOM;
    if (e == CLOS_OK)
        e = clos_retro(c, env, m, 0, n, w, NULL);
    if (e == CLOS_OK)
        clos_level_values(c, 0, n, c->key, env->threads);
    clos_free_work(w);
    if (e != CLOS_OK)
        return e;
    return dk_up_done(c, env, m, info, t0, done, resumed);
}

/* Pass 2, level m: read back, moves again, retrograde, values file.  The
 * moves are generated twice, once to count each node's in-level
 * predecessors and once to list them (no forward slots), the buckets are
 * scans (no links), and the keys are freed for the retrograde (V reads them
 * back: dk_values): dk_work_per.  *damaged: its keys file failed its check. */
enum clos_err dk_up(struct clos *c, const struct clos_env *env, int tbmax, int m,
                    bool *damaged, struct clos_info *info, double t0, uint64_t *done,
                    uint64_t resumed)
{
    struct clos_disk *dk = c->dk;
    const uint64_t n = dk->st.cnt[m];
    double need;
    bool bad = false;
    enum clos_err e = dk_up_load(c, env, m, info, &need, &bad);
    if (e != CLOS_OK)
        return e;
    if (bad) {
        *damaged = true;
        return CLOS_OK;
    }
    c->n = n; /* no set: level_moves finds in-level children in the sorted keys */
    struct level_work w = {0};
    w.be = malloc(n + 1);
    w.cnt = malloc(n + 1);
    /* Predecessors: reverse edges where they fit the budget (their lists
     * are read where unmoves cost look-ups: darra's retrograde took 1.5x
     * as long by unmoves), else, single sowing, unmoves.  The edges are
     * counted (roff, 4 bytes a position) if even none would fit beside
     * the rest. */
    bool um = c->um;
    const bool try_edges =
        !um || (!env->unmoves_only && !clos_over_budget(env, dk_need_by(c, env, n, 0.0, false)));
    if (try_edges)
        w.roff = calloc((size_t)n + 1, sizeof *w.roff);
    w.nl = n;
    bool missing = false;
    if (!w.be || !w.cnt || (try_edges && !w.roff))
        e = CLOS_OOM;
    if (e == CLOS_OK && !clos_level_moves_all(c, env, m, 0, n, tbmax, &w, &missing, LM_COUNT))
        e = CLOS_STOPPED;
    uint64_t edges = 0;
    for (uint64_t p = 0; e == CLOS_OK && p < n; p++)
        edges += w.cnt[p];
    if (e == CLOS_OK && missing) { /* a child not in the closure: cannot happen */
        snprintf(info->why, sizeof info->why, "level %d on disk: a child is missing (%.150s)", m,
                 dk->dir);
        e = CLOS_OOM;
    }
    const double deg = n ? (double)edges / (double)n : 0.0;
    const double need_edges = dk_need_by(c, env, n, deg, false);
    if (um && try_edges && !clos_over_budget(env, need_edges) && edges < UINT32_MAX) {
        um = false;
    } else if (um) {
        free(w.roff);
        w.roff = NULL;
    }
    if (e == CLOS_OK && um)
        return dk_up_unmoves(c, env, m, &w, need, info, t0, done, resumed);
    need = need_edges;
    if (e == CLOS_OK && (clos_over(c, env, need) || edges >= UINT32_MAX)) {
        info->by_memory = true;
        info->need = need;
        struct util_gb2 g = util_gb2(need, env->memory);
        snprintf(info->why, sizeof info->why,
                 "level %d, on disk, holds %llu positions and %llu in-level moves: solving it in "
                 "memory needs %s GB, the budget is %s GB: raise --memory", m,
                 (unsigned long long)n, (unsigned long long)edges, g.need, g.budget);
        e = CLOS_TOO_BIG;
    }
    if (e == CLOS_OK) {
        clos_note_peak(c, need);
        clos_roff_sum(w.roff, n);
        w.rev = malloc(sizeof *w.rev * (size_t)(edges + 1));
        if (!w.rev)
            e = CLOS_OOM;
    }
    if (e == CLOS_OK && !clos_level_moves_all(c, env, m, 0, n, tbmax, &w, &missing, LM_FILL))
        e = CLOS_STOPPED;
    if (e == CLOS_OK) {
        clos_roff_back(w.roff, n);
        /* the retrograde needs no keys: its stack takes their place, and V
         * reads them back from the level's file (dk_values) */
        clos_keys_free(c);
        c->cap = 0;
        w.stack = env->um_stack;
        if (!clos_retro_alloc(&w, n, true))
            e = CLOS_OOM;
    }
    if (e == CLOS_OK)
        e = clos_retro(c, env, m, 0, n, &w, NULL);
    clos_free_work(&w);
    if (e == CLOS_OK)
        e = dk_values(c, m, n, damaged);
    if (e != CLOS_OK || *damaged)
        return e;
    return dk_up_done(c, env, m, info, t0, done, resumed);
}

int dk_values_write(struct clos *c, const struct clos_env *env, int m, uint64_t n)
{
    struct clos_disk *dk = c->dk;
    struct dk_lvl hd;
    char name[64];
    dk_lvl_of(c, m, 1, &hd);
    const void *vp[4] = {&hd, c->lo, c->hi, c->v};
    uint64_t vs[4] = {sizeof hd, n, n, n};
    snprintf(name, sizeof name, dk_fmt[1], m);
    dk->st.solved_to = m;
    if (!clos_ck_write_e(dk->dir, name, dk_magic[1], vp, vs, 4, &dk->err))
        return 1;
    if (!dk_map(c, m, 0, false) || !dk_map(c, m, 1, false))
        return 2;
    return dk_save_state(c, env) ? 0 : 1;
}

/* dk_up's end, level m's lo, hi, V found: its values file, both files
 * mapped, the state, the progress line. */
static enum clos_err dk_up_done(struct clos *c, const struct clos_env *env, int m,
                                struct clos_info *info, double t0, uint64_t *done,
                                uint64_t resumed)
{
    struct clos_disk *dk = c->dk;
    const uint64_t n = dk->st.cnt[m];
    int r = dk_values_write(c, env, m, n);
    if (r) {
        if (r == 2)
            snprintf(info->why, sizeof info->why, "cannot map level %d's files in %.150s", m,
                     dk->dir);
        else
            snprintf(info->why, sizeof info->why, "the closure on disk, level %d: %.200s", m,
                     dk->err.msg);
        return CLOS_OOM;
    }
    *done += n;
    uint64_t total = dk_total(c);
    double dt = util_now() - t0, rate = dt > 0 ? (double)(*done - resumed) / dt : 0;
    double l0 = 0;
    clos_say(env, &l0, true,
             "closure on disk, level %d solved: %llu positions, %llu of %llu done, %.2f M/s, ETA %.0f s",
             m, (unsigned long long)n, (unsigned long long)*done, (unsigned long long)total,
             rate / 1e6, rate > 0 ? (double)(total - *done) / rate : 0.0);
    return CLOS_OK;
}
