/* The closure on disk (env->disk): the level files, their mapping and
 * look-up, the state, and dk_build that runs both passes (below; the down
 * pass in closure_disk_down.c, the up pass in closure_disk_up.c).  Part of
 * the closure solver: closure_internal.h maps its files. */
#include <errno.h>

#include "closure_internal.h"
#include "fileio.h"

/* ---- the closure level by level on disk (env->disk) ----
 *
 * For closures past RAM (docs/solver.md "Past RAM").  A move keeps a
 * position's level or lowers it, so level m's part of the closure is the
 * in-level closure of what reaches level m from above: the root at its own
 * level, exits from the higher levels below it.  Two passes over the levels,
 * one level in memory at a time:
 *
 * 1. Down, from the root's level: level m's seeds (the root, or the keys the
 *    levels above appended to DIR/disk-in-LLL.keys) go into the set, then
 *    its positions are expanded, each once, in rounds as in memory
 *    (clos_expand_all); in-level children join the set, exits to a level l < m
 *    are appended to disk-in-l.keys (duplicates and all), exits the tables
 *    answer are counted as in memory.  The level's keys are then sorted and
 *    written to disk-LLL.keys, and its incoming file removed.
 * 2. Up, from the lowest level found: level m's keys are read back and its
 *    moves generated again (level_moves); exits are looked up by binary
 *    search in the lower levels' files (memory-mapped: the page cache, not
 *    --memory), in-level children in the set; the same retrograde
 *    (clos_retro) gives lo, hi, V, written to disk-LLL.values.
 *
 * The positions (so the node counts) and the values are those of the
 * in-memory closure: the same positions are reachable, and each level's
 * retrograde sees the same children with the same values.
 *
 * Files in DIR, each level file being a checkpoint file (clos_ck_write: 64-byte
 * header, XXH3-64 of header and payload) whose payload starts with struct
 * dk_lvl (rule set, size, level, kind, n, root key: a file of another solve
 * is refused):
 *
 *   disk.state        struct dk_meta: how far both passes got, positions per
 *                     level, the valid bytes of each incoming file, counters
 *   disk-in-LLL.keys  blocks: u64 count c (1..DK_BUF), u64 XXH3-64 of the
 *                     keys, c keys of K words; no header (removed once level
 *                     LLL is expanded)
 *   disk-LLL.keys     dk_lvl, then n keys (K x u64) in increasing order,
 *                     word K-1 most significant
 *   disk-LLL.values   dk_lvl, then lo[n], hi[n], v[n] (int8), key order
 *
 * Example: a root of 48 seeds whose captures take 4 or 8: level 48 is
 * expanded first and appends to disk-in-044 and disk-in-040; then 44
 * (seeded from disk-in-044, appending to 040 and 036), 40, ... down to the
 * lowest level reached; then the levels are solved from the lowest up, 48
 * last.  On 2x6 below 62 seeds K = 1: 8 bytes a key, 3 of values.
 *
 * Resuming: disk.state is rewritten (temporary file, renamed) at the start
 * and after each level of either pass; the level being expanded is kept
 * between two rounds in disk-cur.keys (struct dk_cur) when stopped, when
 * refused and every CKPT_EVERY seconds.  A rerun truncates the incoming files
 * to the bytes recorded with the newest of the two and goes on from there.
 * A damaged state, keys or incoming file starts the solve over, a damaged
 * disk-cur.keys expands its level again, a damaged values file solves the
 * levels from it up again; each with a note.
 *
 * Memory (env->memory): one level at a time: its keys, values and set while
 * expanded, and the level's retrograde work while solved; a level whose
 * solve would not fit is refused (CLOS_TOO_BIG) while it is expanded.
 * Thread-safety: as the in-memory closure; the incoming files are appended
 * under a critical section, in blocks. */

void dk_path(char *buf, size_t len, const struct clos_disk *dk, const char *fmt, int l)
{
    char nm[64];
    snprintf(nm, sizeof nm, fmt, l);
    snprintf(buf, len, "%s/%s", dk->dir, nm);
}

void dk_in_failed(struct clos_disk *dk, int l, int err)
{
    if (!dk->ioerr) { /* the first failure says why */
        char path[4200];
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        sow_fail(&dk->err, SOW_E_IO, "appending to %s: %s", path, strerror(err ? err : EIO));
    }
    dk->ioerr = true;
}

