/* The exact mode: level by level, fewest seeds first.  The lowest levels
 * are solved whole in memory by the table builder (tables.h, tb_mem: loaded
 * tables borrowed, the next levels built within search_opts.level_budget);
 * above them the position's reachable closure is solved by the same
 * retrograde method (closure.h).  docs/solver.md explains why this is exact.
 *
 *   level n+k ..   closure of p (clos_build), probing below it
 *   level memmax   -----------------------------------------
 *     ..           built in memory (values + forced bounds)
 *   level diskmax  -----------------------------------------
 *     0 ..         loaded endgame tables (o.tb), borrowed
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "retro/retro.h"
#include "tables/tables.h"
#include "util.h"
#include "closure.h"
#include "solution.h"
#include "solver.h"

/* ---- exact mode: the levels solved in memory (tables.h) ---- */

static void level_note(void *arg, int level, uint64_t entries, double need, bool refused)
{
    struct search_ctx *s = arg;
    if (refused)
        search_progress(s, "level %d (%llu positions) would need %.1f GB to build in memory: "
                    "left to the closure",
                 level, (unsigned long long)entries, need / 1e9);
    else
        search_progress(s, "level %d solved in memory: %llu positions", level,
                 (unsigned long long)entries);
}

/* The levels in memory, created on first use (borrowing the loaded tables);
 * stays NULL when there are neither tables nor a budget. */
static bool mem_init(struct search_ctx *s)
{
    if (s->mem || (s->o.level_budget < 0 && !s->o.tb))
        return true;
    s->mem = tb_mem_new(s->rs, s->o.tb);
    if (!s->mem) {
        s->oom = true;
        return false;
    }
    s->memmax = s->diskmax = tb_mem_top(s->mem);
    return true;
}

/* The exact mode's memory budget: --memory, else 3/4 of RAM.  The levels
 * in memory are built within it (each level's build, with the 3 bytes a
 * position the levels below keep); the closure gets what they leave. */
static double mem_budget(const struct search_ctx *s)
{
    double b = s->o.memory;
    if (b <= 0) {
        double ram = util_phys_memory();
        b = ram > 0 ? 0.75 * ram : 0;
    }
    return b;
}

/* The closure's share: the budget less the levels kept in memory (3 bytes
 * a position: about 0.1 GB with the default --levels budget). */
static double clos_budget(const struct search_ctx *s)
{
    double b = mem_budget(s);
    if (b > 0 && s->mem) {
        b -= 3.0 * (double)tb_mem_built(s->mem);
        if (b < 1)
            b = 1; /* nothing left: any closure is refused */
    }
    return b;
}

/* ---- exact mode: the levels in memory kept in --work ----
 *
 * DIR/level-RULES-2xN-LLL.ck, one file per level built, written as soon as
 * it is built: the checkpoint header (closure.h, clos_ck_write; magic
 * SOWCKPL1), then struct lv_meta, the values (entries int8, in the table
 * index's order) and the forced bounds (lo, hi per entry).  Example: oware
 * 2x6 level 13, 2,496,144 positions: 64 + 56 + 7,488,432 bytes.  A level's
 * values do not depend on the root, so a rerun of any exact solve of the
 * same rule set and board size loads it instead of building it, and adds
 * the moves its build counted: the node count is that of a run never
 * stopped.  A file that fails a check (checksums, sizes, rule set, level)
 * is rebuilt and replaced, with a note. */

struct lv_meta {
    char rules[24];
    uint32_t pits, level;
    int32_t index_states;
    uint32_t reserved;
    uint64_t entries, moves;
};
_Static_assert(sizeof(struct lv_meta) == 56, "struct lv_meta is written as is");

static void lv_meta_of(const struct search_ctx *s, int level, uint64_t entries, uint64_t moves,
                       struct lv_meta *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->rules, sizeof m->rules, "%s", s->rs->name);
    m->pits = (uint32_t)s->rs->pits;
    m->level = (uint32_t)level;
    m->index_states = s->rs->index_states;
    m->entries = entries;
    m->moves = moves;
}

static void lv_name(const struct search_ctx *s, int level, char *buf, size_t len)
{
    snprintf(buf, len, "level-%s-2x%d-%03d.ck", s->rs->name, s->rs->pits, level);
}

