/* The in-memory closure's checkpoints (env->work): the files, their
 * header and checksums, and what is saved and resumed (below).  Part of the
 * closure solver: closure_internal.h maps its files. */
#include <dirent.h>
#include <errno.h>

#include "closure_internal.h"
#include "container.h"
#include "fileio.h"

/* ---- checkpoints (env->work; docs/solutions.md "Resuming") ----
 *
 * DIR/closure.keys: written once the closure is expanded and numbered by
 * level; DIR/closure.values: lo, hi, v of the levels solved so far,
 * rewritten (temporary file, renamed) at most every CKPT_EVERY seconds and
 * when the solve is stopped.  Both: a 64-byte header
 *   magic[8] | u64 payload bytes | u64 XXH3-64 of the payload | u64 XXH3-64
 *   of the header's first 24 bytes | 32 reserved
 * then the payload: struct ck_meta, and the keys (N x K x u64) or the
 * values (3 arrays of start[levels_done + 1] int8).  A checkpoint whose
 * rule set, size, root key or table cut differ from the solve's, or whose
 * checksums fail, is ignored (the solve starts over and replaces it).
 *
 * DIR/closure.expand: the expansion between two rounds (struct exp_state),
 * written when the solve is stopped while expanding, when the budget
 * refuses the next layer, and at most every CKPT_EVERY seconds at a layer's
 * start: payload struct ck_meta (levels_done -1, start[] 0, the counters of
 * the nodes expanded so far), struct exp_state, then the keys of the n
 * positions found, in the order found.  A rerun goes on from there exactly
 * as the uninterrupted expansion would have (the same positions, the same
 * node counts); it is removed once closure.keys is written. */

/* The 32-byte sealed part of a checkpoint's 64-byte header (container.h). */
#define CK_SEAL 24

bool clos_ck_write(const char *dir, const char *name, const char *magic, const void *const *parts,
                   const uint64_t *sizes, int np)
{
    struct sow_error e;
    return clos_ck_write_e(dir, name, magic, parts, sizes, np, &e);
}

bool clos_ck_write_e(const char *dir, const char *name, const char *magic,
                     const void *const *parts, const uint64_t *sizes, int np, struct sow_error *e)
{
    char path[4096], tmp[4200];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        sow_fail(e, SOW_E_INPUT, "%s/%s: path too long", dir, name);
        return false; /* a path past PATH_MAX: no file */
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    XXH3_state_t *xs = XXH3_createState();
    if (!xs) {
        sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
        return false;
    }
    XXH3_64bits_reset(xs);
    uint64_t total = 0;
    for (int k = 0; k < np; k++) {
        XXH3_64bits_update(xs, parts[k], (size_t)sizes[k]);
        total += sizes[k];
    }
    uint8_t h[CK_HEAD] = {0};
    memcpy(h, magic, 8);
    ct_put64(h + 8, total);
    ct_put64(h + 16, XXH3_64bits_digest(xs));
    XXH3_freeState(xs);
    ct_seal(h, CK_SEAL);
    /* fileio.h rule 2, the temporary file's name this solve's own (a
     * leftover of a killed run is removed, never opened or followed) */
    struct fio_out o;
    if (fio_out_begin(&o, path, tmp, e) != SOW_OK)
        return false;
    enum sow_status st = fio_write_all(&o, h, CK_HEAD, e);
    for (int k = 0; st == SOW_OK && k < np; k++)
        st = fio_write_all(&o, parts[k], (size_t)sizes[k], e);
    if (st == SOW_OK)
        return fio_out_commit(&o, e) == SOW_OK;
    fio_out_abort(&o);
    return false;
}

/* Is name one the solver writes in a --work directory (closure.h)? */
static bool ck_name(const char *name)
{
    static const char *const fixed[] = {"closure.keys", "closure.values", "closure.expand",
                                        "disk.state"};
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
        if (strcmp(name, fixed[k]) == 0)
            return true;
    size_t n = strlen(name);
    return (strncmp(name, "disk-", 5) == 0 &&
            ((n > 10 && strcmp(name + n - 5, ".keys") == 0) ||
             (n > 12 && strcmp(name + n - 7, ".values") == 0))) ||
           (strncmp(name, "level-", 6) == 0 && n > 9 && strcmp(name + n - 3, ".ck") == 0);
}

enum sow_status clos_work_check(const char *dir, struct sow_error *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return sow_fail(e, SOW_E_INPUT, "%s: cannot read the directory: %s", dir,
                        strerror(errno));
    enum sow_status st = SOW_OK;
    struct dirent *de;
    char path[4200];
    while (st == SOW_OK && (de = readdir(d)))
        if (ck_name(de->d_name)) {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            st = fio_check_target(path, e); /* absent (raced away) or regular: fine */
        }
    closedir(d);
    if (st != SOW_OK && e) {
        char why[sizeof e->msg];
        snprintf(why, sizeof why, "%s", e->msg);
        sow_fail(e, st, "%s (the solve's checkpoint there: remove it or use another --work)",
                 why);
    }
    return st;
}

