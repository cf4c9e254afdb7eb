/* Endgame tables, build side: how build.c hands a build to the lean builder. */
#ifndef SOW_TABLES_LEAN_H
#define SOW_TABLES_LEAN_H

#include "sow/tables.h"

/* lean.c: if opt->builder or the memory budget picks the lean builder for
 * this build, run it, put its status in *rc (message in *e) and return true;
 * false: today's builder (build.c) goes on. */
bool tb_lean_build_chosen(const struct ruleset *rs, const char *dir, int max_level,
                          const struct tb_build_opts *opt, enum sow_status *rc,
                          struct sow_error *e);

#endif
