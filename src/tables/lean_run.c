/* The lean builder's levels 0..max into a directory (tb_build's lean path,
 * tables/tb_lean.h): the memory planned up front, lower levels pinned on huge
 * pages, each level solved by lean.c and written whole. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compress.h"
#include "lean_level.h"
#include "fileio.h"
#include "lean.h"
#include "util.h"

/* SOW_LEAN_STATS: the level's counts and phase times (dt: moves, edges,
 * solve, finish) on stderr. */
void tb_lean_stats(const struct lean *L, uint64_t edges, uint64_t nblk, const double *peak,
                   const double *dt)
{
    fprintf(stderr,
            "lean %s level %d: %llu entries, %llu in-level moves, %llu rounds, %llu pend "
            "scans, %llu block reads (%llu blocks), %llu list reads, %.2f B/pos; "
            "%llu decrements, %llu claims (%llu on L nodes already final); %llu of %llu seed "
            "blocks scanned in %.2f thread-s, %.2f thread-s idle at rounds' ends; %llu batches "
            "of exits into compressed levels; moves %.2f s, edges %.2f s, solve %.2f s, "
            "finish %.2f s\n",
            L->rs->name, L->n, (unsigned long long)L->E, (unsigned long long)edges,
            (unsigned long long)L->rounds, (unsigned long long)L->scans,
            (unsigned long long)L->reads, (unsigned long long)nblk, (unsigned long long)L->sreads,
            peak && L->E ? *peak / (double)L->E : 0.0, (unsigned long long)L->decs,
            (unsigned long long)L->claims, (unsigned long long)L->dropped,
            (unsigned long long)L->sblocks, (unsigned long long)(L->nsb * L->rounds), L->scan, L->idle,
            (unsigned long long)L->zbatches, dt[0], dt[1], dt[2], dt[3]);
}

void tb_lean_work_free(struct lean_work *w)
{
    retro_region_free(&w->nd);
    retro_region_free(&w->lfin);
    retro_region_free(&w->pend);
    retro_region_free(&w->vmask);
}

/* One level solved alone (tables/tb_lean.h). */
enum sow_status tb_lean_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                                    int8_t *out, const struct tb_build_opts *opt,
                                    double *peak_bytes, struct sow_error *e)
{
    struct lean_work wk;
    memset(&wk, 0, sizeof wk);
    enum sow_status rc = tb_lean_level(rs, lower, n, out, NULL, opt, &wk, NULL, peak_bytes, NULL, NULL, e);
    tb_lean_work_free(&wk);
    return rc;
}

/* A lower level, read at random by the exits of every level above it: kept
 * in anonymous memory on huge pages instead of the file's 4 KB page-cache
 * pages (over GBs of lower levels the TLB misses grow with the level).  Same
 * bytes as the mapping (the budget counts one per entry either way); left
 * mapped when the copy cannot be had. */
static void lean_pin_level(struct tb_set *set, int n)
{
    struct tb_level *lv = &set->lv[n];
    const size_t huge = (size_t)2 << 20;
    if (!lv->v || lv->own || lv->entries < huge)
        return;
    size_t len = (lv->entries + huge - 1) & ~(huge - 1);
    void *m = NULL;
    if (posix_memalign(&m, huge, len) != 0)
        return;
    madvise(m, len, MADV_HUGEPAGE);
    /* in slices, each slice's mapped pages dropped once copied: the level is
     * not held twice (the largest level's copy was the build's peak) */
    const size_t slice = (size_t)64 << 20, page = 4096;
    uintptr_t done = (uintptr_t)lv->map; /* pages below it dropped */
    for (size_t at = 0; at < lv->entries; at += slice) {
        size_t k = lv->entries - at < slice ? lv->entries - at : slice;
        memcpy((char *)m + at, lv->v + at, k);
        /* only whole pages copied (a decompressed level's mapping is
         * anonymous: dropped pages read back as zeros) */
        uintptr_t to = ((uintptr_t)(lv->v + at + k)) & ~(uintptr_t)(page - 1);
        if (lv->map && to > done) {
            util_drop_pages((const void *)done, to - done);
            done = to;
        }
    }
    tb_set_own_level(set, n, m, NULL, lv->entries);
}

/* ---- lower levels compressed ---------------------------------------------------
 * A level whose lower levels do not fit the budget raw (one byte an entry)
 * is built over them compressed: every lower level's file is rewritten in
 * format version 2 (as `sow tables compress` does), kept compressed and
 * mapped, and the move pass queues its exits into them and answers them a
 * batch at a time, block by block (lean_exits.c), in the memory the solve
 * later gives its work lists.  Only the blocks the exits reach are read
 * from the mappings; their checked pages are dropped after loading.  If
 * that is not enough, the level's work lists and held updates are cut by
 * 2, then 4 (more nodes wait in the pend bitmap: the same values, more
 * scans). */

