/* The exact solver's lowest levels, built in memory by the fast builder
 * (tables/tables.h tb_mem). */
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
#include "util.h"

/* ---- levels built in memory (tb_mem, tables/tables.h) ------------------------- */

struct tb_mem {
    struct tb_set *set;
    int top;            /* levels 0..top held */
    bool full;          /* a level was refused for RAM: try no higher one */
    uint64_t used;      /* positions built (borrowed levels not counted) */
};

struct tb_mem *tb_mem_new(const struct ruleset *rs, const struct tb_set *tables)
{
    struct tb_mem *m = calloc(1, sizeof *m);
    if (!m || !(m->set = tb_set_new(rs, ""))) {
        free(m);
        return NULL;
    }
    if (tables)
        tb_set_borrow(m->set, tables);
    m->top = tb_max_level(m->set);
    return m;
}

void tb_mem_free(struct tb_mem *m)
{
    if (!m)
        return;
    tb_close(m->set);
    free(m);
}

const struct tb_set *tb_mem_set(const struct tb_mem *m)
{
    return m->set;
}

int tb_mem_top(const struct tb_mem *m)
{
    return m->top;
}

uint64_t tb_mem_built(const struct tb_mem *m)
{
    return m->used;
}

/* May level k (the next one) be built, `used` positions being built already?
 * Its positions in *E, the bytes its build needs in *need; *ram tells a
 * refusal for memory (o->memory, else 3/4 of RAM) from one for the budget
 * or the index width. */
static bool mem_fits(const struct tb_mem *m, int k, uint64_t used, const struct tb_mem_opts *o,
                     uint64_t *E, double *need, bool *ram)
{
    *ram = false;
    if (m->full || k > TB_MAX_LEVEL)
        return false;
    *E = tb_level_entries(&m->set->ix, k);
    if (*E > o->budget || used > o->budget - *E || *E > TB_MAX_ENTRIES)
        return false;
    double mem = o->memory > 0 ? o->memory : 0.75 * util_phys_memory();
    *need = tb_level_memory(&m->set->ix, k) + 3.0 * (double)(used + *E);
    /* compressed levels below: decompressed before k is built */
    *need += (double)tb_set_compressed_bytes(m->set);
    *ram = mem > 0 && *need > mem;
    return !*ram;
}

uint64_t tb_mem_plan(const struct tb_mem *m, int n, const struct tb_mem_opts *o)
{
    uint64_t used = m->used, add = 0, E;
    double need;
    bool ram;
    for (int k = m->top + 1; k <= n && mem_fits(m, k, used, o, &E, &need, &ram); k++) {
        used += E;
        add += E;
    }
    return add;
}

static void mem_progress(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    const struct tb_mem_opts *o = ctx;
    if (frac >= 1.0 && o->note)
        o->note(o->ctx, level, entries, 0, false);
    (void)phase;
}

enum sow_status tb_mem_extend(struct tb_mem *m, int n, const struct tb_mem_opts *o,
                              struct sow_error *e)
{
    struct tb_work wk;
    memset(&wk, 0, sizeof wk);
    enum sow_status st = SOW_OK;
    while (m->top < n) {
        int k = m->top + 1;
        uint64_t E;
        double need;
        bool ram;
        if (!mem_fits(m, k, m->used, o, &E, &need, &ram)) {
            if (ram) {
                m->full = true;
                if (o->note)
                    o->note(o->ctx, k, E, need, true);
            }
            break;
        }
        /* levels under 100,000 positions on one thread: there start-up and
         * barriers cost more than a second thread saves (measured) */
        struct tb_build_opts bo = {
            .threads = E >= 100000 ? o->threads : 1,
            .stop = o->stop,
            .progress = mem_progress,
            .ctx = (void *)o,
        };
        int8_t *v = malloc(E ? E : 1), *lohi = malloc(E ? 2 * E : 1);
        if (!v || !lohi) {
            free(v);
            free(lohi);
            st = sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", k);
            break;
        }
        /* a level kept by an earlier run (o->load) is
         * taken as built, with the moves its build counted */
        uint64_t moves = 0;
        if (!o->load || !o->load(o->ctx, k, v, lohi, E, &moves)) {
            /* the builder reads lower levels as arrays: compressed
             * ones borrowed from the tables are decompressed into the set now */
            for (int j = 0; j < k && st == SOW_OK; j++)
                st = tb_set_inflate_level(m->set, j, o->threads, e);
            bo.moves = &moves;
            if (st == SOW_OK)
                st = tb_fast_solve_level(&m->set->rs, m->set, k, v, lohi, &bo, &wk, e);
            if (st != SOW_OK) {
                free(v);
                free(lohi);
                break;
            }
            if (o->save)
                o->save(o->ctx, k, v, lohi, E, moves);
        }
        tb_set_own_level(m->set, k, v, lohi, E);
        if (o->moves)
            *o->moves += moves;
        if (o->entries)
            *o->entries += E;
        m->used += E;
        m->top = k;
    }
    /* The workspace is kept across the levels of one call only. */
    tb_fast_work_free(&wk);
    return st;
}

