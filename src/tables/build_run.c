/* `sow tables build` by the fast builder: levels 0..max_level into a
 * directory, each level solved by build.c and written whole (tmp, fsync,
 * rename), the directory locked, the memory planned up front (tables/tables.h
 * tb_build). */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fast.h"
#include "fileio.h"
#include "lean.h"
#include "util.h"

double tb_memory_budget(const struct tb_build_opts *opt)
{
    double ram = util_phys_memory();
    return opt && opt->memory_bytes > 0 ? opt->memory_bytes : 0.75 * (ram > 0 ? ram : 4e9);
}

double tb_memory_limit(const struct tb_build_opts *opt, const char **by, const char **raise)
{
    double limit = tb_memory_budget(opt);
    /* An address-space limit (ulimit -v) refuses like --memory, up front and
     * saying what fits (docs/cli.md "Exit statuses"); the workspace is reserved
     * as address space, hence the margin. */
    *by = "the memory limit";
    *raise = "--memory";
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        0.75 * (double)as.rlim_cur < limit) {
        limit = 0.75 * (double)as.rlim_cur;
        *by = "3/4 of the address-space limit";
        *raise = "ulimit -v";
    }
    return limit;
}

/* Another builder holds the directory: say so once through the progress
 * callback (level -1, the phase is the message). */
static void build_waiting(void *ctx)
{
    const struct tb_build_opts *opt = ctx;
    if (opt && opt->progress)
        opt->progress(opt->ctx, -1, 0, 0, "waiting for another sow building in this directory");
}

static enum sow_status fast_build(const struct ruleset *rs, const char *dir, int max_level,
                                  const struct tb_build_opts *opt, struct sow_error *e);

enum sow_status tb_build(const struct ruleset *rs, const char *dir, int max_level,
                         const struct tb_build_opts *opt, struct sow_error *e)
{
    if (max_level < 0 || max_level > TB_MAX_LEVEL)
        return sow_fail(e, SOW_E_INPUT,
                        "--seeds %d: levels go up to %d (values are signed bytes, |V| <= n)",
                        max_level, TB_MAX_LEVEL);
    /* Before any work (fileio.h rules 3 and 4): the directory exists, this
     * process alone builds in it, and it can be written. */
    struct fio_lock lock = {-1};
    enum sow_status rc;
    if ((rc = fio_mkdir_p(dir, e)) ||
        (rc = fio_lock_dir(dir, &lock, opt ? opt->stop : NULL, build_waiting, (void *)opt, e)) ||
        (rc = fio_dir_writable(dir, e))) {
        fio_unlock(&lock);
        return rc;
    }
    /* The fast builder for the levels that fit it, the lean one (lean.c)
     * for the rest; --builder forces one. */
    int fast_to = tb_lean_fast_to(rs, dir, max_level, opt);
    rc = fast_to < max_level ? tb_lean_check(rs, dir, max_level, fast_to, opt, e) : SOW_OK;
    if (rc == SOW_OK && fast_to >= 0)
        rc = fast_build(rs, dir, fast_to, opt, e);
    if (rc == SOW_OK && fast_to < max_level)
        rc = tb_lean_build(rs, dir, max_level, fast_to, opt, e);
    fio_unlock(&lock);
    return rc;
}

/* Levels 0..max_level by the fast builder (the directory locked by the
 * caller): the missing ones must fit, refused up front otherwise. */
static enum sow_status fast_build(const struct ruleset *rs, const char *dir, int max_level,
                                  const struct tb_build_opts *opt, struct sow_error *e)
{
    struct tb_set *set = tb_set_new(rs, dir);
    if (!set)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    enum sow_status rc = SOW_OK;
    struct tb_work wk;
    memset(&wk, 0, sizeof wk);
    /* Levels built here, kept in memory for the levels above (huge pages:
     * the exits probe them at random). */
    struct retro_region *built = calloc(TB_MAX_LEVEL + 1, sizeof *built);
    if (!built) {
        tb_close(set);
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    }
    uint64_t maxE = 0;
    const char *by, *raise;
    double limit = tb_memory_limit(opt, &by, &raise);
    /* Existing levels are checked completely; missing ones must fit. */
    double lower_bytes = 0;
    bool missing[TB_MAX_LEVEL + 1] = {0};
    for (int n = 0; n <= max_level; n++) {
        char path[4200];
        tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
        uint64_t E = tb_level_entries(&set->ix, n);
        if (fio_exists(path)) {
            rc = tb_rebuild_hint(tb_set_load_level(set, n, e), e);
            if (rc != SOW_OK)
                goto out;
        }
        if (tb_level_wanted(rs, dir, n, opt && opt->bounds)) {
            missing[n] = true;
            maxE = E > maxE ? E : maxE;
            if (E > TB_MAX_ENTRIES) {
                rc = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d has %llu entries, more than one process indexes (%llu); "
                              "build up to level %d",
                              n, (unsigned long long)E, (unsigned long long)TB_MAX_ENTRIES, n - 1);
                goto out;
            }
            double need = tb_level_memory(&set->ix, n) + lower_bytes +
                          (opt && opt->bounds ? 2.0 * (double)E : 0); /* its bounds */
            if (need > limit) {
                int fit = n - 1;
                rc = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d needs about %.3g GB but %s is %.3g GB (%s); "
                              "levels up to %d fit: use --seeds %d or raise %s",
                              n, need / 1e9, by, limit / 1e9, raise, fit, fit, raise);
                goto out;
            }
        }
        lower_bytes += (double)E;
    }
    /* One workspace for every level, sized for the largest. */
    if (maxE && !tb_fast_work_reserve(&wk, maxE, rs->pits, tb_fast_threads(opt, maxE))) {
        /* Nothing is built yet: a refusal up front, like the memory limit. */
        rc = sow_fail(e, SOW_E_TOO_BIG,
                      "level %d: the workspace does not fit the address space (ulimit -v); "
                      "use a smaller --seeds or raise the limit",
                      max_level);
        goto out;
    }
    for (int n = 0; n <= max_level; n++) {
        if (!missing[n]) {
            if (opt && opt->level_done)
                opt->level_done(opt->ctx, n, set->lv[n].entries, 0, false);
            continue;
        }
        double t0 = util_now();
        uint64_t E = tb_level_entries(&set->ix, n);
        int8_t *v = retro_region_get(&built[n], E ? E : 1, (E >= HUGE_2M ? RETRO_HUGE : 0) | RETRO_SPARE);
        if (!v) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
            goto out;
        }
        int8_t *lohi = opt && opt->bounds ? malloc(E ? 2 * E : 1) : NULL;
        if (opt && opt->bounds && !lohi) {
            rc = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
            goto out;
        }
        rc = tb_fast_solve_level(rs, set, n, v, lohi, opt, &wk, e);
        if (rc == SOW_OK) /* the level file (or the check of the one present), its bounds */
            rc = tb_level_output(set, n, v, lohi, E, e);
        free(lohi);
        if (rc != SOW_OK)
            goto out;
        /* The written file holds exactly v: the next levels probe v itself. */
        tb_set_put_level(set, n, v, E);
        if (opt && opt->level_done)
            opt->level_done(opt->ctx, n, E, util_now() - t0, true);
        if (opt && opt->stop && *opt->stop) {
            rc = SOW_E_INTERRUPTED;
            goto out;
        }
    }
out:
    tb_close(set);
    tb_fast_work_free(&wk);
    for (int n = 0; n <= max_level; n++)
        retro_region_free(&built[n]);
    free(built);
    return rc;
}

