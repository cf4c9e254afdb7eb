/* The closure on disk, pass 1 (closure_disk.c): down from the root's level,
 * each level seeded from its incoming file, expanded in rounds, its exits
 * appended to the lower levels' incoming files, its keys sorted into
 * disk-LLL.keys; the cursor that resumes a level between two rounds.  Part
 * of the closure solver: closure_internal.h maps its files. */
#include <errno.h>

#include "closure_internal.h"
#include "fileio.h"

static double dk_deg(const struct clos *c, const struct dk_thread *et, int nt, uint64_t a);

/* The exits still buffered by every thread, then every incoming file synced. */
static void dk_flush_all(struct clos *c, int m, struct dk_thread *et, int nt)
{
    for (int t = 0; t < nt; t++)
        for (int l = 0; l < m; l++)
            if (et[t].nb[l]) {
                dk_flush(c, l, et[t].buf[l], et[t].nb[l]);
                et[t].nb[l] = 0;
            }
    dk_close_in(c->dk, true);
}

static bool dk_save_cur(struct clos *c, const struct clos_env *env, int m, uint64_t a,
                        struct dk_thread *et, int nt)
{
    struct clos_disk *dk = c->dk;
    dk_flush_all(c, m, et, nt);
    if (dk->ioerr)
        return false;
    struct dk_cur cur;
    memset(&cur, 0, sizeof cur);
    uint64_t x[3];
    dk_sums(env, x);
    cur.level = m;
    cur.n = c->n;
    cur.a = a;
    if (a > dk->askip) {
        double deg = dk_deg(c, et, nt, a) * 1e6 + 0.5;
        cur.deg_ppm = deg >= 1 && deg < 4e9 ? (uint32_t)deg : 0;
    }
    cur.nodes = x[0] - dk->base[0];
    cur.visits = x[1] - dk->base[1];
    cur.tb_hits = x[2] - dk->base[2];
    memcpy(cur.root, dk->st.root, sizeof cur.root);
    memcpy(cur.inlen, dk->st.inlen, sizeof cur.inlen);
    const void *parts[2] = {&cur, c->key};
    uint64_t sizes[2] = {sizeof cur, c->n * 8 * (uint64_t)c->K};
    return clos_ck_write(dk->dir, "disk-cur.keys", "SOWDKC01", parts, sizes, 2);
}

/* The saved part of level m's expansion into c (keys, n) and *cur, if it
 * is this solve's: *have; none: neither flag; damaged or another level's:
 * *bad.  A node array for it that the budget refuses is a refusal
 * (CLOS_TOO_BIG, the file kept for a rerun with more memory), not damage. */
enum clos_err dk_load_cur(struct clos *c, const struct clos_env *env, int m,
                          struct dk_cur *cur, bool *have, bool *bad)
{
    struct clos_disk *dk = c->dk;
    char path[4200];
    snprintf(path, sizeof path, "%s/disk-cur.keys", dk->dir);
    FILE *f = clos_fopen_in(path);
    *have = *bad = false;
    if (!f)
        return CLOS_OK;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(cur, 1, sizeof *cur, f) == sizeof *cur;
    fclose(f);
    ok = ok && cur->level == m && memcmp(cur->root, dk->st.root, sizeof cur->root) == 0 &&
         cur->n > 0 && cur->n <= MAX_NODES && cur->a <= cur->n;
    if (ok) {
        enum clos_err e = clos_grow_nodes(c, env, cur->n);
        if (e != CLOS_OK)
            return e;
    }
    struct dk_cur again;
    void *parts[2] = {&again, c->key};
    uint64_t sizes[2] = {sizeof again, ok ? cur->n * 8 * (uint64_t)c->K : 0};
    ok = ok && clos_ck_read(dk->dir, "disk-cur.keys", "SOWDKC01", parts, sizes, 2) &&
         memcmp(&again, cur, sizeof again) == 0;
    *bad = !ok;
    *have = ok;
    if (ok)
        c->n = cur->n;
    return CLOS_OK;
}

