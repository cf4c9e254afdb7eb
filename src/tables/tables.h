/* sow — endgame tables, the build side: the retrograde builder, the
 * verifier, build options and memory estimates, and the levels the exact
 * solver builds in memory.  It uses the probe side (sow/tables_probe.h:
 * index, files, loaded sets, probes), which knows nothing of building.
 * docs/tables.md explains the algorithm and the file format.
 *
 *   sow/tables_probe.h  index.c, file.c    index, files, tb_set, tb_probe
 *          ^
 *   tables/tables.h        build.c            tb_build, tb_solve_level,
 *                                          tb_verify_level, tb_mem (OpenMP)
 *
 * Thread-safety: tb_build/tb_solve_level/tb_verify_level/tb_mem_extend use
 * OpenMP internally; none may run concurrently on the same directory or set,
 * nor with probes of the set they add levels to.
 */
#ifndef SOW_TABLES_H
#define SOW_TABLES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"
#include "sow/tables_probe.h"

/* ---- building ----------------------------------------------------------- */

struct tb_build_opts {
    int threads;              /* <= 0: OpenMP default */
    double memory_bytes;      /* refuse levels needing more; <= 0: 3/4 of RAM */
    volatile sig_atomic_t *stop; /* set asynchronously to interrupt; may be NULL */
    /* Called from the building thread (never concurrently) with the level,
     * the fraction of it done (0..1) and the phase name; may be NULL. */
    void (*progress)(void *ctx, int level, uint64_t entries, double frac, const char *phase);
    /* Called after each level is complete on disk (seconds spent on it). */
    void (*level_done)(void *ctx, int level, uint64_t entries, double seconds, bool built);
    void *ctx;
    /* If not NULL, the moves the build generated (every child position made
     * and looked up) are added to *moves: the solver's node count. */
    uint64_t *moves;
    /* ---- lean builder (tables/tb_lean.h) ---- */
    int builder;              /* enum tb_builder: which builder tb_build uses */
    /* Called (if not NULL) before level_done of each level built: the
     * builder used and the bytes its arrays and lists reached for the level
     * (lower levels not counted). */
    void (*level_info)(void *ctx, int level, uint64_t entries, const char *builder,
                       double peak_bytes);
    /* Lean builder's held-back updates (src/tables/lean.c "Updates by
     * region"): log2 entries per region, 8..20; 0 (or out of range): 20.
     * Smaller regions reach that path on small levels (the tests). */
    int lean_region_shift;
    /* tests: the lean builder's work list cap per thread (0: its own), small
     * so that final nodes spill into the pend bitmap on small levels */
    int lean_queue_cap;
    /* tests: the lean builder's lower levels compressed (lean_run.c) even
     * where they fit raw, each thread answering its exits into them every
     * lean_zqueue exits (0: only where the budget asks, queues sized by it) */
    uint64_t lean_zqueue;
    /* Write each level's forced bounds file beside it (tb_bounds_write,
     * 2 bytes per position, counted in the memory check while a level is
     * built).  A level whose values are present but whose bounds file is
     * missing is then solved again: the values must come out identical
     * (else SOW_E_INPUT, the level file named), and only the bounds file is
     * written. */
    bool bounds;
};

/* TB_BUILDER_AUTO: the fast builder (build.c) when every missing level fits
 * the memory budget with it, else the lean one (lean.c; the relay rule sets'
 * in-level edges on disk there, lean_relay.h). */
enum tb_builder { TB_BUILDER_AUTO = 0, TB_BUILDER_FAST, TB_BUILDER_LEAN };

/* Bytes one level needs while it is built (upper bound, lower levels not counted). */
double tb_level_memory(const struct tb_index *ix, int level);

/* The bytes a build may use: opt's memory_bytes (--memory), else 3/4 of
 * the machine's memory (of 4 GB where it is unknown). */
double tb_memory_budget(const struct tb_build_opts *opt);

/* tb_memory_budget lowered to 3/4 of an address-space limit (ulimit -v);
 * *by says which of them it is and *raise how to raise it. */
double tb_memory_limit(const struct tb_build_opts *opt, const char **by, const char **raise);

/* Build every missing level 0..max_level of rs into dir (created if needed;
 * with opt->bounds, a level without its bounds file is missing too).
 * SOW_OK; SOW_E_INTERRUPTED (only complete levels left on disk); SOW_E_TOO_BIG
 * (a level needs more than the memory limit or the index width allows,
 * refused before building); SOW_E_INPUT (a damaged or foreign existing file);
 * SOW_E_IO or SOW_E_NOMEM while working.  A one-line reason in *e. */
enum sow_status tb_build(const struct ruleset *rs, const char *dir, int max_level,
                         const struct tb_build_opts *opt, struct sow_error *e);

