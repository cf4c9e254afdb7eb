/* Endgame tables: one level's progress reports (progress.h). */
#include <omp.h>
#include <string.h>

#include "util.h"
#include "progress.h"

void tb_progress_init(struct tb_progress *pr, const struct tb_build_opts *opt, int n, uint64_t E)
{
    memset(pr, 0, sizeof *pr);
    pr->opt = opt;
    pr->n = n;
    pr->E = E;
    pr->last = util_now();
}

void tb_progress_phase(struct tb_progress *pr, const char *name, double base, double weight)
{
    pr->done = 0;
    pr->phase = name;
    pr->base = base;
    pr->weight = weight;
    if (pr->opt && pr->opt->progress)
        pr->opt->progress(pr->opt->ctx, pr->n, pr->E, base, name);
}

/* Thread 0 only, at most every 0.2 s (monotonic clock). */
static bool due(struct tb_progress *pr)
{
    if (!pr->opt || !pr->opt->progress || omp_get_thread_num() != 0)
        return false;
    double now = util_now();
    if (now - pr->last < 0.2)
        return false;
    pr->last = now;
    return true;
}

void tb_progress_frac(struct tb_progress *pr, double f)
{
    if (due(pr))
        pr->opt->progress(pr->opt->ctx, pr->n, pr->E, f > 1 ? 1 : f, pr->phase);
}

void tb_progress_add(struct tb_progress *pr, uint64_t add)
{
    uint64_t d = __atomic_add_fetch(&pr->done, add, __ATOMIC_RELAXED);
    tb_progress_frac(pr, pr->base + pr->weight * (double)d / (double)(pr->E ? pr->E : 1));
}