FILE *clos_fopen_in(const char *path)
{
    int fd;
    struct sow_error e;
    if (fio_open_input(path, &fd, &e) != SOW_OK) /* never waits on a FIFO (rule 1) */
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

/* Read DIR/name into parts (sizes known: the header must agree). */
bool clos_ck_read(const char *dir, const char *name, const char *magic, void *const *parts,
                  const uint64_t *sizes, int np)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return false;
    int fd;
    struct sow_error e;
    if (fio_open_input(path, &fd, &e) != SOW_OK) /* never waits on a FIFO (rule 1) */
        return false;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return false;
    }
    uint8_t h[CK_HEAD];
    uint64_t want = 0, sum = 0;
    for (int k = 0; k < np; k++)
        want += sizes[k];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && memcmp(h, magic, 8) == 0 &&
              ct_sealed(h, CK_SEAL) && ct_get64(h + 8) == want;
    if (ok)
        sum = ct_get64(h + 16);
    XXH3_state_t *xs = ok ? XXH3_createState() : NULL;
    ok = ok && xs;
    if (ok)
        XXH3_64bits_reset(xs);
    for (int k = 0; ok && k < np; k++) {
        ok = fread(parts[k], 1, (size_t)sizes[k], f) == (size_t)sizes[k];
        if (ok)
            XXH3_64bits_update(xs, parts[k], (size_t)sizes[k]);
    }
    ok = ok && fgetc(f) == EOF && XXH3_64bits_digest(xs) == sum;
    if (xs)
        XXH3_freeState(xs);
    fclose(f);
    return ok;
}

void clos_ck_meta_of(const struct clos *c, const struct clos_env *env, int tbmax,
                     const uint64_t *root, struct ck_meta *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->rules, sizeof m->rules, "%s", c->rs->name);
    m->pits = (uint32_t)c->pits;
    m->K = (uint32_t)c->K;
    m->tbmax = tbmax;
    m->levels_done = -1;
    m->n = c->n;
    memcpy(m->root, root, sizeof *root * (size_t)c->K);
    memcpy(m->start, c->start, sizeof m->start);
    for (int t = 0; t < env->threads; t++) {
        m->nodes += env->nodes[t];
        m->visits += env->visits[t];
        m->tb_hits += env->tb_hits[t];
    }
}

/* A checkpoint of the in-memory closure written, or a note saying why not:
 * a checkpoint only shortens a rerun, so the solve goes on without it (disk
 * full, a directory that went away), but the user is told. */
static bool ck_save(const struct clos_env *env, const char *name, const char *magic,
                    const void *const *parts, const uint64_t *sizes, int np)
{
    struct sow_error e;
    if (clos_ck_write_e(env->work, name, magic, parts, sizes, np, &e))
        return true;
    double last = 0;
    clos_say(env, &last, true, "note: checkpoint %s not saved (%s): the solve goes on, a rerun "
             "resumes from an earlier one", name, e.msg);
    return false;
}

bool clos_ck_save_keys(const struct clos *c, const struct clos_env *env, int tbmax,
                       const uint64_t *root, const struct ck_meta *base)
{
    struct ck_meta m;
    clos_ck_meta_of(c, env, tbmax, root, &m);
    /* the counters of this build's expansion alone */
    m.nodes -= base->nodes;
    m.visits -= base->visits;
    m.tb_hits -= base->tb_hits;
    const void *parts[2] = {&m, c->key};
    uint64_t sizes[2] = {sizeof m, c->n * 8 * (uint64_t)c->K};
    return ck_save(env, "closure.keys", "SOWCKPK1", parts, sizes, 2);
}

bool clos_ck_save_values(const struct clos *c, const struct clos_env *env, int done)
{
    struct ck_meta m;
    memset(&m, 0, sizeof m);
    m.levels_done = done;
    m.n = c->n;
    uint64_t upto = c->start[done + 1];
    const void *parts[4] = {&m, c->lo, c->hi, c->v};
    uint64_t sizes[4] = {sizeof m, upto, upto, upto};
    return ck_save(env, "closure.values", "SOWCKPV1", parts, sizes, 4);
}

bool clos_ck_save_expand(const struct clos *c, const struct clos_env *env,
                         const struct exp_ck *ck, const struct exp_state *st)
{
    struct ck_meta m;
    clos_ck_meta_of(c, env, ck->tbmax, ck->root, &m);
    memset(m.start, 0, sizeof m.start);
    m.nodes -= ck->base->nodes;
    m.visits -= ck->base->visits;
    m.tb_hits -= ck->base->tb_hits;
    const void *parts[3] = {&m, st, c->key};
    uint64_t sizes[3] = {sizeof m, sizeof *st, c->n * 8 * (uint64_t)c->K};
    return ck_save(env, "closure.expand", "SOWCKPE1", parts, sizes, 3);
}