/* Append cnt keys exiting to level l as one block of its incoming file. */
void dk_flush(struct clos *c, int l, const uint64_t *keys, uint64_t cnt)
{
    struct clos_disk *dk = c->dk;
    const size_t kb = 8 * (size_t)c->K;
    uint64_t h[2] = {cnt, XXH3_64bits(keys, kb * (size_t)cnt)};
#pragma omp critical(sow_dk_in)
    {
        if (!dk->in[l]) {
            char path[4200];
            dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
            struct sow_error fe;
            dk->in[l] = fio_open_log(path, false, &fe);
        }
        if (!dk->in[l] || fwrite(h, 8, 2, dk->in[l]) != 2 ||
            fwrite(keys, kb, (size_t)cnt, dk->in[l]) != (size_t)cnt)
            dk_in_failed(dk, l, errno);
        else
            dk->st.inlen[l] += 16 + kb * cnt;
    }
}

/* The next block dk_flush appended to an incoming file: its count into *n,
 * its keys into buf (room for DK_BUF).  left: the file's bytes not yet read
 * of those its state records, less this block's.  false: the block is short,
 * past left, or fails its checksum. */
bool dk_read_block(FILE *f, int K, uint64_t *left, uint64_t *buf, uint64_t *n)
{
    const size_t kb = 8 * (size_t)K;
    uint64_t h[2];
    if (*left < 16 || fread(h, 8, 2, f) != 2 || h[0] == 0 || h[0] > DK_BUF ||
        *left - 16 < h[0] * kb || fread(buf, kb, (size_t)h[0], f) != (size_t)h[0] ||
        XXH3_64bits(buf, kb * (size_t)h[0]) != h[1])
        return false;
    *left -= 16 + kb * h[0];
    *n = h[0];
    return true;
}

/* Expand node i of level m: in-level children into the set, exits buffered
 * for their levels' incoming files. */
