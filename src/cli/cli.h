/* sow command line: shared option handling.
 *
 * Exit statuses (README "Trust"): 0 success, 1 failure while working
 * (I/O, out of memory), 2 bad input (usage, rule set, position, move, file),
 * 130 interrupted by Ctrl-C. */
#ifndef SOW_CLI_H
#define SOW_CLI_H

#include <signal.h>
#include <stdbool.h>

#include "sow/position.h"
#include "sow/rules.h"
#include "sow/status.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD = 2, CLI_INTERRUPTED = 130 };

/* Options every game command takes. */
struct cli_game {
    const char *rules;  /* --rules, default oware */
    long pits;          /* --pits, 0 = from the position or 6 */
    long seeds;         /* --seeds, -1 = 4 */
    const char *pos;    /* POS, NULL = start */
    struct ruleset rs;
    sow_position p;
};

/* The one place a library status becomes an exit code (sow/status.h). */
int cli_exit_code(enum sow_status st);

/* "sow CMD: message" on stderr; returns CLI_BAD. */
int cli_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* If argv[*i] is option `name` ("--name V" or "--name=V"), store V in *val,
 * advance *i and return 1; missing value: message, return -1; else 0. */
int cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val);

/* Same for an integer option in [lo, hi]. */
int cli_opt_long(const char *cmd, int argc, char **argv, int *i, const char *name, long lo,
                 long hi, long *val);

/* Try --rules/--pits/--seeds at argv[*i]: 1 consumed, 0 not one of them, -1 error. */
int cli_game_opt(const char *cmd, int argc, char **argv, int *i, struct cli_game *g);

/* Resolve rule set and position from g's fields. 0 or CLI_BAD (message printed). */
int cli_game_setup(const char *cmd, struct cli_game *g);

/* A directory to read from must exist and be a directory: 0, or CLI_BAD
 * with a one-line message. */
int cli_check_dir(const char *cmd, const char *dir);

/* An argument that looks like an option but is not known. */
int cli_unknown(const char *cmd, const char *arg);

bool cli_is_help(const char *arg);

/* Command entry points. */
int cmd_show(int argc, char **argv);
int cmd_moves(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_perft(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_tables(int argc, char **argv);
int cmd_variants(int argc, char **argv);
int cmd_engine(int argc, char **argv); /* cmd_engine.c */
int cmd_match(int argc, char **argv);  /* cmd_match.c */

/* bench parts (bench_*.c) */
int bench_movegen(const char *rules, int argc, char **argv);
int bench_search(int argc, char **argv);
int bench_tables(int argc, char **argv);
int bench_rules(int argc, char **argv);
int bench_engine(int argc, char **argv);   /* bench_engine.c */
/* One exact solve of p with a fresh search context (bench_search.c): value,
 * nodes, positions expanded, wall and process CPU seconds.  0, or a CLI
 * status after a one-line message (interrupted: CLI_INTERRUPTED). */
int bench_solve_once(const struct ruleset *rs, const sow_position *p, int threads, unsigned hash,
                     volatile sig_atomic_t *stop, int *val, uint64_t *nodes, uint64_t *expanded,
                     double *secs, double *cpu);

#endif
