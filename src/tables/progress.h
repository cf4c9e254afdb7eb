/* Endgame tables, build side: one level's progress reports and the stop
 * flag, shared by the builders (build.c, lean.c).
 *
 * A level's work is cut into phases, each covering [base, base + weight) of
 * the level's fraction; a phase counts units done (entries, usually) against
 * the level's E.  Reports go through opt->progress at most every 0.2 s, and
 * only from OpenMP thread 0 (the callback need not be thread-safe).
 *
 * Thread-safety: tb_progress_add and tb_progress_frac may be called from any
 * thread of the level's parallel regions at once (the count is atomic; only
 * thread 0 reads the clock and reports); tb_progress_init and
 * tb_progress_phase from one thread, outside parallel regions.
 */
#ifndef SOW_TABLES_PROGRESS_H
#define SOW_TABLES_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/tables.h"

struct tb_progress {
    const struct tb_build_opts *opt; /* may be NULL: no reports, never stopped */
    int n;                           /* the level */
    uint64_t E;                      /* its entries */
    uint64_t done;                   /* units of the phase done (atomic) */
    double last;                     /* util_now() of the last report */
    double base, weight;             /* the phase's share of the level */
    const char *phase;
};

/* Set opt->stop by Ctrl-C: the builders look at it between pieces of work. */
static inline bool tb_stopped(const struct tb_build_opts *opt)
{
    return opt && opt->stop && *opt->stop;
}

void tb_progress_init(struct tb_progress *pr, const struct tb_build_opts *opt, int n, uint64_t E);

/* A new phase: reports base at once; its count starts at 0. */
void tb_progress_phase(struct tb_progress *pr, const char *name, double base, double weight);

/* add units done in the phase; reports base + weight * done / E. */
void tb_progress_add(struct tb_progress *pr, uint64_t add);

/* Reports fraction f of the level (clamped to 1) in the current phase, for
 * phases that measure themselves otherwise (rate-limited as above). */
void tb_progress_frac(struct tb_progress *pr, double f);

#endif