static inline void dk_expand(struct clos *c, const struct clos_env *env, uint64_t i, int tid,
                             int tbmax, int m, bool par, struct dk_thread *et)
{
    const struct ruleset *rs = c->rs;
    const int K = c->K;
    sow_position p;
    struct sow_movelist *ml = &et->ml;
    clos_unpack(rs, K, &c->key[i * K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    env->nodes[tid]++;
    env->visits[tid] += (uint64_t)ml->n;
    uint64_t w[SOW_MAX_PITS + 1][MAX_KEY_WORDS], h[SOW_MAX_PITS + 1];
    int nk = 0;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int cl = m - retro_taken(ch), tv;
        if (tb_exit(env, tbmax, ch, cl, &tv)) {
            if (cl <= env->tb_hits_max)
                env->tb_hits[tid]++;
            continue;
        }
        if (cl == m) {
            clos_pack(rs, K, &ch->pos, w[nk]);
            h[nk] = clos_hash(w[nk], K);
            set_prefetch(c, h[nk]);
            nk++;
            continue;
        }
        if (!et->buf[cl] && !(et->buf[cl] = malloc(8 * (size_t)K * DK_BUF))) {
            et->oom = true;
            continue;
        }
        clos_pack(rs, K, &ch->pos, &et->buf[cl][(uint64_t)et->nb[cl] * K]);
        if (++et->nb[cl] == DK_BUF) {
            dk_flush(c, cl, et->buf[cl], DK_BUF);
            et->nb[cl] = 0;
        }
    }
    et->inl += (uint64_t)nk;
    for (int k = 0; k < nk; k++) {
        bool added;
        set_insert(c, w[k], h[k], par, &added);
    }
}

/* Add a seed key to level m's set (one thread). */
/* The set of a level on disk grown 1.5x, to at least least cells; near the
 * budget to the set of the largest level it holds while expanded (dk_most)
 * if that is more than least, so that the budget bounds the level, not the
 * step. */
enum clos_err dk_grow_set(struct clos *c, const struct clos_env *env, uint64_t least)
{
    uint64_t ncap = c->scap * 3 / 2;
    if (ncap < least)
        ncap = least;
    /* never more than the set of the most positions whose keys fit beside
     * it: a larger one would take the room of the keys it is for; and near
     * the budget that set even when it is short of least, if it holds
     * another expansion's children (a level resumed near the budget has
     * its set rebuilt at its load, with no room to spare) */
    uint64_t fit = clos_set_cap_for(dk_most(c, env));
    if (env->memory > 0 && fit < ncap &&
        (fit >= least || (fit > c->scap && fit / LOAD_DEN * LOAD_NUM >= c->n + (uint64_t)c->slots)))
        ncap = fit;
    return clos_rebuild_set(c, env, ncap);
}

/* The set of a level resumed with c->n positions: the cells its first
 * growth would give it (dk_grow_set from the set at its load), so that it
 * is built once, not at its load and at once again (on jodu's level 48 at
 * 585 M positions each build took over a minute). */
static uint64_t dk_resume_cells(const struct clos *c, const struct clos_env *env)
{
    const uint64_t atload = clos_set_cap_for(c->n);
    const uint64_t least = clos_set_cap_for(c->n + 4096 * (uint64_t)c->slots);
    uint64_t ncap = atload * 3 / 2 > least ? atload * 3 / 2 : least;
    uint64_t fit = clos_set_cap_for(dk_most(c, env));
    if (env->memory > 0 && fit < ncap)
        ncap = fit;
    return ncap > atload ? ncap : atload;
}

enum clos_err dk_seed(struct clos *c, const struct clos_env *env, const uint64_t *w)
{
    enum clos_err e = clos_grow_nodes(c, env, c->n + 1);
    if (e == CLOS_OK && c->n + 1 > c->scap / LOAD_DEN * LOAD_NUM)
        e = dk_grow_set(c, env, clos_set_cap_for(c->n + 4096));
    if (e == CLOS_OK) {
        bool added;
        set_insert(c, w, clos_hash(w, c->K), false, &added);
    }
    return e;
}

/* The refusal of level m (positions found so far in info->level_count). */
void dk_refuse(struct clos *c, const struct clos_env *env, struct clos_info *info, int m,
               uint64_t expanded, double deg)
{
    uint64_t n = c->n;
    double need = dk_need(c, env, n, deg);
    if (c->refused > need) /* a growth of the arrays or the set, or the sort */
        need = c->refused;
    info->by_memory = true;
    info->need = need;
    info->next_est = n;
    memcpy(info->level_count, c->dk->st.cnt, sizeof info->level_count);
    info->level_count[m] = n;
    info->positions = dk_total(c) + n;
    struct util_gb2 g = util_gb2(need, env->memory);
    snprintf(info->why, sizeof info->why,
             "level %d, on disk, reached %llu positions (%llu expanded): holding and solving it "
             "in memory needs %s GB, the budget is %s GB: raise --memory, or solve more "
             "levels first",
             m, (unsigned long long)n, (unsigned long long)expanded, g.need, g.budget);
}

/* In-level moves a position of the level's nodes [0, a) expanded: this
 * run's and, resumed, those before it (dk->inl0), or, where disk-cur.keys
 * did not record them, this run's alone (dk->askip); before any, the bound
 * (slots). */
static double dk_deg(const struct clos *c, const struct dk_thread *et, int nt, uint64_t a)
{
    double s = c->dk->inl0;
    for (int t = 0; t < nt; t++)
        s += (double)et[t].inl;
    uint64_t e = a - c->dk->askip;
    return e ? s / (double)e : (double)c->slots;
}

/* Level m's seeds from its incoming file into the set; incoming: the keys
 * read.  *damaged: the file failed its check. */
enum clos_err dk_read_seeds(struct clos *c, const struct clos_env *env, int m,
                                   uint64_t *incoming, double *last, bool *damaged)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    enum clos_err e = CLOS_OK;
    char path[4200];
    dk_path(path, sizeof path, dk, "disk-in-%03d.keys", m);
    FILE *f = clos_fopen_in(path);
    uint64_t *buf = malloc(8 * (size_t)K * DK_BUF), left = dk->st.inlen[m], n;
    bool whole = true;
    if (!buf)
        e = CLOS_OOM;
    while (e == CLOS_OK && f && left) {
        if (clos_stopped(env)) { /* a rerun seeds this level again */
            clos_say(env, last, true, "stopped while reading level %d's seeds: levels %d..%d "
                     "expanded, kept in %s", m, m + 1, dk->st.top, dk->dir);
            e = CLOS_STOPPED;
            break;
        }
        if (!dk_read_block(f, K, &left, buf, &n)) {
            whole = false;
            break;
        }
        uint64_t j = 0;
        for (; e == CLOS_OK && j < n && key_level(&buf[j * K], K) == m; j++)
            e = dk_seed(c, env, &buf[j * K]);
        if (j < n) { /* e, or a key of another level: not this solve's file */
            whole = false;
            break;
        }
        *incoming += n;
    }
    if (e == CLOS_OK && (left || !whole))
        *damaged = true;
    if (f)
        fclose(f);
    free(buf);
    return e;
}

