/* Endgame tables, build side: how build.c hands a build to the lean builder. */
#ifndef SOW_TABLES_LEAN_H
#define SOW_TABLES_LEAN_H

#include "tables/tables.h"

/* lean.c: the levels the fast builder (build.c) builds, the lean builder
 * doing the rest: max_level (all of them) for --builder fast, or under auto
 * when every missing level fits the budget with it; -1 (none) for --builder
 * lean; under auto otherwise the levels below the first missing one that
 * does not fit (the fast builder is about twice as fast where it fits), or
 * -1 if none of them is missing. */
int tb_lean_fast_to(const struct ruleset *rs, const char *dir, int max_level,
                    const struct tb_build_opts *opt);

/* lean.c: the lean builder's up-front refusals (too many entries, over
 * the budget) for the missing levels above `from`, before any is built. */
enum sow_status tb_lean_check(const struct ruleset *rs, const char *dir, int max_level,
                              int from, const struct tb_build_opts *opt, struct sow_error *e);

/* lean.c: levels 0..max_level by the lean builder within the budget; the
 * levels present up to built_to were built just before by the fast builder
 * (tb_build's first stage), so level_done does not report them again.
 * The caller has run tb_lean_check(..., built_to, ...) first. */
enum sow_status tb_lean_build(const struct ruleset *rs, const char *dir, int max_level,
                              int built_to, const struct tb_build_opts *opt,
                              struct sow_error *e);

#endif
