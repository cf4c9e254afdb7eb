/* The atlas: solve one start position within a time budget.
 *
 * Exact phase: search_solve in exact mode, stopped by a watchdog thread at the
 * budget (search_opts.stop), then search_move_values to list every first move
 * that achieves the value.  If the budget runs out first, a bounded phase
 * (search_solve with a time limit: iterative deepening whose cut leaves fail
 * the side trying to prove) reports the bounds it proved; the exact phase's
 * work is lost for them except through the transposition table, which is why
 * the bounded phase gets a quarter of the budget on top.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sow/position.h"
#include "sow/search.h"
#include "tables/tables.h"
#include "util.h"
#include "variants/variants.h"
#include "watch.h"

/* ---- watchdog: the solver's stop flag set at a deadline or when the user
 * stops (watch.h) ---- */

static bool user_quit(void *arg)
{
    volatile int *user = arg;
    return user && *user;
}

/* -1 if the watch's thread could not be started. */
static int watchdog_start(struct watch *w, double seconds, volatile int *user)
{
    watch_start(w, CLOCK_MONOTONIC, seconds > 0 ? util_now() + seconds : 0, user_quit,
                (void *)user);
    return w->running ? 0 : -1;
}

static bool user_stopped(const struct var_atlas_opts *o)
{
    return o->stop && *o->stop;
}

static void note(const struct var_atlas_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const struct var_atlas_opts *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->progress(o->progress_arg, buf);
}

/* ---- tables ---- */

struct tb_note {
    const struct var_atlas_opts *o;
    const char *rules;
};

static void tb_level_note(void *ctx, int level, uint64_t entries, double seconds, bool built)
{
    struct tb_note *t = ctx;
    if (built)
        note(t->o, "tables %s: level %d built (%llu positions, %.2f s)", t->rules, level,
             (unsigned long long)entries, seconds);
}

/* Build the missing small levels (at most o->tb_build_entries each, never
 * above the start's level) and load what is there.  NULL set on failure:
 * the atlas then goes on without tables and says why. */
static struct tb_set *tables_prepare(const struct ruleset *rs, const struct var_atlas_opts *o,
                                     int total, struct var_atlas_result *r)
{
    struct sow_error e;
    if (!o->tables_dir)
        return NULL;
    if (o->tb_build_entries > 0) {
        struct tb_index ix;
        tb_index_init(&ix, rs);
        int top = -1;
        while (top + 1 <= total && top + 1 <= TB_MAX_LEVEL &&
               tb_level_entries(&ix, top + 1) <= o->tb_build_entries)
            top++;
        if (top >= 0) {
            struct tb_note tn = {o, rs->name};
            struct tb_build_opts bo = {0};
            bo.threads = o->threads;
            bo.stop = (volatile sig_atomic_t *)o->stop;
            bo.level_done = tb_level_note;
            bo.ctx = &tn;
            double t0 = util_now();
            enum sow_status rc = tb_build(rs, o->tables_dir, top, &bo, &e);
            r->tb_seconds = util_now() - t0;
            if (rc != SOW_OK && rc != SOW_E_INTERRUPTED)
                note(o, "tables %s 2x%d: not built (%s); going on without", rs->name, rs->pits,
                     e.msg);
            if (rc == SOW_E_INTERRUPTED || user_stopped(o))
                return NULL;
        }
    }
    struct tb_set *set;
    if (tb_open(rs, o->tables_dir, &set, &e) != SOW_OK) {
        note(o, "tables %s 2x%d: not used (%s)", rs->name, rs->pits, e.msg);
        return NULL;
    }
    r->tb_level = tb_max_level(set);
    if (r->tb_level < 0) {
        tb_close(set);
        return NULL;
    }
    return set;
}

/* ---- the instance ---- */

/* Tiny instances do not need the full table, and clearing 64 MiB costs more
 * than solving them: about 16 bytes per position of the levels <= n, rounded
 * up to a power of two MiB, capped by the option. */
static unsigned hash_for(const struct ruleset *rs, int n, unsigned cap)
{
    struct tb_index ix;
    tb_index_init(&ix, rs);
    double pos = 0;
    for (int l = 0; l <= n && l <= TB_MAX_LEVEL; l++)
        pos += (double)tb_level_entries(&ix, l);
    unsigned mb = 1;
    while (mb < cap && (double)mb * 1048576.0 < 16.0 * pos)
        mb *= 2;
    return mb < cap ? mb : cap;
}