/* Expand level m's nodes [a, b), in parallel when the round is large
 * enough; CLOS_OOM if a thread's exit buffer could not be had. */
static enum clos_err dk_round(struct clos *c, const struct clos_env *env, int tbmax, int m,
                              uint64_t a, uint64_t b, struct dk_thread *et, int nt)
{
    enum clos_err e = CLOS_OK;
    bool par = nt > 1 && b - a >= 256;
    if (!par) {
        for (uint64_t i = a; i < b; i++)
            dk_expand(c, env, i, 0, tbmax, m, false, &et[0]);
    } else {
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64) nowait
            for (uint64_t i = a; i < b; i++)
                dk_expand(c, env, i, tid, tbmax, m, true, &et[tid]);
        }
    }
    for (int t = 0; t < nt; t++)
        if (et[t].oom)
            e = CLOS_OOM;
    return e;
}

/* The previous progress line of a level's expansion: its time, the nodes
 * expanded and the positions found then. */
struct dk_mark {
    double t;
    uint64_t a, n;
};

/* A line of progress of level m's expansion, a expanded, at most every
 * second. */
static void dk_progress(const struct clos *c, const struct clos_env *env, int m, uint64_t a,
                        double *last, struct dk_mark *w)
{
    double now = util_now();
    if (now - *last < 1.0)
        return;
    /* Rate and growth since the previous line.  Each expansion finds
     * g new positions of the level, so while g < 1 the positions
     * waiting cost about wait / (1 - g) expansions in all (a
     * geometric series; g falls as the level saturates); while g is
     * near or above 1 no end is in sight yet, and the line says so. */
    double dt = now - w->t, de = (double)(a - w->a), dn = (double)(c->n - w->n);
    double rate = dt > 0 ? de / dt : 0, g = de > 0 ? dn / de : 0;
    uint64_t wait = c->n - a;
    char eta[96];
    if (g < 0.95 && rate > 0)
        snprintf(eta, sizeof eta, "ETA %.0f s", (double)wait / (1 - g) / rate);
    else
        snprintf(eta, sizeof eta, "no ETA yet");
    clos_say(env, last, false, "closure on disk, level %d: %llu positions found, %llu expanded "
             "(%.0f k/s, %.2f new per expansion), %.2f GB held, %s", m,
             (unsigned long long)c->n, (unsigned long long)a, rate / 1e3, g,
             clos_arrays_bytes(c, c->cap, c->scap) / 1e9, eta);
    w->t = now;
    w->a = a;
    w->n = c->n;
}