void dk_close_in(struct clos_disk *dk, bool sync)
{
    for (int l = 0; l <= SOW_MAX_SEEDS; l++)
        if (dk->in[l]) {
            int err = fflush(dk->in[l]) == 0 ? 0 : errno;
            if (sync && fsync(fileno(dk->in[l])) != 0 && !err)
                err = errno;
            if (fclose(dk->in[l]) != 0 && !err)
                err = errno;
            if (err)
                dk_in_failed(dk, l, err);
            dk->in[l] = NULL;
        }
}

void dk_unmap(struct clos_disk *dk)
{
    for (int k = 0; k < 2; k++)
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            if (dk->map[k][l]) {
                munmap(dk->map[k][l], dk->msz[k][l]);
                dk->map[k][l] = NULL;
            }
}

void dk_free(struct clos *c)
{
    if (!c->dk)
        return;
    dk_close_in(c->dk, false);
    dk_unmap(c->dk);
    free(c->dk);
    c->dk = NULL;
}

uint64_t dk_total(const struct clos *c)
{
    uint64_t t = 0;
    for (int l = 0; l <= SOW_MAX_SEEDS; l++)
        t += c->dk->st.cnt[l];
    return t;
}

/* The header of level l's file of this kind in directory dk. */
static void dk_lvl_in(const struct clos *c, const struct clos_disk *dk, int l, int kind,
                      struct dk_lvl *h)
{
    memset(h, 0, sizeof *h);
    snprintf(h->rules, sizeof h->rules, "%s", c->rs->name);
    h->pits = (uint32_t)c->pits;
    h->K = (uint32_t)c->K;
    h->level = l;
    h->kind = kind;
    h->n = dk->st.cnt[l];
    memcpy(h->root, dk->st.root, sizeof h->root);
}

void dk_lvl_of(const struct clos *c, int l, int kind, struct dk_lvl *h)
{
    dk_lvl_in(c, c->dk, l, kind, h);
}

const char *const dk_fmt[2] = {"disk-%03d.keys", "disk-%03d.values"};

const char *const dk_magic[2] = {"SOWDKK01", "SOWDKV01"};

/* Map level l's file of this kind in directory dk (this solve's, c->dk, or
 * an earlier job's rank's), checked: header, meta and (verify: the whole file
 * read once) the payload's checksum.  false if missing or bad. */
bool dk_map_in(const struct clos *c, struct clos_disk *dk, int l, int kind, bool verify)
{
    char path[4200];
    dk_path(path, sizeof path, dk, dk_fmt[kind], l);
    const uint64_t n = dk->st.cnt[l];
    const uint64_t pay = sizeof(struct dk_lvl) + (kind ? 3 * n : n * 8 * (uint64_t)c->K);
    int fd;
    struct sow_error fe;
    if (fio_open_input(path, &fd, &fe) != SOW_OK) /* never waits on a FIFO */
        return false;
    struct stat sb;
    if (fstat(fd, &sb) < 0 || (uint64_t)sb.st_size != CK_HEAD + pay) {
        close(fd);
        return false;
    }
    void *mp = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mp == MAP_FAILED)
        return false;
    const uint8_t *h = mp;
    uint64_t total, sum, hsum;
    memcpy(&total, h + 8, 8);
    memcpy(&sum, h + 16, 8);
    memcpy(&hsum, h + 24, 8);
    struct dk_lvl want;
    dk_lvl_in(c, dk, l, kind, &want);
    bool ok = memcmp(h, dk_magic[kind], 8) == 0 && total == pay && XXH3_64bits(h, 24) == hsum &&
              memcmp(h + CK_HEAD, &want, sizeof want) == 0;
    if (ok && verify)
        ok = XXH3_64bits(h + CK_HEAD, (size_t)pay) == sum;
    if (!ok) {
        munmap(mp, (size_t)sb.st_size);
        return false;
    }
    if (dk->map[kind][l])
        munmap(dk->map[kind][l], dk->msz[kind][l]);
    dk->map[kind][l] = mp;
    dk->msz[kind][l] = (size_t)sb.st_size;
    return true;
}

bool dk_map(struct clos *c, int l, int kind, bool verify)
{
    return dk_map_in(c, c->dk, l, kind, verify);
}