#define LZ_SQUEEZE_MAX 2
#define LZ_GUESS 0.5          /* stored / raw of a level not compressed yet (awari about 0.5) */
#define LZ_QUEUE_MIN 4096.0   /* exits a thread queues at the least */

struct lplan {
    bool z;         /* lower levels compressed */
    int squeeze;    /* lists and held updates 2^squeeze times shorter */
    double need;    /* bytes at the peak: the level, its lower levels */
    uint64_t zcap;  /* exits a thread queues in the move pass (z) */
};

/* How level n (E entries) fits `limit` over lower levels of `raw` bytes
 * (`stored` compressed): raw if it can (and the tests do not force the
 * compressed path), else compressed with the least squeeze that fits, the
 * move pass's queues taking what the solve's lists will.  False if nothing
 * fits (p->need: the least it would take). */
static bool lean_plan(const struct ruleset *rs, uint64_t E, int T, double raw, double stored,
                      double extra, double limit, const struct tb_build_opts *opt,
                      struct lplan *p)
{
    *p = (struct lplan){.need = tb_lean_memory(rs, E, T, 0) + raw + extra};
    uint64_t force = opt ? opt->lean_zqueue : 0;
    if (!force && p->need <= limit)
        return true;
    p->z = true;
    double fixed = tb_lean_memory(rs, E, T, -1) + stored + extra;
    for (int s = 0; s <= LZ_SQUEEZE_MAX; s++) {
        p->squeeze = s;
        p->need = tb_lean_memory(rs, E, T, s) + stored + extra;
        double q = (limit - fixed) / (32.0 * T);
        if (force || (p->need <= limit && q >= LZ_QUEUE_MIN)) {
            p->zcap = force ? force : (uint64_t)(q < (double)E ? q : (double)E);
            return true;
        }
    }
    if (p->need < fixed + 32.0 * T * LZ_QUEUE_MIN)
        p->need = fixed + 32.0 * T * LZ_QUEUE_MIN;
    return false;
}

/* The "compress" phase of level n's progress while its lower levels are
 * rewritten: done of raw positions before the level being written, which
 * holds size of them. */
struct lower_tell {
    const struct tb_build_opts *opt;
    int n;
    uint64_t E;
    double done, raw, size;
};

static void lower_progress(void *ctx, double frac)
{
    const struct lower_tell *t = ctx;
    t->opt->progress(t->opt->ctx, t->n, t->E, (t->done + frac * t->size) / t->raw, "compress");
}

/* Level m of the set, raw, rewritten compressed and loaded so (its checked
 * pages dropped); compressed levels are left as they are.  tell: the
 * writing's progress as level tell->n's (NULL: none). */
static enum sow_status lean_compress_lower(struct tb_set *set, int m,
                                           const struct tb_build_opts *opt,
                                           struct lower_tell *tell, struct sow_error *e)
{
    struct tb_level *lv = &set->lv[m];
    if (lv->z && !lv->v)
        return SOW_OK;
    uint64_t raw, stored;
    tb_set_unload_level(set, m);
    /* (a level of a GB takes a minute: Ctrl-C stops it, the file left raw) */
    const struct tbz_write_opts wo = {.threads = opt ? opt->threads : 0,
                                      .stop = opt ? opt->stop : NULL,
                                      .progress = tell ? lower_progress : NULL,
                                      .ctx = tell};
    enum sow_status st = tb_compress_level(&set->rs, set->dir, m, &wo, &raw, &stored, NULL, e);
    if (st == SOW_OK)
        st = tb_set_load_level(set, m, e);
    if (st == SOW_OK && lv->map)
        madvise(lv->map, lv->maplen, MADV_DONTNEED);
    return st;
}

/* Bytes of levels 0..n-1: raw, and stored (compressed ones as they are, the
 * others guessed). */
static void lower_bytes(const struct tb_set *set, int n, double *raw, double *stored)
{
    *raw = *stored = 0;
    for (int m = 0; m < n; m++) {
        double E = (double)tb_level_entries(&set->ix, m);
        *raw += E;
        *stored += set->lv[m].z && !set->lv[m].v ? (double)tbz_stored(set->lv[m].z) : LZ_GUESS * E;
    }
}

/* Level n's plan against the budget, its lower levels compressed if it
 * says so (then checked again with their stored sizes: SOW_E_TOO_BIG if
 * nothing fits). */
