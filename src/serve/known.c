/* sow serve's exact answers without a search (known.h): the shared levels
 * and the solution files, and the sets that hold them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve/known.h"
#include "sow/search.h"
#include "sow/tables_probe.h"
#include "tables/tables.h"

void serve_sets_free(struct serve_ctx *c)
{
    for (int i = 0; i < c->nsets; i++) {
        tb_close(c->sets[i].tb);
        tb_mem_free(c->sets[i].mem);
        pthread_rwlock_destroy(&c->sets[i].rw);
    }
    c->nsets = 0;
    for (int i = 0; i < c->nsols; i++)
        search_solution_close(c->sols[i].sol);
    c->nsols = 0;
}

enum sow_status serve_ctx_add_solution(struct serve_ctx *c, const char *path,
                                       struct sow_error *e)
{
    if (c->nsols == SERVE_MAX_SOLS)
        return sow_fail(e, SOW_E_INPUT, "%s: more than %d solution files", path, SERVE_MAX_SOLS);
    /* The file's header names its rule set and size: every one of the
     * registry is tried (a foreign one is refused on the header alone). */
    struct serve_sol *s = &c->sols[c->nsols];
    for (int i = 0; sow_rule_names[i]; i++)
        for (int pits = 1; pits <= SOW_MAX_PITS; pits++) {
            if (rules_init(&s->rs, sow_rule_names[i], pits, 0, NULL) != SOW_OK)
                continue;
            enum sow_status st = search_solution_open(&s->rs, path, &s->sol, e);
            if (st == SOW_OK) {
                c->nsols++;
                return SOW_OK;
            }
            if (!strstr(e->msg, "foreign solution"))
                return st; /* missing, damaged, not a solution file */
        }
    return sow_fail(e, SOW_E_INPUT, "%s: a solution of no rule set and board size this sow has",
                    path);
}

const struct ruleset *serve_ctx_solution_rules(const struct serve_ctx *c, int i,
                                               unsigned long long *positions)
{
    if (positions)
        *positions = search_solution_size(c->sols[i].sol);
    return &c->sols[i].rs;
}

/* The solution files of rs kept in the tables directory (search.h: named
 * RULES-2xPITS-LLL.sowsol from the registry's name), opened once; a
 * damaged one is left out (the solver answers the same values).  Under
 * c->lock. */
static void solutions_of_dir(struct serve_ctx *c, const struct ruleset *rs)
{
    for (int lv = 0; lv <= SOW_MAX_SEEDS && c->nsols < SERVE_MAX_SOLS; lv++) {
        char path[4200];
        struct stat st;
        search_solution_name(rs, c->tables, lv, path, sizeof path);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        struct serve_sol *s = &c->sols[c->nsols];
        struct sow_error e;
        s->rs = *rs;
        if (search_solution_open(&s->rs, path, &s->sol, &e) == SOW_OK)
            c->nsols++;
    }
}

/* The set of rs (its rule set and board size), made on first use and kept:
 * its tables opened, its solution files found; NULL past SERVE_MAX_SETS.
 * rs comes from the registry, so the files opened are named by the
 * registry's name, never by the request's text. */
struct serve_set *serve_set_of(struct serve_ctx *c, const struct ruleset *rs)
{
    struct serve_set *s = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->nsets && !s; i++)
        if (strcmp(c->sets[i].rs.name, rs->name) == 0 && c->sets[i].rs.pits == rs->pits)
            s = &c->sets[i];
    if (!s && c->nsets < SERVE_MAX_SETS) {
        s = &c->sets[c->nsets++];
        s->rs = *rs;
        s->tb = NULL;
        s->mem = NULL;
        s->refused = -1;
        pthread_rwlockattr_t ra;
        pthread_rwlockattr_init(&ra);
        /* a request waiting to extend the levels is not starved by probes */
        pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&s->rw, &ra);
        pthread_rwlockattr_destroy(&ra);
        struct sow_error e;
        /* a damaged file: answered without tables (the solver's values are the
         * same), and not retried at every request */
        if (c->tables && tb_open(&s->rs, c->tables, &s->tb, &e) != SOW_OK)
            s->tb = NULL;
        if (c->tables)
            solutions_of_dir(c, rs);
    }
    pthread_mutex_unlock(&c->lock);
    return s;
}

/* ---- the shared levels ------------------------------------------------------ */

/* The set's levels in memory holding level n, read-locked: true (the caller
 * unlocks s->rw) or false.  Levels 0..n are built first (write-locked) if
 * together they fit ctx->levels positions: the one request that builds them
 * waits for it, every later one probes.  Disk tables hold values only, and a
 * move that keeps the seeds on the board needs its position's forced bounds,
 * which only levels solved in memory keep (docs/serve.md). */