uint64_t clos_disk_level(const struct clos *c, int l, const uint64_t **keys, const int8_t **lo,
                         const int8_t **hi, const int8_t **v)
{
    const struct clos_disk *dk = c->dk;
    if (!dk || !dk->solved || l < 0 || l > SOW_MAX_SEEDS || !dk->st.cnt[l] || !dk->map[0][l] ||
        !dk->map[1][l])
        return 0;
    uint64_t n = dk->st.cnt[l];
    const int8_t *x = dk_payload(dk, 1, l);
    *keys = dk_payload(dk, 0, l);
    *lo = x;
    *hi = x + n;
    *v = x + 2 * n;
    return n;
}

int clos_disk_ranks(const struct clos *c)
{
    return c->dk && c->dk->ranks > 1 ? c->dk->ranks : 1;
}

/* Level l's sorted keys (*n of them), NULL if l is not mapped. */
const uint64_t *dk_keys(const struct clos *c, int l, uint64_t *n)
{
    const struct clos_disk *dk = c->dk;
    *n = 0;
    if (!dk || l < 0 || l > SOW_MAX_SEEDS || !dk->map[0][l])
        return NULL;
    *n = dk->st.cnt[l];
    return dk_payload(dk, 0, l);
}

/* w's index in level l's sorted keys, -1 if absent (or l not mapped). */
int64_t dk_find(const struct clos *c, int l, const uint64_t *w)
{
    const struct clos_disk *dk = c->dk;
    if (l < 0 || l > SOW_MAX_SEEDS || !dk->map[0][l])
        return -1;
    return clos_key_find(dk_payload(dk, 0, l), dk->st.cnt[l], w, c->K);
}

/* V of level l's position q (its values file mapped). */
int8_t dk_value(const struct clos *c, int l, int64_t q)
{
    const int8_t *x = dk_payload(c->dk, 1, l);
    return x[2 * c->dk->st.cnt[l] + (uint64_t)q];
}

/* Sort n keys of K words (word K-1 most significant): LSD radix by bytes,
 * a pass skipped where every key has the same byte; tmp holds n * K words. */
void dk_sort(uint64_t *key, uint64_t *tmp, uint64_t n, int K)
{
    uint64_t *src = key, *dst = tmp;
    for (int k = 0; k < K && n > 1; k++)
        for (int b = 0; b < 64; b += 8) {
            uint64_t cnt[256] = {0};
            for (uint64_t i = 0; i < n; i++)
                cnt[(src[i * K + k] >> b) & 255]++;
            if (cnt[(src[k] >> b) & 255] == n)
                continue;
            uint64_t pos = 0;
            for (int d = 0; d < 256; d++) {
                uint64_t x = cnt[d];
                cnt[d] = pos;
                pos += x;
            }
            for (uint64_t i = 0; i < n; i++) {
                uint64_t j = cnt[(src[i * K + k] >> b) & 255]++;
                memcpy(&dst[j * K], &src[i * K], 8 * (size_t)K);
            }
            uint64_t *t = src;
            src = dst;
            dst = t;
        }
    if (src != key)
        memcpy(key, src, 8 * (size_t)K * n);
}

void dk_sums(const struct clos_env *env, uint64_t *x)
{
    x[0] = x[1] = x[2] = 0;
    for (int t = 0; t < env->threads; t++) {
        x[0] += env->nodes[t];
        x[1] += env->visits[t];
        x[2] += env->tb_hits[t];
    }
}

bool dk_save_state(struct clos *c, const struct clos_env *env)
{
    struct clos_disk *dk = c->dk;
    uint64_t x[3];
    dk_sums(env, x);
    dk->st.nodes = x[0] - dk->base[0];
    dk->st.visits = x[1] - dk->base[1];
    dk->st.tb_hits = x[2] - dk->base[2];
    const void *parts[1] = {&dk->st};
    uint64_t sizes[1] = {sizeof dk->st};
    return clos_ck_write_e(dk->dir, "disk.state", "SOWDKS01", parts, sizes, 1, &dk->err);
}

/* Forget every level of this build: the counters back to before it, the
 * incoming files removed, the state fresh. */
