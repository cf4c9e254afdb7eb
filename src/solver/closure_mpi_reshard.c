/* The closure on disk across MPI ranks, resumed on another number of ranks
 * (docs/distributed.md "Resuming"): the levels of an earlier job of Q ranks
 * dealt out again to this job's R.
 *
 * A job's files do not depend on its rank count but for their split: rank q
 * of Q holds the positions whose key cm_owner gives to q.  So rank r of R
 * takes, for each level the Q ranks have expanded, the keys cm_owner(., R)
 * gives to r from every old share (each sorted: a Q-way merge keeps them
 * sorted), with their lo, hi and V where the level is solved on every old
 * rank; and, for each level not yet expanded, the seeds it owns from every
 * old incoming file (blocks checked, appended in blocks as the down pass
 * appends them).  Its state is the old one's with its own counts; rank 0's
 * holds the old ranks' node counters summed, so that the job's sums stay
 * those of one process.  Once every rank has written its state, rank 0
 * removes the old directories.
 *
 *   WORK/rank-0-of-3/disk-040.keys  \                 WORK/rank-0-of-2/disk-040.keys
 *   WORK/rank-1-of-3/disk-040.keys   > cm_owner(., 2) >
 *   WORK/rank-2-of-3/disk-040.keys  /                 WORK/rank-1-of-2/disk-040.keys
 *
 * The old job is taken only whole: every one of its Q directories with this
 * solve's state, all at the same level expanded (as a resume of the same
 * rank count asks).  Of several such jobs, the one furthest on.  Each new
 * rank reads every old share of each level (the page cache, not --memory),
 * and holds its own new share of one level at a time, within --memory.
 *
 * Thread-safety: the rank's calling thread; collective (cm_reshard). */
#include <dirent.h>
#include <errno.h>

#include "closure_mpi_internal.h"
#include "fileio.h"
#include "util.h"

/* The old job: its rank count and each rank's directory and state. */
struct cm_old {
    int Q;
    int32_t expanded_to, solved_to; /* theirs: every rank's; the least solved */
    struct clos_disk **dk;          /* [Q] */
};

static void cm_old_free(struct cm_old *o)
{
    for (int q = 0; o->dk && q < o->Q; q++)
        if (o->dk[q]) {
            dk_unmap(o->dk[q]);
            free(o->dk[q]);
        }
    free(o->dk);
    o->dk = NULL;
}

/* WORK, the directory above this rank's WORK/rank-r-of-R. */
static void cm_parent(const struct clos_disk *dk, char *buf, size_t len)
{
    snprintf(buf, len, "%s", dk->dir);
    char *s = strrchr(buf, '/');
    if (s)
        *s = 0;
}

/* The job of Q ranks in work, if every rank's state is this solve's at the
 * same level expanded. */
static bool cm_old_load(const char *work, int Q, const struct dk_meta *fresh, struct cm_old *o)
{
    memset(o, 0, sizeof *o);
    o->Q = Q;
    o->dk = calloc((size_t)Q, sizeof *o->dk);
    bool ok = o->dk != NULL;
    for (int q = 0; ok && q < Q; q++) {
        struct clos_disk *d = o->dk[q] = calloc(1, sizeof *d);
        ok = d && snprintf(d->dir, sizeof d->dir, "%s/rank-%d-of-%d", work, q, Q) <
                      (int)sizeof d->dir;
        void *sp[1] = {d ? &d->st : NULL};
        uint64_t ss[1] = {sizeof d->st};
        ok = ok && clos_ck_read(d->dir, "disk.state", "SOWDKS01", sp, ss, 1) &&
             cm_state_matches(&d->st, fresh) &&
             (q == 0 || d->st.expanded_to == o->dk[0]->st.expanded_to);
        if (ok) {
            o->expanded_to = d->st.expanded_to;
            if (q == 0 || d->st.solved_to < o->solved_to)
                o->solved_to = d->st.solved_to;
        }
    }
    if (!ok)
        cm_old_free(o);
    return ok;
}

