/* Endgame tables: what the module's files share (not part of the API). */
#ifndef SOW_TABLES_INTERNAL_H
#define SOW_TABLES_INTERNAL_H

#include "sow/tables.h"

struct tb_level {
    const int8_t *v;   /* values in index order, NULL if not loaded */
    uint64_t entries;
    uint64_t checksum;
    void *map;         /* the file mapping (NULL for levels put from memory) */
    size_t maplen;
    int8_t *own;       /* values owned by the set (tb_set_build_level), else NULL */
    int8_t *lohi;      /* owned forced bounds (lo, hi) per entry, or NULL */
};

struct tb_set {
    struct ruleset rs;
    char dir[4096];
    struct tb_index ix;
    uint64_t boards[TB_MAX_LEVEL + 1]; /* boards per state of each level */
    struct tb_level lv[TB_MAX_LEVEL + 1];
    struct tb_work *work; /* builder workspace kept by tb_set_build_level */
};

/* The builder's workspace (build.c): regions reserved for the largest level
 * seen and reused, so that consecutive levels do not fault their pages in
 * again.  tb_solve_level_in is tb_solve_level with a caller's workspace. */
struct tb_work;
struct tb_work *tb_work_alloc(void);
void tb_work_destroy(struct tb_work *wk);
int tb_solve_level_in(const struct ruleset *rs, const struct tb_set *lower, int n, int8_t *out,
                      int8_t *lohi, const struct tb_build_opts *opt, struct tb_work *wk,
                      char *err, int errlen);

/* Make level n of s point at values held elsewhere (not owned). */
void tb_set_put_level(struct tb_set *s, int n, const int8_t *v, uint64_t entries);

/* lean.c: if opt->builder or the memory budget picks the lean builder for
 * this build, run it, put its result in *rc and return true; false: today's
 * builder (build.c) goes on. */
bool tb_lean_build_chosen(const struct ruleset *rs, const char *dir, int max_level,
                          const struct tb_build_opts *opt, int *rc, char *err, int errlen);

#endif