static void dk_start_over(struct clos *c, const struct clos_env *env, const struct dk_meta *fresh)
{
    struct clos_disk *dk = c->dk;
    uint64_t x[3];
    dk_sums(env, x);
    env->nodes[0] -= x[0] - dk->base[0];
    env->visits[0] -= x[1] - dk->base[1];
    env->tb_hits[0] -= x[2] - dk->base[2];
    dk_close_in(dk, false);
    dk_unmap(dk);
    for (int l = 0; l <= SOW_MAX_SEEDS; l++) {
        char path[4200];
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        unlink(path);
    }
    char cp[4200];
    snprintf(cp, sizeof cp, "%s/disk-cur.keys", dk->dir);
    unlink(cp);
    dk->st = *fresh;
}

/* One build on disk: what its passes share. */
struct dk_run {
    struct clos *c;
    const struct clos_env *env;
    struct clos_info *info;
    const uint64_t *rootw;
    int top, tbmax, nt;
    struct dk_thread *et;
    double last, t0;
    struct dk_meta fresh; /* the state of a build that starts over */
    struct dk_cur cur;    /* the level in progress, if have_cur */
    bool have_cur;
};

/* The line that says from where a resumed build goes on. */
static void dk_say_resumed(struct dk_run *r)
{
    struct clos *c = r->c;
    struct clos_disk *dk = c->dk;
    const int top = r->top;
    char done[96] = "no level expanded yet", part[96] = "", sol[48] = "none solved yet";
    if (dk->st.expanded_to < top)
        snprintf(done, sizeof done, "levels %d..%d expanded (%llu positions)",
                 dk->st.expanded_to, top, (unsigned long long)dk_total(c));
    else if (dk->st.expanded_to == top)
        snprintf(done, sizeof done, "level %d expanded (%llu positions)", top,
                 (unsigned long long)dk_total(c));
    if (r->have_cur)
        snprintf(part, sizeof part,
                 ", level %d in progress (%llu positions, %llu expanded)", r->cur.level,
                 (unsigned long long)r->cur.n, (unsigned long long)r->cur.a);
    if (dk->st.solved_to >= 0)
        snprintf(sol, sizeof sol, "levels up to %d solved", dk->st.solved_to);
    clos_say(r->env, &r->last, true, "closure on disk resumed from %s: %s%s, %s", dk->dir, done,
             part, sol);
}

/* The state in DIR: this solve's resumed (with its level in progress, if
 * disk-cur.keys holds it), else a fresh one written at once. */