/* The expansion checkpoint, if it is this solve's: keys [0, n) loaded (the
 * set is rebuilt by the caller), *st as saved, the counters added. */
enum clos_err clos_ck_load_expand(struct clos *c, const struct clos_env *env, int tbmax,
                                  const uint64_t *root, struct exp_state *st, bool *loaded)
{
    *loaded = false;
    char path[4096];
    snprintf(path, sizeof path, "%s/closure.expand", env->work);
    FILE *f = clos_fopen_in(path);
    if (!f)
        return CLOS_OK;
    struct ck_meta m, want;
    struct exp_state x;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m &&
              fread(&x, 1, sizeof x, f) == sizeof x;
    fclose(f);
    clos_ck_meta_of(c, env, tbmax, root, &want);
    if (!ok || strcmp(m.rules, want.rules) != 0 || m.pits != want.pits || m.K != want.K ||
        m.tbmax != tbmax || memcmp(m.root, root, 8 * (size_t)c->K) != 0 || !m.n ||
        m.n > MAX_NODES || x.a > x.end || x.end > m.n || x.layers == 0)
        return CLOS_OK;
    enum clos_err e = clos_grow_nodes(c, env, m.n);
    if (e != CLOS_OK)
        return e;
    void *parts[3] = {&want, &x, c->key};
    uint64_t sizes[3] = {sizeof m, sizeof x, m.n * 8 * (uint64_t)c->K};
    if (!clos_ck_read(env->work, "closure.expand", "SOWCKPE1", parts, sizes, 3) ||
        memcmp(c->key, root, 8 * (size_t)c->K) != 0) /* node 0 is the root */
        return CLOS_OK;
    c->n = m.n;
    *st = x;
    env->nodes[0] += want.nodes;
    env->visits[0] += want.visits;
    env->tb_hits[0] += want.tb_hits;
    *loaded = true;
    return CLOS_OK;
}

/* Load the keys checkpoint if it is this solve's; then the values of the
 * levels it had solved (*done, -1 if none). */
enum clos_err clos_ck_load(struct clos *c, const struct clos_env *env, int tbmax,
                           const uint64_t *root, int *done, bool *loaded)
{
    *loaded = false;
    *done = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/closure.keys", env->work);
    FILE *f = clos_fopen_in(path);
    if (!f)
        return CLOS_OK;
    struct ck_meta m;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m;
    fclose(f);
    struct ck_meta want;
    clos_ck_meta_of(c, env, tbmax, root, &want);
    if (!ok || strcmp(m.rules, want.rules) != 0 || m.pits != want.pits || m.K != want.K ||
        m.tbmax != tbmax || memcmp(m.root, root, 8 * (size_t)c->K) != 0 || !m.n ||
        m.n > MAX_NODES || m.start[SOW_MAX_SEEDS + 1] != m.n)
        return CLOS_OK;
    enum clos_err e = clos_grow_nodes(c, env, m.n);
    if (e != CLOS_OK)
        return e;
    void *parts[2] = {&want, c->key};
    uint64_t sizes[2] = {sizeof m, m.n * 8 * (uint64_t)c->K};
    double last = 0;
    if (!clos_ck_read(env->work, "closure.keys", "SOWCKPK1", parts, sizes, 2)) {
        /* this solve's checkpoint by its header, but its checksum fails */
        clos_say(env, &last, true, "note: %s: damaged, ignored (the solve starts over)", path);
        return CLOS_OK;
    }
    for (uint64_t i = 0; i < m.n; i++) { /* the keys are where their levels say */
        int lv = key_level(&c->key[i * c->K], c->K);
        if (i < m.start[lv] || i >= m.start[lv + 1])
            return CLOS_OK;
    }
    c->n = m.n;
    memcpy(c->start, m.start, sizeof c->start);
    env->nodes[0] += m.nodes;
    env->visits[0] += m.visits;
    env->tb_hits[0] += m.tb_hits;
    *loaded = true;
    /* values */
    snprintf(path, sizeof path, "%s/closure.values", env->work);
    f = clos_fopen_in(path);
    if (!f)
        return CLOS_OK;
    ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m;
    fclose(f);
    if (!ok || m.n != c->n || m.levels_done < 0 || m.levels_done > SOW_MAX_SEEDS)
        return CLOS_OK;
    uint64_t upto = c->start[m.levels_done + 1];
    void *vp[4] = {&want, c->lo, c->hi, c->v};
    uint64_t vs[4] = {sizeof m, upto, upto, upto};
    if (clos_ck_read(env->work, "closure.values", "SOWCKPV1", vp, vs, 4))
        *done = m.levels_done;
    else
        clos_say(env, &last, true, "note: %s: damaged, ignored (its levels are solved again)", path);
    return CLOS_OK;
}