static void best_string(const struct ruleset *rs, int side, struct var_atlas_result *r,
                        bool partial)
{
    size_t len = 0;
    r->best_str[0] = 0;
    for (int i = 0; i < r->nbest; i++) {
        char m[16];
        move_format(rs, side, r->best[i], m, sizeof m);
        len += (size_t)snprintf(r->best_str + len, sizeof r->best_str - len, "%s%s",
                                i ? " " : "", m);
        if (len >= sizeof r->best_str)
            break;
    }
    if (partial && len + 2 < sizeof r->best_str)
        strcat(r->best_str, "?");
    if (!r->best_str[0])
        strcpy(r->best_str, "-");
}

static void search_note(void *arg, const char *line)
{
    const struct var_atlas_opts *o = arg;
    note(o, "  %s", line);
}

/* One instance being solved: its start, the tables, the watchdog and the
 * search, shared by the phases below. */
struct atlas_solve {
    const struct ruleset *rs;
    const struct var_atlas_opts *o;
    struct var_atlas_result *r;
    struct sow_error *e;
    double t0;
    sow_position p;
    int n; /* seeds on the board */
    struct sow_movelist ml;
    struct tb_set *tb;
    struct watch wd;
    struct search_opts so;
    struct search_ctx *s;
};

/* A solution file of this start in the tables directory
 * (docs/solutions.md, RULES-2xPITS-LLL.sowsol) answers at once: the
 * full-size rows of the atlas.  *answered when it did (r complete). */
static enum sow_status solve_from_file(struct atlas_solve *A, bool *answered)
{
    const struct var_atlas_opts *o = A->o;
    struct var_atlas_result *r = A->r;
    *answered = false;
    if (!o->tables_dir)
        return SOW_OK;
    struct sol *sol = NULL;
    char path[4096];
    enum sow_status st =
        search_solution_find(A->rs, o->tables_dir, &A->p, &sol, path, sizeof path, A->e);
    if (st != SOW_OK)
        return st;
    if (!sol)
        return SOW_OK;
    struct search_result sr;
    int vals[SOW_MAX_PITS + 1];
    int k = search_solution_answer(sol, &A->p, &sr, vals);
    search_solution_close(sol);
    if (k != A->ml.n)
        return SOW_OK;
    note(o, "answered from the solution file %s", path);
    r->exact = true;
    r->value = r->lower = r->upper = sr.value;
    r->pv_len = sr.pv_len;
    r->pv_repeats = sr.pv_repeats;
    for (int i = 0; i < k; i++)
        if (vals[i] == r->value)
            r->best[r->nbest++] = A->ml.c[i].move;
    best_string(A->rs, A->p.side, r, false);
    r->seconds = util_now() - A->t0;
    *answered = true;
    return SOW_OK;
}

/* The watchdog at the budget and the exact search.  On failure everything
 * is closed and the status returned. */
static enum sow_status solve_start(struct atlas_solve *A)
{
    const struct var_atlas_opts *o = A->o;
    if (watchdog_start(&A->wd, o->budget, o->stop) < 0) {
        tb_close(A->tb);
        /* pthread_create fails for want of resources: memory, threads */
        return sow_fail(A->e, SOW_E_NOMEM, "cannot start the watchdog thread");
    }
    struct search_opts *so = &A->so;
    memset(so, 0, sizeof *so);
    so->threads = o->threads > 0 ? o->threads : 1;
    so->hash_mb = hash_for(A->rs, A->n, o->hash_mb ? o->hash_mb : SEARCH_HASH_MB);
    so->tb = A->tb;
    so->stop = &A->wd.flag;
    so->progress = o->progress ? search_note : NULL;
    so->progress_arg = (void *)o;
    struct sow_error se;
    if (search_new(A->rs, so, &A->s, &se) != SOW_OK) {
        watch_end(&A->wd);
        tb_close(A->tb);
        return sow_fail(A->e, se.status, "%s", se.msg);
    }
    return SOW_OK;
}

/* The value is exact (sr): every first move achieving it.  SOW_OK, or a
 * failure for a solver inconsistency. */