static enum clos_err dk_open_state(struct dk_run *r)
{
    struct clos *c = r->c;
    const struct clos_env *env = r->env;
    struct clos_disk *dk = c->dk;
    const int top = r->top, tbmax = r->tbmax;
    const struct dk_meta *fresh = &r->fresh;
    /* this solve's state, if DIR holds it */
    void *sp[1] = {&dk->st};
    uint64_t ss[1] = {sizeof dk->st};
    char path[4200];
    snprintf(path, sizeof path, "%s/disk.state", dk->dir);
    bool had = access(path, F_OK) == 0;
    bool resumed = clos_ck_read(dk->dir, "disk.state", "SOWDKS01", sp, ss, 1) &&
                   strcmp(dk->st.rules, fresh->rules) == 0 && dk->st.pits == fresh->pits &&
                   dk->st.K == fresh->K && dk->st.tbmax == tbmax && dk->st.top == top &&
                   memcmp(dk->st.root, fresh->root, sizeof fresh->root) == 0 &&
                   dk->st.expanded_to >= 0 && dk->st.expanded_to <= top + 1 &&
                   dk->st.solved_to >= -1 && dk->st.solved_to <= top;
    struct dk_cur *cur = &r->cur;
    bool bad_cur = false;
    r->have_cur = false;
    int next = dk->st.expanded_to - 1; /* the next level with seeds */
    while (resumed && next >= 0 && next != top && !dk->st.inlen[next])
        next--;
    if (resumed && next >= 0) {
        enum clos_err e = dk_load_cur(c, env, next, cur, &r->have_cur, &bad_cur);
        if (e == CLOS_TOO_BIG) { /* too big for this budget: kept for a rerun with more */
            c->n = cur->n;
            dk_refuse(c, env, r->info, next, cur->a,
                      cur->deg_ppm ? cur->deg_ppm * 1e-6 : (double)c->slots);
            c->n = 0;
        }
        if (e != CLOS_OK)
            return e;
    }
    if (bad_cur)
        clos_say(env, &r->last, true, "note: %s/disk-cur.keys is damaged or not this level's: level %d "
                 "is expanded again from its start", dk->dir, next);
    if (r->have_cur) { /* the counters and incoming files of that moment */
        dk->st.nodes = cur->nodes;
        dk->st.visits = cur->visits;
        dk->st.tb_hits = cur->tb_hits;
        memcpy(dk->st.inlen, cur->inlen, sizeof cur->inlen);
    }
    if (resumed) {
        env->nodes[0] += dk->st.nodes;
        env->visits[0] += dk->st.visits;
        env->tb_hits[0] += dk->st.tb_hits;
        /* the appends of a level stopped mid-way are dropped */
        for (int l = 0; l < dk->st.expanded_to && resumed; l++) {
            dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
            struct stat sb;
            if (!dk->st.inlen[l])
                unlink(path);
            else if (stat(path, &sb) < 0 || (uint64_t)sb.st_size < dk->st.inlen[l] ||
                     truncate(path, (off_t)dk->st.inlen[l]) < 0)
                resumed = false;
        }
        if (!resumed)
            clos_say(env, &r->last, true, "note: %s/disk-in-*.keys damaged: the closure on disk starts "
                     "over", dk->dir);
        else
            dk_say_resumed(r);
    } else if (had) {
        clos_say(env, &r->last, true, "note: %s/disk.state is damaged or another solve's: the closure "
                 "on disk starts over", dk->dir);
    }
    if (!resumed) { /* the state written at once: a stop in the first level resumes too */
        dk_start_over(c, env, fresh);
        r->have_cur = false;
        if (!dk_save_state(c, env)) {
            snprintf(r->info->why, sizeof r->info->why, "the closure on disk: %.200s", dk->err.msg);
            return CLOS_OOM;
        }
    }
    return CLOS_OK;
}

/* Pass 1: down from the root's level (or the level in progress).
 * *damaged, *what: a file that failed its check. */
static enum clos_err dk_pass_down(struct dk_run *r, bool *damaged, const char **what)
{
    struct clos *c = r->c;
    const struct clos_env *env = r->env;
    struct clos_disk *dk = c->dk;
    const int top = r->top;
    enum clos_err e = CLOS_OK;
    dk_keys_only(c, true);
    for (int m = dk->st.expanded_to - 1; e == CLOS_OK && !*damaged && m >= 0; m--) {
        if (clos_stopped(env)) {
            clos_say(env, &r->last, true, "stopped: levels %d..%d expanded, kept in %s", m + 1, top,
                     dk->dir);
            e = CLOS_STOPPED;
            break;
        }
        bool go_on = r->have_cur && m == r->cur.level;
        if (m != top && !dk->st.inlen[m] && !go_on)
            continue; /* nothing reaches level m */
        /* the in-level moves so far (dk_deg), if disk-cur.keys has them */
        dk->inl0 = go_on && r->cur.deg_ppm ? r->cur.deg_ppm * 1e-6 * (double)r->cur.a : 0.0;
        dk->askip = go_on && !r->cur.deg_ppm ? r->cur.a : 0;
        e = dk_down(c, env, r->tbmax, m, r->rootw, r->et, r->nt, damaged, r->info,
                    go_on ? r->cur.a : UINT64_MAX);
        r->have_cur = false;
        if (*damaged)
            *what = "an incoming file (disk-in-*.keys)";
    }
    return e;
}

/* Pass 2: up from the lowest level; the levels solved before are mapped
 * and checked.  t1: the pass's start. */