/* tb_mem_opts.load: level k from DIR if its file is sound. */
static bool lv_load(void *ctx, int level, int8_t *values, int8_t *lohi, uint64_t entries,
                    uint64_t *moves)
{
    struct search_ctx *s = ctx;
    char name[96], path[4200];
    lv_name(s, level, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", s->o.work, name);
    if (access(path, F_OK) != 0)
        return false;
    struct lv_meta m = {0}, want;
    lv_meta_of(s, level, entries, 0, &want);
    void *parts[3] = {&m, values, lohi};
    uint64_t sizes[3] = {sizeof m, entries, 2 * entries};
    bool ok = clos_ck_read(s->o.work, name, "SOWCKPL1", parts, sizes, 3);
    want.moves = m.moves; /* the one field not known before */
    if (!ok || memcmp(&m, &want, sizeof m) != 0) {
        search_progress(s, "note: %s is damaged or not this level's: level %d rebuilt", path,
                        level);
        return false;
    }
    *moves = m.moves;
    search_progress(s, "level %d loaded from %s: %llu positions", level, path,
                    (unsigned long long)entries);
    return true;
}

/* tb_mem_opts.save: keep level k in DIR (a failure costs only the resume). */
static void lv_save(void *ctx, int level, const int8_t *values, const int8_t *lohi,
                    uint64_t entries, uint64_t moves)
{
    struct search_ctx *s = ctx;
    char name[96];
    lv_name(s, level, name, sizeof name);
    struct lv_meta m;
    lv_meta_of(s, level, entries, moves, &m);
    const void *parts[3] = {&m, values, lohi};
    uint64_t sizes[3] = {sizeof m, entries, 2 * entries};
    if (!clos_ck_write(s->o.work, name, "SOWCKPL1", parts, sizes, 3))
        search_progress(s, "note: cannot write %s/%s: level %d not kept", s->o.work, name, level);
}

/* How the levels are built: within o.level_budget positions (the user's
 * budget) and the memory budget (--memory, else 3/4 of RAM); what is
 * refused is left to the closure.  With --work each level built is kept
 * there, and one kept there is loaded instead of built. */
static struct tb_mem_opts mem_opts(struct search_ctx *s)
{
    uint64_t budget = s->o.level_budget < 0   ? 0
                      : s->o.level_budget > 0 ? (uint64_t)s->o.level_budget
                                              : SEARCH_LEVEL_BUDGET;
    return (struct tb_mem_opts){
        .threads = s->nthreads,
        .budget = budget,
        .memory = mem_budget(s),
        .stop = s->o.stop,
        .note = level_note,
        .ctx = s,
        .moves = &s->dmoves,
        .entries = &s->dentries,
        .load = s->o.work ? lv_load : NULL,
        .save = s->o.work ? lv_save : NULL,
    };
}

/* Positions ensure_levels(s, n) would build (a dry run). */
static uint64_t levels_plan(struct search_ctx *s, int n)
{
    struct tb_mem_opts mo = mem_opts(s);
    return s->mem ? tb_mem_plan(s->mem, n, &mo) : 0;
}

/* Solve the lowest levels up to n whole in memory, as far as they fit.
 * false if stopped or failed. */
static bool ensure_levels(struct search_ctx *s, int n)
{
    if (!mem_init(s))
        return false;
    if (!s->mem || s->memmax >= n)
        return true;
    struct tb_mem_opts mo = mem_opts(s);
    struct sow_error e;
    enum sow_status st = tb_mem_extend(s->mem, n, &mo, &e);
    s->memmax = tb_mem_top(s->mem);
    if (st == SOW_E_INTERRUPTED) {
        s->interrupted = true;
        return false;
    }
    if (st != SOW_OK) {
        s->oom = true;
        snprintf(s->why, sizeof s->why, "%s", e.msg);
        return false;
    }
    return true;
}

/* ---- exact mode: the closure solver (closure.h) ---- */
/* (closure: memory budget, refusal, checkpoints and solution files) */

static void clos_progress(void *arg, const char *line)
{
    search_progress(arg, "%s", line);
}

/* Solve p's closure (replacing the kept one), refusing more than cap
 * positions.  Flags set for a stop or a lack of memory, not for the cap;
 * *info says what the build reached. */
static enum clos_err clos_run(struct search_ctx *s, const sow_position *p, uint64_t cap,
                              struct clos_info *info)
{
    struct clos_env env = {
        .threads = s->nthreads,
        .cache = s->caches,
        .stop = s->o.stop,
        .tb = s->mem ? tb_mem_set(s->mem) : s->o.tb,
        .tb_hits_max = s->mem ? s->diskmax : s->o.tb ? tb_max_level(s->o.tb) : -1,
        .nodes = s->cnodes,
        .visits = s->cvisits,
        .tb_hits = s->ctbh,
        .max_nodes = cap,
        .memory = clos_budget(s),
        .work = s->o.work,
        .disk = s->o.disk && cap == UINT64_MAX,
        .progress = clos_progress,
        .progress_arg = s,
        .info = info,
    };
    enum clos_err e = clos_build(s->clos, &env, p);
    char per[400];
    int len = 0;
    per[0] = 0;
    for (int m = 0; m <= SOW_MAX_SEEDS && len < (int)sizeof per - 32; m++)
        if (info->level_count[m])
            len += snprintf(per + len, sizeof per - (size_t)len, " %d:%llu", m,
                            (unsigned long long)info->level_count[m]);
    if (e == CLOS_OK) {
        search_progress(s, "closure of %llu positions solved (%.1f GB peak, %.1f bytes/position); "
                           "per level:%s",
                        (unsigned long long)clos_size(s->clos), info->peak / 1e9,
                        info->peak / (double)(info->positions ? info->positions : 1), per);
    }
    else if (e == CLOS_TOO_BIG && cap == UINT64_MAX && per[0])
        search_progress(s, "closure refused at %llu positions; found so far, per level:%s",
                        (unsigned long long)info->positions, per);
    else if (e == CLOS_STOPPED)
        s->interrupted = true;
    else if (e == CLOS_OOM) {
        s->oom = true;
        if (info->why[0]) /* (diskclosure) a level file not written */
            snprintf(s->why, sizeof s->why, "%s", info->why);
    }
    return e;
}

/* Solve p's closure within the memory budget.  false if stopped/failed. */
static bool clos_solve(struct search_ctx *s, const sow_position *p)
{
    struct clos_info info;
    switch (clos_run(s, p, UINT64_MAX, &info)) {
    case CLOS_OK:
        return true;
    case CLOS_STOPPED:
    case CLOS_OOM:
        break;
    case CLOS_TOO_BIG: {
        s->too_deep = true;
        char below[96] = "";
        struct util_gb2 g = util_gb2(info.need, clos_budget(s));
        if (s->mem && s->memmax >= 0)
            snprintf(below, sizeof below, " above level %d (levels 0..%d solved in memory)",
                     s->memmax, s->memmax);
        if (info.why[0])
            snprintf(s->why, sizeof s->why, "the position's closure%s: %s", below, info.why);
        else
            snprintf(s->why, sizeof s->why,
                     "the position's closure%s reached %llu positions in %llu layers; the next "
                     "layer (~%llu positions) would need %s GB, the budget is %s GB: raise "
                     "--memory, or solve more levels first (--levels, or --tables with tables "
                     "built by sow tables build)",
                     below, (unsigned long long)info.positions, (unsigned long long)info.layers,
                     (unsigned long long)info.next_est, g.need, g.budget);
        break;
    }
    }
    return false;
}

enum sow_status search_save(struct search_ctx *s, const sow_position *root, const char *path,
                            struct sow_error *e)
{
    if (s->o.level_budget >= 0 || s->o.tb || s->o.attractor ||
        !clos_find(s->clos, root, NULL, NULL, NULL, NULL))
        return sow_fail(e, SOW_E_INPUT,
                        "%s: a solution file is written from a solve by the closure alone", path);
    /* on disk the file's set is built a window at a time (solution_set.c):
     * at most a sixteenth of the budget (8 bytes a cell while built: half
     * of it), and after a job of R ranks at most 1/R of the set, rank 0's
     * share */
    uint64_t win = 0;
    if (clos_on_disk(s->clos)) {
        uint64_t S = clos_set_cells_for(clos_size(s->clos)), R = (uint64_t)clos_disk_ranks(s->clos);
        double b = clos_budget(s);
        win = (S + R - 1) / R;
        if (b > 0 && b / 16 < (double)win)
            win = (uint64_t)(b / 16);
        if (win < 1024)
            win = 1024;
    }
    return sol_save(s->rs, s->clos, root, path, win, 0, e);
}

/* lo, hi and V of p from the levels in memory, if they hold p with bounds. */
static bool levels_lohi(const struct search_ctx *s, const sow_position *p, int n, int *lo, int *hi,
                        int *v)
{
    int l, h, vv;
    if (!s->mem || n > s->memmax || !tb_probe_bounds(tb_mem_set(s->mem), p, &l, &h, &vv))
        return false;
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    if (v)
        *v = vv;
    return true;
}

/* lo, hi and V of p: from the levels in memory, the kept closure, or a new
 * solve.  A new solve that would build many positions of levels first tries
 * p's closure alone, capped at 1/256 of them (a closure position costs about
 * 3 level positions): some positions reach very little of their levels (the
 * game ends fast, or the board is big) and are then solved at once;
 * otherwise the try costs about 1%. */
static bool exact_lohi(struct search_ctx *s, const sow_position *p, int *lo, int *hi, int *v)
{
    int n = rules_board_seeds(s->rs, p);
    if (!mem_init(s))
        return false;
    if (levels_lohi(s, p, n, lo, hi, v) || clos_find(s->clos, p, lo, hi, v, NULL))
        return true;
    uint64_t plan = levels_plan(s, n);
    uint64_t first = s->o.closure_first ? (uint64_t)s->o.closure_first : SEARCH_CLOSURE_FIRST;
    if (s->o.closure_first >= 0 && plan >= first) {
        uint64_t cap = plan / 256 > 64 ? plan / 256 : 64;
        struct clos_info info;
        enum clos_err e = clos_run(s, p, cap, &info);
        if (e == CLOS_OK)
            return clos_find(s->clos, p, lo, hi, v, NULL);
        if (e != CLOS_TOO_BIG)
            return false;
        search_progress(s, "closure passed %llu positions: solving levels in memory first",
                 (unsigned long long)cap);
    }
    if (!ensure_levels(s, n))
        return false;
    if (levels_lohi(s, p, n, lo, hi, v))
        return true;
    if (!clos_solve(s, p))
        return false;
    return clos_find(s->clos, p, lo, hi, v, NULL);
}

/* V(p): the endgame tables if they hold p's level, else the closure. */
bool exact_value(struct search_ctx *s, const sow_position *p, int *v)
{
    int n = rules_board_seeds(s->rs, p);
    if (!mem_init(s))
        return false;
    if (s->mem && n <= s->memmax && tb_probe(tb_mem_set(s->mem), p, v)) {
        if (n <= s->diskmax)
            s->ctbh[0]++;
        return true;
    }
    return exact_lohi(s, p, NULL, NULL, v);
}

/* Value of p's move ch: an exit nets d - V(q); a move staying in the level
 * is worth clamp(cyc(p), -hi(q), -lo(q)). */
static bool exact_move_value(struct search_ctx *s, const sow_position *p,
                             const struct sow_child *ch, int *val)
{
    int cap = retro_taken(ch);
    if (cap) {
        int vq;
        if (!exact_value(s, &ch->pos, &vq))
            return false;
        *val = ch->captured[p->side] - ch->captured[!p->side] - vq;
        return true;
    }
    int lo, hi;
    if (!exact_lohi(s, &ch->pos, &lo, &hi, NULL))
        return false;
    *val = clampi(rules_cycle_value(s->rs, p), -hi, -lo);
    return true;
}

int exact_move_values(struct search_ctx *s, const sow_position *p, int *vals)
{
    struct sow_movelist ml;
    s->rs->generate(s->rs, p, &ml, s->th[0]->cache, NULL);
    if (ml.n && !exact_lohi(s, p, NULL, NULL, NULL)) /* children now in the closure */
        return -1;
    for (int i = 0; i < ml.n; i++)
        if (!exact_move_value(s, p, &ml.c[i], &vals[i]))
            return -1;
    return ml.n;
}

/* Exact mode: the first move (generation order) worth v, from the levels or
 * the kept closure. */
bool exact_pick(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml, int v,
                int *pick)
{
    if (!exact_lohi(s, p, NULL, NULL, NULL))
        return false;
    for (int i = 0; i < ml->n && *pick < 0; i++) {
        int mv;
        if (!exact_move_value(s, p, &ml->c[i], &mv))
            return false;
        if (mv == v)
            *pick = i;
    }
    return true;
}