static enum sow_status solve_best_moves(struct atlas_solve *A, const struct search_result *sr)
{
    const struct var_atlas_opts *o = A->o;
    struct var_atlas_result *r = A->r;
    enum sow_status st = SOW_OK;
    r->exact = true;
    r->value = r->lower = r->upper = sr->value;
    r->pv_len = sr->pv_len;
    r->pv_repeats = sr->pv_repeats;
    /* Every first move achieving the value.  The value is already exact,
     * so give this listing the budget again rather than lose it. */
    int vals[SOW_MAX_PITS + 1];
    watch_end(&A->wd);
    watchdog_start(&A->wd, o->budget, o->stop);
    uint64_t n0, h0, n1, h1;
    search_counters(A->s, &n0, &h0);
    int k = search_move_values(A->s, &A->p, vals);
    search_counters(A->s, &n1, &h1);
    r->nodes += n1 - n0;
    r->tb_hits += h1 - h0;
    if (k == A->ml.n) {
        for (int i = 0; i < k; i++)
            if (vals[i] == r->value)
                r->best[r->nbest++] = A->ml.c[i].move;
        if (r->nbest == 0) /* a solver bug: no status names it; a failure, exit 1 */
            st = sow_fail(A->e, SOW_E_IO,
                          "solver inconsistency: no move of the start reaches its value %d",
                          r->value);
        best_string(A->rs, A->p.side, r, false);
    } else {
        r->best[r->nbest++] = sr->best;
        best_string(A->rs, A->p.side, r, true);
    }
    return st;
}

/* Out of budget: prove what bounds a bounded search finds in a quarter of
 * the budget (at least a second).  SOW_OK (open: the bounds proven so
 * far), or the failure to make the search, everything then closed. */
static enum sow_status solve_bounded(struct atlas_solve *A)
{
    const struct var_atlas_opts *o = A->o;
    struct var_atlas_result *r = A->r;
    const int n = A->n;
    search_free(A->s);
    watch_end(&A->wd);
    double tl = o->budget > 0 ? o->budget / 4 : 1;
    if (tl < 1)
        tl = 1;
    watchdog_start(&A->wd, o->budget > 0 ? tl + o->budget : 0, o->stop);
    A->so.time_limit = tl;
    struct sow_error se;
    if (search_new(A->rs, &A->so, &A->s, &se) != SOW_OK) {
        watch_end(&A->wd);
        tb_close(A->tb);
        return sow_fail(A->e, se.status, "%s", se.msg);
    }
    r->lower = -n;
    r->upper = n;
    struct search_result sr;
    enum sow_status st = search_solve(A->s, &A->p, &sr);
    r->nodes += sr.nodes;
    r->tb_hits += sr.tb_hits;
    if (st == SOW_OK) {
        r->lower = sr.lower > -n ? sr.lower : -n;
        r->upper = sr.upper < n ? sr.upper : n;
        if (sr.exact) {
            r->exact = true;
            r->pv_len = sr.pv_len;
            r->pv_repeats = sr.pv_repeats;
            r->best[r->nbest++] = sr.best;
            best_string(A->rs, A->p.side, r, true);
        }
    }
    r->value = r->exact ? r->lower : (r->lower + r->upper) / 2;
    if (!r->exact)
        strcpy(r->best_str, "-");
    return SOW_OK;
}

enum sow_status var_atlas_solve(const struct ruleset *rs, const struct var_atlas_opts *o,
                                struct var_atlas_result *r, struct sow_error *e)
{
    struct atlas_solve A = {.rs = rs, .o = o, .r = r, .e = e};
    memset(r, 0, sizeof *r);
    r->tb_level = -1;
    A.t0 = util_now();
    A.p = rules_start(rs);
    A.n = rules_board_seeds(rs, &A.p);
    rules_generate(rs, &A.p, &A.ml);
    if (A.ml.n == 0) {
        r->exact = r->over = true;
        r->value = r->lower = r->upper = A.ml.settle[A.p.side] - A.ml.settle[!A.p.side];
        best_string(rs, A.p.side, r, false);
        r->seconds = util_now() - A.t0;
        return SOW_OK;
    }

    bool answered;
    enum sow_status st = solve_from_file(&A, &answered);
    if (st != SOW_OK || answered)
        return st;

    A.tb = tables_prepare(rs, o, A.n, r);
    if (user_stopped(o)) {
        tb_close(A.tb);
        r->interrupted = true;
        return sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
    }

    if ((st = solve_start(&A)) != SOW_OK)
        return st;
    struct search_result sr;
    st = search_solve(A.s, &A.p, &sr);
    r->nodes = sr.nodes;
    r->tb_hits = sr.tb_hits;
    if (st == SOW_OK && sr.exact)
        st = solve_best_moves(&A, &sr);
    else if (!user_stopped(o) && (st = solve_bounded(&A)) != SOW_OK)
        return st;
    if (user_stopped(o)) {
        r->interrupted = true;
        st = sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
    }
    watch_end(&A.wd);
    search_free(A.s);
    tb_close(A.tb);
    r->seconds = util_now() - A.t0;
    return st;
}