static bool levels_lock(struct serve_ctx *c, struct serve_set *s, int n)
{
    if (!c->levels || n > TB_MAX_LEVEL)
        return false;
    pthread_rwlock_rdlock(&s->rw);
    if (s->mem && tb_mem_top(s->mem) >= n)
        return true;
    bool refused = s->refused >= 0 && n >= s->refused;
    pthread_rwlock_unlock(&s->rw);
    if (refused)
        return false;
    struct tb_index ix;
    tb_index_init(&ix, &s->rs);
    unsigned long long need = 0;
    for (int k = 0; k <= n; k++)
        need += tb_level_entries(&ix, k);
    if (need > c->levels)
        return false; /* levels this big are the solver's, per request */

    pthread_rwlock_wrlock(&s->rw);
    if (!s->mem)
        s->mem = tb_mem_new(&s->rs, NULL);
    if (s->mem && tb_mem_top(s->mem) < n && !(s->refused >= 0 && n >= s->refused)) {
        struct tb_mem_opts o = {
            .threads = c->threads,
            .budget = c->levels,
            .memory = c->memory,
            .stop = c->stop,
        };
        struct sow_error e;
        enum sow_status st = tb_mem_extend(s->mem, n, &o, &e);
        if (st != SOW_E_INTERRUPTED && tb_mem_top(s->mem) < n)
            s->refused = tb_mem_top(s->mem) + 1; /* memory: no higher level is tried */
    }
    pthread_rwlock_unlock(&s->rw);
    pthread_rwlock_rdlock(&s->rw);
    if (s->mem && tb_mem_top(s->mem) >= n)
        return true;
    pthread_rwlock_unlock(&s->rw);
    return false;
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Every move's value of p from levels L, as the exact solver finds them
 * (src/solver/levels.c): a capture nets d - V(q); a move that keeps the
 * seeds on the board is worth clamp(cyc(p), -hi(q), -lo(q)).  false if L
 * misses a position (jerin's opening is not indexed). */
static bool levels_move_values(const struct ruleset *rs, const struct tb_set *L,
                               const sow_position *p, const struct sow_movelist *ml, int *vals)
{
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int vq;
        if (ch->captured[0] + ch->captured[1]) {
            if (!tb_probe(L, &ch->pos, &vq))
                return false;
            vals[k] = ch->captured[p->side] - ch->captured[!p->side] - vq;
        } else {
            int lo, hi;
            if (!tb_probe_bounds(L, &ch->pos, &lo, &hi, &vq))
                return false;
            vals[k] = clampi(rules_cycle_value(rs, p), -hi, -lo);
        }
    }
    return true;
}

/* p answered from the shared levels L: V(p), every move's value, and the PV
 * as the exact solver walks it (search.c pv_walk: at each position the first
 * move worth its value, until the game ends, a position repeats or
 * SEARCH_MAX_PV moves).  false if L misses p or a child. */
static bool levels_answer_(const struct ruleset *rs, const struct tb_set *L,
                           const sow_position *p, struct analysis *a)
{
    int v;
    if (a->ml.n == 0)
        v = a->ml.settle[p->side] - a->ml.settle[!p->side];
    else if (!tb_probe(L, p, &v) || !levels_move_values(rs, L, p, &a->ml, a->vals))
        return false;
    a->source = "levels";
    a->exact = true;
    a->over = a->ml.n == 0;
    a->value = v;
    a->depth = -1;
    a->pv_len = 0;
    a->pv_repeats = false;
    sow_position hist[SEARCH_MAX_PV + 1], q = *p;
    hist[0] = q;
    while (a->pv_len < SEARCH_MAX_PV) {
        struct sow_movelist ml;
        int vals[SOW_MAX_PITS + 1], pick = 0;
        rs->generate(rs, &q, &ml, NULL, NULL);
        if (ml.n == 0 || !levels_move_values(rs, L, &q, &ml, vals))
            break;
        for (int k = ml.n - 1; k >= 0; k--)
            if (vals[k] == v)
                pick = k;
        const struct sow_child *ch = &ml.c[pick];
        a->pv[a->pv_len++] = ch->move;
        if (ch->captured[0] + ch->captured[1]) {
            v = ch->captured[q.side] - ch->captured[!q.side] - v;
        } else {
            for (int j = a->pv_len - 1; j >= 0; j--)
                if (rules_same_position(&hist[j], &ch->pos)) {
                    a->pv_repeats = true;
                    return true;
                }
            if (!tb_probe(L, &ch->pos, &v))
                break;
        }
        q = ch->pos;
        hist[a->pv_len] = q;
    }
    return true;
}

/* p answered from a solution file holding it (--solution, or the tables
 * directory's): every move's value and the PV from the file. */
bool serve_solution_answer(struct serve_ctx *c, const struct ruleset *rs, const sow_position *p,
                           struct analysis *a)
{
    pthread_mutex_lock(&c->lock);
    int n = c->nsols; /* the entries below n are never changed again */
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < n; i++) {
        const struct serve_sol *s = &c->sols[i];
        if (strcmp(s->rs.name, rs->name) != 0 || s->rs.pits != rs->pits)
            continue;
        struct search_result r;
        if (search_solution_answer(s->sol, p, &r, a->vals) < 0)
            continue;
        a->source = "solution";
        a->exact = true;
        a->over = r.over;
        a->value = r.value;
        a->depth = -1;
        a->pv_len = r.pv_len;
        memcpy(a->pv, r.pv, sizeof r.pv);
        a->pv_repeats = r.pv_repeats;
        return true;
    }
    return false;
}

bool serve_levels_answer(struct serve_ctx *c, struct serve_set *set, const struct ruleset *rs,
                         const sow_position *p, struct analysis *a)
{
    if (!levels_lock(c, set, rules_board_seeds(rs, p)))
        return false;
    bool ok = levels_answer_(rs, tb_mem_set(set->mem), p, a);
    pthread_rwlock_unlock(&set->rw);
    return ok;
}