static enum clos_err dk_pass_up(struct dk_run *r, double t1, bool *damaged, const char **what)
{
    struct clos *c = r->c;
    const struct clos_env *env = r->env;
    struct clos_disk *dk = c->dk;
    const int top = r->top;
    enum clos_err e = CLOS_OK;
    uint64_t done = 0;
    for (int m = 0; m <= dk->st.solved_to; m++)
        done += dk->st.cnt[m];
    const uint64_t resumed_done = done;
    for (int m = 0; e == CLOS_OK && !*damaged && m <= top; m++) {
        if (!dk->st.cnt[m])
            continue;
        if (m <= dk->st.solved_to) {
            if (!dk_map(c, m, 0, true)) {
                *damaged = true;
                *what = "a level's keys (disk-*.keys)";
                break;
            }
            if (dk_map(c, m, 1, true))
                continue;
            clos_say(env, &r->last, true, "note: %s/disk-%03d.values is damaged: levels %d..%d are "
                     "solved again", dk->dir, m, m, top);
            done = 0;
            for (int l = 0; l < m; l++)
                done += dk->st.cnt[l];
            dk->st.solved_to = m - 1;
        }
        if (clos_stopped(env)) {
            clos_say(env, &r->last, true, "stopped: levels up to %d solved, kept in %s", m - 1,
                     dk->dir);
            e = CLOS_STOPPED;
            break;
        }
        e = dk_up(c, env, r->tbmax, m, damaged, r->info, t1, &done, resumed_done);
        if (e == CLOS_STOPPED) /* within the level: a rerun solves it again */
            clos_say(env, &r->last, true, "stopped while solving level %d: levels up to %d solved, "
                     "kept in %s", m, m - 1, dk->dir);
        if (*damaged)
            *what = "a level's keys (disk-*.keys)";
    }
    return e;
}

/* The closure of root (level top) on disk in env->work: both passes,
 * resumed from disk.state when it is this solve's. */
enum clos_err dk_build(struct clos *c, const struct clos_env *env, int top, int tbmax,
                       const uint64_t *rootw, struct clos_info *info)
{
    struct clos_disk *dk = calloc(1, sizeof *dk);
    if (!dk)
        return CLOS_OOM;
    c->dk = dk;
    c->um = tb_unmove_supported(c->rs);
    snprintf(dk->dir, sizeof dk->dir, "%s", env->work);
    dk_sums(env, dk->base);
    struct dk_run run;
    memset(&run, 0, sizeof run);
    struct dk_run *r = &run;
    r->c = c;
    r->env = env;
    r->info = info;
    r->rootw = rootw;
    r->top = top;
    r->tbmax = tbmax;
    r->last = 0;
    r->t0 = util_now();
    struct dk_meta *fresh = &r->fresh;
    snprintf(fresh->rules, sizeof fresh->rules, "%s", c->rs->name);
    fresh->pits = (uint32_t)c->pits;
    fresh->K = (uint32_t)c->K;
    fresh->tbmax = tbmax;
    fresh->top = top;
    fresh->expanded_to = top + 1;
    fresh->solved_to = -1;
    memcpy(fresh->root, rootw, 8 * (size_t)c->K);
    enum clos_err e = dk_open_state(r);
    if (e != CLOS_OK)
        return e;
    int nt = r->nt = env->threads;
    struct dk_thread *et = r->et = calloc((size_t)nt, sizeof *et);
    if (!et)
        return CLOS_OOM;
    for (int attempt = 0;; attempt++) {
        bool damaged = false;
        const char *what = "";
        e = dk_pass_down(r, &damaged, &what);
        info->expand_s = util_now() - r->t0;
        double t1 = util_now();
        if (e == CLOS_OK && !damaged)
            e = dk_pass_up(r, t1, &damaged, &what);
        info->solve_s = util_now() - t1;
        if (e != CLOS_OK || !damaged)
            break;
        if (attempt) {
            snprintf(info->why, sizeof info->why, "the closure on disk in %.100s: %s is damaged again",
                     dk->dir, what);
            e = CLOS_OOM;
            break;
        }
        clos_say(env, &r->last, true, "note: %s in %s is damaged: the closure on disk starts over",
                 what, dk->dir);
        dk_start_over(c, env, fresh);
        r->have_cur = false;
        dk_save_state(c, env);
    }
    for (int t = 0; t < nt; t++)
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            free(et[t].buf[l]);
    free(et);
    dk_close_in(dk, e != CLOS_STOPPED);
    if (e == CLOS_OK) {
        dk->solved = true;
        info->positions = dk_total(c);
        memcpy(info->level_count, dk->st.cnt, sizeof info->level_count);
        c->n = 0; /* the in-memory arrays hold the last level solved, no more */
    } else if (e == CLOS_STOPPED) {
        /* the state as of the last level finished stays; nothing to add */
    }
    info->layers = 0;
    return e;
}