/* Of the jobs in work with another rank count than R, the one furthest on
 * (least level expanded, then most solved; then fewest ranks); false if
 * none (*unusable: the rank count of one that was there but could not be
 * taken, else 0). */
static bool cm_old_find(const char *work, int R, const struct dk_meta *fresh, struct cm_old *best,
                        int *unusable)
{
    *unusable = 0;
    DIR *d = opendir(work);
    if (!d)
        return false;
    bool found = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        int Q = 0, end = 0;
        if (sscanf(de->d_name, "rank-0-of-%d%n", &Q, &end) != 1 || de->d_name[end] || Q < 1 ||
            Q == R || Q > (1 << 20))
            continue;
        struct cm_old o;
        if (!cm_old_load(work, Q, fresh, &o)) {
            *unusable = Q;
            continue;
        }
        bool better = !found || o.expanded_to < best->expanded_to ||
                      (o.expanded_to == best->expanded_to &&
                       (o.solved_to > best->solved_to ||
                        (o.solved_to == best->solved_to && Q < best->Q)));
        if (better) {
            if (found)
                cm_old_free(best);
            *best = o;
            found = true;
        } else
            cm_old_free(&o);
    }
    closedir(d);
    return found;
}

/* A growable share of one level: keys, and lo, hi, V when solved. */
struct cm_share {
    uint64_t *key;
    int8_t *lo, *hi, *v;
    uint64_t n, cap;
};

static bool cm_share_push(struct cm_share *s, int K, bool vals, const uint64_t *w, int8_t lo,
                          int8_t hi, int8_t v, double budget, struct sow_error *e)
{
    if (s->n == s->cap) {
        uint64_t cap = s->cap ? s->cap + s->cap / 2 : 1 << 16;
        double need = (double)cap * (8.0 * K + (vals ? 3 : 0));
        if (budget > 0 && need > budget) {
            sow_fail(e, SOW_E_NOMEM, "its share of a level needs %.2f GB, over --memory", need / 1e9);
            return false;
        }
        uint64_t *k = realloc(s->key, (size_t)cap * 8 * (size_t)K);
        if (k)
            s->key = k;
        bool ok = k != NULL;
        int8_t **a[3] = {&s->lo, &s->hi, &s->v};
        for (int j = 0; ok && vals && j < 3; j++) {
            int8_t *p = realloc(*a[j], (size_t)cap);
            if (p)
                *a[j] = p;
            ok = p != NULL;
        }
        if (!ok) {
            sow_fail(e, SOW_E_NOMEM, "out of memory for its share of a level");
            return false;
        }
        s->cap = cap;
    }
    memcpy(&s->key[s->n * (uint64_t)K], w, 8 * (size_t)K);
    if (vals) {
        s->lo[s->n] = lo;
        s->hi[s->n] = hi;
        s->v[s->n] = v;
    }
    s->n++;
    return true;
}