static enum sow_status lean_prepare(struct tb_set *set, int n, const struct tb_build_opts *opt,
                                    struct lean_work *wk, struct sow_error *e)
{
    uint64_t E = tb_level_entries(&set->ix, n);
    int T = tb_lean_threads(opt, E);
    double raw, stored, extra = opt && opt->bounds ? 2.0 * (double)E : 0;
    struct lplan p;
    lower_bytes(set, n, &raw, &stored);
    wk->squeeze = 0;
    wk->zcap = 0;
    lean_plan(&set->rs, E, T, raw, stored, extra, tb_memory_budget(opt), opt, &p);
    if (!p.z)
        return SOW_OK; /* raw fits */
    set->keep_compressed = true;
    bool some = false; /* a raw lower level left to compress */
    for (int m = 0; m < n; m++)
        some |= set->lv[m].v != NULL;
    if (some && opt && opt->progress && !opt->lean_zqueue) {
        char note[200];
        snprintf(note, sizeof note,
                 "level %d needs about %.3g GB over its lower levels raw, more than the limit "
                 "(%.3g GB): they are rewritten compressed and kept so",
                 n, (tb_lean_memory(&set->rs, E, T, 0) + raw + extra) / 1e9,
                 tb_memory_budget(opt) / 1e9);
        opt->progress(opt->ctx, -1, 0, 0, note);
    }
    struct lower_tell tell = {.opt = opt, .n = n, .E = E, .raw = raw};
    bool telling = opt && opt->progress && raw > 0;
    for (int m = 0; m < n; m++) {
        tell.size = (double)tb_level_entries(&set->ix, m);
        if (telling)
            opt->progress(opt->ctx, n, E, tell.done / raw, "compress");
        enum sow_status st = lean_compress_lower(set, m, opt, telling ? &tell : NULL, e);
        if (st != SOW_OK)
            return st;
        tell.done += tell.size;
    }
    lower_bytes(set, n, &raw, &stored); /* now the stored sizes */
    if (!lean_plan(&set->rs, E, T, raw, stored, extra, tb_memory_budget(opt), opt, &p))
        return sow_fail(e, SOW_E_TOO_BIG,
                        "level %d needs about %.3g GB with the lean builder over its lower "
                        "levels compressed, but the memory limit is %.3g GB (--memory)",
                        n, p.need / 1e9, tb_memory_budget(opt) / 1e9);
    wk->squeeze = p.squeeze;
    wk->zcap = p.zcap;
    return SOW_OK;
}

/* ---- the build (tb_build's lean path) --------------------------------------- */

/* To be built: the level file missing, or its bounds file when the build
 * writes them. */
static bool level_missing(const struct ruleset *rs, const char *dir, int n,
                          const struct tb_build_opts *opt)
{
    return tb_level_wanted(rs, dir, n, opt && opt->bounds);
}

/* The up-front refusal of a missing level n of E entries over `lower`
 * entries below it. */
static enum sow_status lean_refuse(const struct ruleset *rs, int n, uint64_t E, double lower,
                                   const struct tb_build_opts *opt, double limit,
                                   struct sow_error *e)
{
    uint64_t max = tb_lean_max_entries(rs);
    if (E > max)
        return sow_fail(e, SOW_E_TOO_BIG,
                        "level %d has %llu entries, more than one process indexes (%llu); "
                        "build up to level %d",
                        n, (unsigned long long)E, (unsigned long long)max, n - 1);
    struct lplan p;
    if (!lean_plan(rs, E, tb_lean_threads(opt, E), lower, LZ_GUESS * lower,
                   opt && opt->bounds ? 2.0 * (double)E : 0 /* its bounds */, limit, opt, &p))
        return sow_fail(e, SOW_E_TOO_BIG,
                        "level %d needs about %.3g GB with the lean builder (its lower levels "
                        "compressed) but the memory limit is %.3g GB (--memory); levels up "
                        "to %d fit: use --seeds %d or raise --memory",
                        n, p.need / 1e9, limit / 1e9, n - 1, n - 1);
    return SOW_OK;
}

enum sow_status tb_lean_check(const struct ruleset *rs, const char *dir, int max_level,
                              int from, const struct tb_build_opts *opt, struct sow_error *e)
{
    struct tb_index *ix = malloc(sizeof *ix);
    if (!ix)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    tb_index_init(ix, rs);
    double limit = tb_memory_budget(opt), lower = 0;
    enum sow_status rc = SOW_OK;
    for (int n = 0; n <= max_level && rc == SOW_OK; n++) {
        uint64_t E = tb_level_entries(ix, n);
        if (n > from && level_missing(rs, dir, n, opt))
            rc = lean_refuse(rs, n, E, lower, opt, limit, e);
        lower += (double)E;
    }
    free(ix);
    return rc;
}