enum clos_err dk_keys_write(struct clos *c, const struct clos_env *env, int m, char *why,
                            size_t wlen)
{
    struct clos_disk *dk = c->dk;
    const uint64_t n = c->n;
    const size_t kb = 8 * (size_t)c->K;
    uint64_t *tmp = malloc(kb * (size_t)n + 8);
    if (!tmp)
        return CLOS_OOM;
    dk_sort(c->key, tmp, n, c->K);
    free(tmp);
    dk->st.cnt[m] = n;
    struct dk_lvl hd;
    dk_lvl_of(c, m, 0, &hd);
    const void *parts[2] = {&hd, c->key};
    uint64_t sizes[2] = {sizeof hd, n * kb};
    char name[64];
    snprintf(name, sizeof name, dk_fmt[0], m);
    if (dk->ioerr || !clos_ck_write_e(dk->dir, name, dk_magic[0], parts, sizes, 2, &dk->err)) {
        snprintf(why, wlen, "the closure on disk, level %d: %.200s", m, dk->err.msg);
        return CLOS_OOM;
    }
    char path[4200];
    dk_path(path, sizeof path, dk, "disk-in-%03d.keys", m);
    unlink(path);
    dk->st.inlen[m] = 0;
    dk->st.expanded_to = m;
    if (!dk_save_state(c, env)) {
        snprintf(why, wlen, "the closure on disk: %.200s", dk->err.msg);
        return CLOS_OOM;
    }
    return CLOS_OK;
}

/* Level m expanded (a nodes): exits flushed, its keys sorted into its
 * level file, its incoming file and disk-cur.keys gone, disk.state saved,
 * and a line that says so. */
static enum clos_err dk_down_done(struct clos *c, const struct clos_env *env, int m, uint64_t a,
                                  struct dk_thread *et, int nt, struct clos_info *info,
                                  uint64_t seeds, uint64_t incoming, double t0, double *last)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const size_t kb = 8 * (size_t)K;
    dk_flush_all(c, m, et, nt);
    const uint64_t n = c->n;
    /* sorted keys: the set goes (the up pass builds its own) */
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double bb = clos_arrays_bytes(c, c->cap, 0) + (double)n * kb;
    if (clos_over(c, env, bb)) {
        dk_refuse(c, env, info, m, a, dk_deg(c, et, nt, a));
        return CLOS_TOO_BIG;
    }
    clos_note_peak(c, bb);
    enum clos_err ce = dk_keys_write(c, env, m, info->why, sizeof info->why);
    if (ce != CLOS_OK)
        return ce;
    char path[4200];
    snprintf(path, sizeof path, "%s/disk-cur.keys", dk->dir);
    unlink(path);
    double dt = util_now() - t0;
    uint64_t below = 0;
    for (int l = 0; l < m; l++)
        below += dk->st.inlen[l];
    clos_say(env, last, true,
             "closure on disk, level %d expanded: %llu positions (%llu seeds of %llu incoming), "
             "%.2f M/s, %.2f GB held; %llu positions in levels %d..%d so far; %.2f GB of exits "
             "waiting below", m, (unsigned long long)n, (unsigned long long)seeds,
             (unsigned long long)(m == dk->st.top ? 1 : incoming),
             dt > 0 ? (double)n / dt / 1e6 : 0.0, clos_arrays_bytes(c, c->cap, c->scap) / 1e9,
             (unsigned long long)dk_total(c), m, dk->st.top, (double)below / 1e9);
    return CLOS_OK;
}

/* Pass 1, level m: seeds, expansion, sorted keys file.  *damaged: an
 * incoming file failed its check. */
