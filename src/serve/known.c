/* sow serve's known sources (known.h): the sets of tables and shared
 * levels, and the solution files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve/known.h"
#include "util.h"
#include "sow/analyse.h"
#include "sow/search.h"
#include "sow/tables_probe.h"

void serve_sets_free(struct serve_ctx *c)
{
    for (int i = 0; i < c->nsets; i++) {
        tb_close(c->sets[i].tb);
        analyse_levels_free(c->sets[i].levels);
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

/* The file of rs's level lv in the first directory of the tables path
 * (DIR or DIR1:DIR2:..) that holds one, into path; false if none does. */
static bool solution_in_path(const struct serve_ctx *c, const struct ruleset *rs, int lv,
                             char *path, size_t len)
{
    for (const char *d = c->tables; *d;) {
        char dir[4096];
        struct stat st;
        if (!util_path_next(&d, dir, sizeof dir))
            continue;
        search_solution_name(rs, dir, lv, path, len);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

/* The solution files of rs kept in the tables directories (search.h: named
 * RULES-2xPITS-LLL.sowsol from the registry's name; of each level the
 * first directory's), opened once; a damaged one is left out (the solver
 * answers the same values).  Under c->lock. */
static void solutions_of_dir(struct serve_ctx *c, const struct ruleset *rs)
{
    for (int lv = 0; lv <= SOW_MAX_SEEDS && c->nsols < SERVE_MAX_SOLS; lv++) {
        char path[4200];
        if (!solution_in_path(c, rs, lv, path, sizeof path))
            continue;
        struct serve_sol *s = &c->sols[c->nsols];
        struct sow_error e;
        s->rs = *rs;
        if (search_solution_open(&s->rs, path, &s->sol, &e) == SOW_OK)
            c->nsols++;
        else if (c->note)
            c->note(e.msg);
    }
}

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
        /* out of memory: answered without them */
        s->levels = c->levels ? analyse_levels_new(rs, c->levels) : NULL;
        struct sow_error e;
        /* a damaged file: answered without tables (the solver's values are the
         * same), and not retried at every request */
        if (c->tables && tb_open(&s->rs, c->tables, &s->tb, &e) != SOW_OK) {
            s->tb = NULL;
            if (c->note)
                c->note(e.msg);
        }
        if (c->tables)
            solutions_of_dir(c, rs);
    }
    pthread_mutex_unlock(&c->lock);
    return s;
}

int serve_solutions_of(struct serve_ctx *c, const struct ruleset *rs, const struct sol **out)
{
    pthread_mutex_lock(&c->lock);
    int n = c->nsols; /* the entries below n are never changed again */
    pthread_mutex_unlock(&c->lock);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(c->sols[i].rs.name, rs->name) == 0 && c->sols[i].rs.pits == rs->pits)
            out[k++] = c->sols[i].sol;
    return k;
}