enum sow_status tb_lean_build(const struct ruleset *rs, const char *dir, int max_level,
                              int built_to, const struct tb_build_opts *opt,
                              struct sow_error *e)
{
    struct tb_set *set = tb_set_new(rs, dir);
    if (!set)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    struct lean_work wk;
    memset(&wk, 0, sizeof wk);
    enum sow_status rc = SOW_OK;
    bool missing[TB_MAX_LEVEL + 1] = {0};
    double ratio = 0;
    /* Existing levels are checked completely (the missing ones were checked
     * to fit by tb_lean_check, lower levels counted). */
    for (int n = 0; n <= max_level; n++)
        missing[n] = level_missing(rs, dir, n, opt);
    /* lower levels compressed from the first level built (a resumed build
     * finds them so): loaded compressed, not pinned */
    for (int n = 0; n <= max_level; n++)
        if (missing[n]) {
            struct lplan p;
            double raw = 0;
            for (int m = 0; m < n; m++)
                raw += (double)tb_level_entries(&set->ix, m);
            uint64_t E = tb_level_entries(&set->ix, n);
            lean_plan(rs, E, tb_lean_threads(opt, E), raw, LZ_GUESS * raw,
                      opt && opt->bounds ? 2.0 * (double)E : 0, tb_memory_budget(opt), opt, &p);
            set->keep_compressed = p.z;
            break;
        }
    for (int n = 0; n <= max_level; n++) {
        char path[4200];
        tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
        if (access(path, F_OK) == 0) {
            rc = tb_rebuild_hint(tb_set_load_level(set, n, e), e);
            if (rc != SOW_OK)
                goto out;
            if (!set->keep_compressed)
                lean_pin_level(set, n);
        }
    }
    for (int n = 0; n <= max_level; n++) {
        uint64_t E = tb_level_entries(&set->ix, n);
        if (!missing[n]) {
            if (opt && opt->level_done && n > built_to)
                opt->level_done(opt->ctx, n, E, 0, false);
            continue;
        }
        double t0 = util_now(), peak = 0;
        int8_t *v = NULL, *lohi = opt && opt->bounds ? malloc(E ? 2 * E : 1) : NULL;
        if (opt && opt->bounds && !lohi) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
            goto out;
        }
        rc = lean_prepare(set, n, opt, &wk, e);
        if (rc == SOW_OK)
            rc = tb_lean_level(rs, set, n, NULL, lohi, opt, &wk, &v, &peak, &ratio, dir, e);
        bool had = set->lv[n].v || set->lv[n].z; /* present: solved again for its bounds */
        if (rc == SOW_OK) /* the level file (or the check of the one present), its bounds */
            rc = tb_level_output(set, n, v, lohi, E, e);
        free(lohi);
        /* The levels above read this one from its file (mapped, checked);
         * the last level's file is checked with the solve's memory given
         * back, and neither it nor the level is held twice. */
        if (n == max_level)
            tb_lean_work_free(&wk);
        if (rc == SOW_OK && !had)
            rc = tb_set_load_level(set, n, e);
        if (rc == SOW_OK && n < max_level)
            rc = set->keep_compressed ? lean_compress_lower(set, n, opt, NULL, e)
                                      : (lean_pin_level(set, n), SOW_OK);
        if (rc != SOW_OK)
            goto out;
        if (opt && opt->level_info)
            opt->level_info(opt->ctx, n, E, "lean", peak);
        if (opt && opt->level_done)
            opt->level_done(opt->ctx, n, E, util_now() - t0, true);
        if (tb_stopped(opt)) {
            rc = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
            goto out;
        }
    }
out:
    tb_close(set);
    tb_lean_work_free(&wk);
    return rc;
}

int tb_lean_fast_to(const struct ruleset *rs, const char *dir, int max_level,
                    const struct tb_build_opts *opt)
{
    int want = opt ? opt->builder : TB_BUILDER_AUTO;
    if (want == TB_BUILDER_FAST || max_level < 0 || max_level > TB_MAX_LEVEL)
        return max_level; /* build.c reports a bad level */
    if (want == TB_BUILDER_LEAN)
        return -1;
    /* auto: the fast builder up to the first missing level that does not
     * fit it (its own check: the level's workspace and the levels below) */
    struct tb_index *ix = malloc(sizeof *ix);
    if (!ix)
        return -1;
    tb_index_init(ix, rs);
    double limit = tb_memory_budget(opt), lower = 0;
    int fast_to = max_level;
    bool any = false; /* a missing level below it */
    for (int n = 0; n <= max_level; n++) {
        uint64_t E = tb_level_entries(ix, n);
        if (E > TB_MAX_ENTRIES) { /* past the fast builder's indices: lean (or refused) */
            fast_to = n - 1;
            break;
        }
        bool miss = level_missing(rs, dir, n, opt);
        double bounds = opt && opt->bounds ? 2.0 * (double)E : 0; /* as fast_build counts */
        if (miss && tb_level_memory(ix, n) + lower + bounds > limit) {
            fast_to = n - 1;
            break;
        }
        any |= miss;
        lower += (double)E;
    }
    free(ix);
    return fast_to < max_level && !any ? -1 : fast_to;
}