/* Solve level n in memory into out[entries], probing lower levels in `lower`
 * (which must hold 0..n-1).  SOW_OK, SOW_E_INTERRUPTED, SOW_E_TOO_BIG (the
 * level does not fit 31-bit indices), SOW_E_INPUT (a lower level missing) or
 * SOW_E_NOMEM.  Optional lohi[2*entries] receives the forced bounds (lo, hi)
 * per entry. */
enum sow_status tb_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                               int8_t *out, int8_t *lohi, const struct tb_build_opts *opt,
                               struct sow_error *e);

/* Re-check level n of a loaded set: recompute it from levels < n and compare,
 * plus local checks (|V| <= n, V >= every exit, V equals the best exit where no
 * move stays in the level).  SOW_OK with the number of bad entries in *bad
 * (0 = ok; the first described in e->msg), or another status (no count). */
enum sow_status tb_verify_level(const struct tb_set *set, int n, const struct tb_build_opts *opt,
                                int64_t *bad, struct sow_error *e);

/* ---- levels built in memory (the exact solver, docs/solver.md) ----------
 *
 * A tb_mem is a set of levels 0..top: those of loaded tables borrowed, the
 * next ones solved whole in memory from the bottom up, each kept with its
 * values and forced bounds (probe with tb_probe/tb_probe_bounds on
 * tb_mem_set).  A level is added while the levels built stay within the
 * caller's budget (positions), it fits 31-bit indices, and its build (the
 * builder's workspace, plus 3 bytes per position kept) stays within the
 * caller's memory budget (tb_mem_opts.memory; 0: 3/4 of RAM); once a level
 * is refused for memory, no higher one is tried.  The
 * builder's workspace (about 33 bytes per position of the largest level
 * built) lives only inside tb_mem_extend.
 *
 * Example: oware 2x6, no tables, a budget of 32 M positions (sow solve's
 * default): tb_mem_extend(m, 20) builds levels 0..16 and stops there, the
 * next level passing the budget (docs/cli.md "Solving a position"). */

struct tb_mem;

struct tb_mem_opts {
    int threads;              /* for levels of >= 100,000 positions; smaller ones use 1 */
    uint64_t budget;          /* most positions built, over all levels (0: none) */
    double memory;            /* bytes a level's build may hold (0: 3/4 of RAM;
                                 sow solve's --memory) */
    volatile sig_atomic_t *stop; /* set asynchronously to interrupt; may be NULL */
    /* Called after a level is built (refused = false, need = 0) and when a
     * level is refused for memory (refused = true, need = bytes it would need);
     * may be NULL. */
    void (*note)(void *ctx, int level, uint64_t entries, double need, bool refused);
    void *ctx;
    uint64_t *moves;          /* if not NULL, += moves generated (node count) */
    uint64_t *entries;        /* if not NULL, += positions built */
    /* ---- checkpoints (closure; sow solve --work) ----
     * load (may be NULL), before level k is built: fill values[entries] and
     * lohi[2 * entries] and *moves (the moves its build generated) from a
     * level kept earlier; true if it did, and the level is then not built
     * (note is not called for it).  save (may be NULL), after level k was
     * built: keep it.  Both from the calling thread, one level at a time. */
    bool (*load)(void *ctx, int level, int8_t *values, int8_t *lohi, uint64_t entries,
                 uint64_t *moves);
    void (*save)(void *ctx, int level, const int8_t *values, const int8_t *lohi,
                 uint64_t entries, uint64_t moves);
};

/* Levels for rs, borrowing tables' levels if tables != NULL (it must outlive
 * the tb_mem).  NULL if out of memory. */
struct tb_mem *tb_mem_new(const struct ruleset *rs, const struct tb_set *tables);
void tb_mem_free(struct tb_mem *m);
/* The set to probe (valid until tb_mem_free). */
const struct tb_set *tb_mem_set(const struct tb_mem *m);
/* Highest level held (borrowed or built), -1 if none. */
int tb_mem_top(const struct tb_mem *m);
/* Positions built (borrowed levels not counted): 3 bytes each are kept. */
uint64_t tb_mem_built(const struct tb_mem *m);
/* Positions tb_mem_extend(m, n, o) would build (a dry run). */
uint64_t tb_mem_plan(const struct tb_mem *m, int n, const struct tb_mem_opts *o);
/* Build levels top+1..n as far as they fit (see above): SOW_OK (also when
 * some did not fit: see tb_mem_top), SOW_E_INTERRUPTED or SOW_E_NOMEM. */
enum sow_status tb_mem_extend(struct tb_mem *m, int n, const struct tb_mem_opts *o,
                              struct sow_error *e);

#endif