enum clos_err dk_down(struct clos *c, const struct clos_env *env, int tbmax, int m,
                      const uint64_t *rootw, struct dk_thread *et, int nt, bool *damaged,
                      struct clos_info *info, uint64_t resume_a)
{
    struct clos_disk *dk = c->dk;
    const uint64_t slots = (uint64_t)c->slots;
    double last = 0, t0 = util_now(), lastck = t0, ckgap = CKPT_EVERY;
    const bool resuming = resume_a != UINT64_MAX; /* keys [0, c->n) loaded (dk_load_cur) */
    if (!resuming)
        c->n = 0;
    enum clos_err e = clos_rebuild_set(c, env, resuming ? dk_resume_cells(c, env) : 4096);
    uint64_t incoming = 0;
    if (e == CLOS_OK && m == dk->st.top && !resuming)
        e = dk_seed(c, env, rootw);
    if (e == CLOS_OK && m != dk->st.top && !resuming) {
        e = dk_read_seeds(c, env, m, &incoming, &last, damaged);
        if (*damaged)
            return CLOS_OK;
    }
    const bool seeded = e == CLOS_OK; /* every seed in the set */
    uint64_t seeds = c->n, a = resuming ? resume_a : 0;
    for (int t = 0; t < nt; t++)
        et[t].inl = 0;
    /* the previous progress line's time, expanded, found */
    struct dk_mark w = {util_now(), a, c->n};
    while (e == CLOS_OK && a < c->n) {
        if (clos_stopped(env)) {
            if (dk_save_cur(c, env, m, a, et, nt))
                clos_say(env, &last, true, "stopped while expanding level %d: %llu positions found, "
                         "%llu expanded, kept in %s with the levels above", m,
                         (unsigned long long)c->n, (unsigned long long)a, dk->dir);
            return CLOS_STOPPED;
        }
        /* The level's solve needs 4 bytes per in-level move (relays, or
         * edges), measured by the expansions (dk_deg; a resumed level's
         * from disk-cur.keys).  A resumed level whose file did not record
         * them has none yet, and every slot taken as in-level would refuse
         * what the run before held; so its first round is short and the
         * check waits for it. */
        const bool measured = a > c->dk->askip || !resuming;
        if (measured && clos_over(c, env, dk_need(c, env, c->n, dk_deg(c, et, nt, a)))) {
            e = CLOS_TOO_BIG;
            break;
        }
        if (util_now() - lastck >= ckgap) {
            /* a save writes the whole level so far (4.5 GB at darra's 562 M
             * positions): keep saves to about a tenth of the time */
            double ts = util_now();
            dk_save_cur(c, env, m, a, et, nt);
            lastck = util_now();
            ckgap = 10.0 * (lastck - ts) > CKPT_EVERY ? 10.0 * (lastck - ts) : CKPT_EVERY;
        }
        uint64_t want = c->n - a, limit = c->scap / LOAD_DEN * LOAD_NUM;
        uint64_t room = limit > c->n ? (limit - c->n) / slots : 0;
        if (room < want && room < 4096) {
            e = dk_grow_set(c, env, clos_set_cap_for(c->n + 4096 * slots));
            if (e != CLOS_TOO_BIG || room == 0)
                continue;
            e = CLOS_OK; /* near the budget: the set filled to its load first */
            c->refused = 0;
        }
        uint64_t r = want < room ? want : room;
        if (!measured && r > DK_FIRST_ROUND)
            r = DK_FIRST_ROUND;
        /* a line of progress and a look for Ctrl-C every few seconds */
        const uint64_t rmax = env->round_max ? env->round_max : DK_ROUND_MAX;
        if (r > rmax)
            r = rmax;
        /* near the budget, fewer expansions a round (room for slots
         * children each) rather than a refusal of what may not be needed */
        while ((e = clos_grow_nodes(c, env, c->n + r * slots)) == CLOS_TOO_BIG && r > 64)
            r /= 2;
        if (e != CLOS_OK)
            break;
        c->refused = 0; /* a smaller round fitted */
        e = dk_round(c, env, tbmax, m, a, a + r, et, nt);
        a += r;
        dk_progress(c, env, m, a, &last, &w);
    }
    if (e == CLOS_TOO_BIG) {
        dk_refuse(c, env, info, m, a, dk_deg(c, et, nt, a));
        /* refused while reading its seeds: nothing kept (a kept expansion
         * is resumed without them), a rerun seeds the level again */
        if (seeded && dk_save_cur(c, env, m, a, et, nt))
            clos_say(env, &last, true, "level %d's expansion so far (%llu positions) kept in %s: a "
                     "rerun with more --memory goes on from there", m, (unsigned long long)c->n,
                     dk->dir);
        return e;
    }
    if (e != CLOS_OK)
        return e;
    return dk_down_done(c, env, m, a, et, nt, info, seeds, incoming, t0, &last);
}