static void cm_share_free(struct cm_share *s)
{
    free(s->key);
    free(s->lo);
    free(s->hi);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Level l, expanded (and solved: vals) on every old rank: this rank's
 * share merged from theirs and written as the down (and up) pass writes it. */
static bool cm_take_level(struct cm *J, struct cm_old *o, int l, bool vals, struct sow_error *e)
{
    struct clos *c = J->c;
    struct clos_disk *dk = c->dk;
    const int K = c->K, Q = o->Q, R = J->M.size, me = J->M.rank;
    uint64_t *at = calloc((size_t)Q, sizeof *at);
    bool ok = at != NULL;
    if (!ok)
        sow_fail(e, SOW_E_NOMEM, "out of memory");
    for (int q = 0; ok && q < Q; q++)
        if (o->dk[q]->st.cnt[l] && (!dk_map_in(c, o->dk[q], l, 0, true) ||
                                    (vals && !dk_map_in(c, o->dk[q], l, 1, true))))
            ok = !sow_fail(e, SOW_E_INPUT, "level %d's files in %s are damaged", l,
                           o->dk[q]->dir);
    struct cm_share s = {0};
    while (ok) { /* the least key at the heads of the old shares */
        int b = -1;
        for (int q = 0; q < Q; q++)
            if (at[q] < o->dk[q]->st.cnt[l] &&
                (b < 0 || cm_cmp((const uint64_t *)dk_payload(o->dk[q], 0, l) + at[q] * K,
                                 (const uint64_t *)dk_payload(o->dk[b], 0, l) + at[b] * K, K) < 0))
                b = q;
        if (b < 0)
            break;
        const uint64_t i = at[b]++, n = o->dk[b]->st.cnt[l];
        const uint64_t *w = (const uint64_t *)dk_payload(o->dk[b], 0, l) + i * K;
        if (cm_owner(w, K, R) != me)
            continue;
        const int8_t *v = vals ? dk_payload(o->dk[b], 1, l) : NULL;
        ok = cm_share_push(&s, K, vals, w, v ? v[i] : 0, v ? v[n + i] : 0, v ? v[2 * n + i] : 0,
                           J->env->memory, e);
    }
    for (int q = 0; q < Q; q++)
        dk_unmap(o->dk[q]);
    free(at);
    if (ok) {
        dk->st.cnt[l] = s.n;
        struct dk_lvl hd;
        char name[64];
        dk_lvl_of(c, l, 0, &hd);
        const void *kp[2] = {&hd, s.key};
        uint64_t ks[2] = {sizeof hd, s.n * 8 * (uint64_t)K};
        snprintf(name, sizeof name, dk_fmt[0], l);
        ok = clos_ck_write_e(dk->dir, name, dk_magic[0], kp, ks, 2, e);
        if (ok && vals) {
            dk_lvl_of(c, l, 1, &hd);
            const void *vp[4] = {&hd, s.lo, s.hi, s.v};
            uint64_t vs[4] = {sizeof hd, s.n, s.n, s.n};
            snprintf(name, sizeof name, dk_fmt[1], l);
            ok = clos_ck_write_e(dk->dir, name, dk_magic[1], vp, vs, 4, e);
        }
    }
    cm_share_free(&s);
    return ok;
}

/* Level l, not yet expanded: the seeds this rank owns from every old
 * incoming file (their valid bytes, each block's checksum checked). */
static bool cm_take_seeds(struct cm *J, struct cm_old *o, int l, struct sow_error *e)
{
    struct clos *c = J->c;
    const int K = c->K, R = J->M.size, me = J->M.rank;
    const size_t kb = 8 * (size_t)K;
    uint64_t *in = malloc(kb * DK_BUF), *mine = malloc(kb * DK_BUF), nm = 0;
    bool ok = in && mine;
    if (!ok)
        sow_fail(e, SOW_E_NOMEM, "out of memory");
    for (int q = 0; ok && q < o->Q; q++) {
        uint64_t left = o->dk[q]->st.inlen[l];
        if (!left)
            continue;
        char path[4200];
        dk_path(path, sizeof path, o->dk[q], "disk-in-%03d.keys", l);
        int fd = -1;
        FILE *f = fio_open_input(path, &fd, e) == SOW_OK ? fdopen(fd, "rb") : NULL;
        if (!f && fd >= 0)
            close(fd);
        ok = f != NULL;
        uint64_t n;
        while (ok && left) {
            ok = dk_read_block(f, K, &left, in, &n);
            if (!ok) {
                sow_fail(e, SOW_E_INPUT, "%s is damaged", path);
                break;
            }
            for (uint64_t i = 0; i < n; i++)
                if (cm_owner(&in[i * K], K, R) == me) {
                    memcpy(&mine[nm * K], &in[i * K], kb);
                    if (++nm == DK_BUF) {
                        dk_flush(c, l, mine, nm);
                        nm = 0;
                    }
                }
        }
        if (f)
            fclose(f);
    }
    if (ok && nm)
        dk_flush(c, l, mine, nm);
    free(in);
    free(mine);
    dk_close_in(c->dk, true);
    if (ok && c->dk->ioerr) {
        *e = c->dk->err;
        ok = false;
    }
    return ok;
}

/* This rank's share of every level from the old job's. */
static bool cm_take(struct cm *J, struct cm_old *o, const struct dk_meta *fresh, struct sow_error *e)
{
    struct clos *c = J->c;
    struct clos_disk *dk = c->dk;
    char path[4200];
    dk_close_in(dk, false);
    dk_unmap(dk);
    dk->ioerr = false;
    dk->st = *fresh;
    dk->st.expanded_to = o->expanded_to;
    dk->st.solved_to = o->solved_to;
    memset(dk->st.cnt, 0, sizeof dk->st.cnt);
    memset(dk->st.inlen, 0, sizeof dk->st.inlen);
    for (int l = 0; l <= SOW_MAX_SEEDS; l++) { /* an earlier try's seeds */
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        unlink(path);
    }
    bool ok = true;
    for (int l = 0; ok && l <= J->top; l++) {
        bool any = false;
        for (int q = 0; q < o->Q; q++)
            any |= l >= o->expanded_to ? o->dk[q]->st.cnt[l] != 0 : o->dk[q]->st.inlen[l] != 0;
        if (any)
            ok = l >= o->expanded_to ? cm_take_level(J, o, l, l <= o->solved_to, e)
                                     : cm_take_seeds(J, o, l, e);
    }
    if (J->M.rank == 0)
        for (int q = 0; q < o->Q; q++) {
            dk->st.nodes += o->dk[q]->st.nodes;
            dk->st.visits += o->dk[q]->st.visits;
            dk->st.tb_hits += o->dk[q]->st.tb_hits;
        }
    const void *parts[1] = {&dk->st};
    uint64_t sizes[1] = {sizeof dk->st};
    return ok && clos_ck_write_e(dk->dir, "disk.state", "SOWDKS01", parts, sizes, 1, e);
}

bool cm_reshard(struct cm *J, const struct dk_meta *fresh)
{
    char work[4096];
    cm_parent(J->c->dk, work, sizeof work);
    struct cm_old o = {0};
    int unusable;
    bool have = cm_old_find(work, J->M.size, fresh, &o, &unusable);
    /* the ranks agree on the old job (they read the same directory) */
    uint64_t q[2] = {have ? (uint64_t)o.Q : 0, have ? (uint64_t)o.Q : 0};
    cm_reduce(J, q, 1, MPI_MIN);
    cm_reduce(J, q + 1, 1, MPI_MAX);
    if (q[0] != q[1] || !q[0]) {
        if (have)
            cm_old_free(&o);
        else if (unusable)
            clos_say(J->env, &J->last, true,
                     "note: the closure on disk of %d ranks in %s/rank-*-of-%d cannot be taken over "
                     "(a rank's state missing, damaged, another solve's or at another level): "
                     "this job of %d ranks starts over",
                     unusable, work, unusable, J->M.size);
        return false;
    }
    char sw[48];
    clos_say(J->env, &J->last, true,
             "note: the closure on disk of %d ranks (%s/rank-*-of-%d: levels %d..%d expanded, %s) "
             "dealt out to %d ranks",
             o.Q, work, o.Q, o.expanded_to, J->top, cm_solved_words(o.solved_to, sw, sizeof sw),
             J->M.size);
    struct sow_error err = {0};
    uint64_t bad = !cm_take(J, &o, fresh, &err);
    uint64_t any = bad;
    cm_reduce(J, &any, 1, MPI_MAX);
    if (any) {
        /* the first failing rank's reason is on its own stderr (workers'
         * is /dev/null): rank 0 says what it knows */
        clos_say(J->env, &J->last, true,
                 "note: the levels of %d ranks could not be dealt out (%s): the closure on disk "
                 "starts over",
                 o.Q, bad ? err.msg : "on another rank");
        cm_old_free(&o);
        return false;
    }
    /* an old rank's directory holds only its files and its lock, which no
     * process holds (the old job's rank 0 held WORK's, which this job's
     * rank 0 holds now) */
    if (J->M.rank == 0)
        for (int r = 0; r < o.Q; r++)
            util_rmdir_flat(o.dk[r]->dir);
    cm_old_free(&o);
    uint64_t sync = 0; /* the old directories gone before any rank goes on */
    cm_reduce(J, &sync, 1, MPI_MAX);
    return true;
}
