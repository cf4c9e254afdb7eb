/* sow command line: the one option parser, signals, shared helpers.
 *
 * Exit statuses (docs/cli.md "Exit statuses"): 0 success, 1 failure while working
 * (I/O, out of memory), 2 bad input (usage, rule set, position, move, file),
 * 130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM.  Every error is
 * one line on stderr, "sow CMD: ..." (control characters in quoted arguments
 * become '?'); --help prints usage on stdout and exits 0.
 *
 * Options are tables (struct cli_option: name, argument, range, help line),
 * read by cli_parse, which also writes the option part of --help from them:
 *
 *   long threads = 1;
 *   const struct cli_option opts[] = {
 *       {"--threads", CLI_LONG, &threads, 1, 64, "T", "threads, default 1"},
 *       {0}};
 *   --threads 3      -> threads = 3
 *   --threads=0      -> "sow solve: --threads '0': expected a whole number
 *                        in 1..64", exit 2
 *
 * Thread-safety: everything here is for the main thread (signal handlers
 * only set the flag). */
#ifndef SOW_CLI_H
#define SOW_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "sow/position.h"
#include "sow/rules.h"
#include "sow/status.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD = 2, CLI_INTERRUPTED = 130, CLI_TERMINATED = 143 };

/* cli_parse's result when --help was asked for (usage printed): exit 0. */
#define CLI_HELP (-1)

enum cli_kind {
    CLI_FLAG,   /* no argument; dst is a bool */
    CLI_STR,    /* dst is a const char * (argv storage) */
    CLI_LONG,   /* whole number in [lo, hi]; dst is a long */
    CLI_DOUBLE, /* number in [lo, hi] (lo excluded if open_lo); dst is a double */
};

struct cli_option {
    const char *name;  /* "--threads"; NULL ends the table */
    enum cli_kind kind;
    void *dst;
    double lo, hi;     /* CLI_LONG / CLI_DOUBLE range */
    const char *arg;   /* the argument's name in usage ("T"), NULL for flags */
    const char *help;  /* one line of usage; NULL: not listed */
    bool open_lo;      /* CLI_DOUBLE: the value must be > lo */
    bool *seen;        /* if not NULL, set when the option is given */
};

/* The rule-set options every game command takes (struct cli_game g). */
#define CLI_GAME_OPTIONS(g)                                                                   \
    {"--rules", CLI_STR, &(g).rules, 0, 0, "R", "rule set, default oware", 0, 0},            \
    {"--pits", CLI_LONG, &(g).pits, 1, SOW_MAX_PITS, "N", "holes per side, default 6", 0, 0}, \
    {"--seeds", CLI_LONG, &(g).seeds, 0, SOW_MAX_SEEDS, "S", "seeds per hole, default 4", 0, 0}

struct cli_spec {
    const char *cmd;      /* "solve", "tables build": the messages' prefix */
    const char *usage;    /* usage line(s) and prose, before the options */
    const struct cli_option *opts;
    const char *notes;    /* after the options (may be NULL) */
    int max_pos;          /* positional arguments allowed */
    const char *pos_name; /* "position": "more than one position given" */
};

/* Parse argv[1..argc-1] by spec: options into their dst, positional
 * arguments into pos[0..*npos-1] (pos may be NULL if max_pos is 0).
 * 0; CLI_HELP (usage on stdout); or CLI_BAD after one line on stderr. */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, const char **pos, int *npos);

/* Usage of spec on f: its text, then one line per listed option. */
void cli_usage(const struct cli_spec *spec, FILE *f);

/* Most threads a command accepts: what the machine runs at once, at least 8
 * (more only slows down and costs memory: docs/cli.md "Exit statuses"). */
long cli_max_threads(void);

/* 0 if a --memory of gb GB is at most this machine's RAM (or the RAM is
 * unknown), else the one-line refusal's exit code, naming how much there is. */
int cli_memory_check(const char *cmd, double gb);

/* The MiB a table in memory (transposition table, tables' block cache) may
 * take: 3/4 of the machine's memory, 0 where that is unknown (no limit);
 * the machine's MiB in *ram_mb if not NULL. */
double cli_table_room(double *ram_mb);

/* Transposition tables: the largest this machine takes in MiB (the room,
 * at most cap), and the check of a size asked for (what: the option, as
 * "--hash"): 0, or the one-line refusal's exit code saying what fits.  A
 * table too large is refused before any work, not found out when its
 * allocation fails. */
long cli_hash_max(long cap);
int cli_hash_check(const char *cmd, const char *what, long mb);

/* Install the SIGINT and SIGTERM handlers; returns the flag they set.  With
 * second_kills, a second signal ends the process at once (commands that
 * write no file).  One flag per process: a handler cannot be given a context. */
volatile sig_atomic_t *cli_catch_signals(bool second_kills);

/* MPI ranks (docs/distributed.md): SIGUSR1, which mpirun forwards, stops
 * like SIGINT (call after cli_catch_signals; exit status 130). */
void cli_catch_usr1(void);

/* Exit status of an interrupted command: 130 after SIGINT, 143 after SIGTERM. */
int cli_interrupted(void);

/* A relay cache for rs (NULL if rs has no relay sowing or memory is short),
 * cut by *stop when it is set (rules_cache_set_stop). */
struct sow_relay_cache *cli_relay_cache(const struct ruleset *rs, unsigned log2_entries,
                                        volatile sig_atomic_t *stop);

/* Options every game command takes. */
struct cli_game {
    const char *rules;  /* --rules, default oware */
    long pits;          /* --pits, 0 = from the position or 6 */
    long seeds;         /* --seeds, -1 = 4 */
    const char *pos;    /* POS, NULL = start */
    struct ruleset rs;
    sow_position p;
};

/* The one place a library status becomes an exit code (sow/status.h);
 * SOW_E_INTERRUPTED gives cli_interrupted(). */
int cli_exit_code(enum sow_status st);

/* "sow CMD: message" on stderr; returns CLI_BAD. */
int cli_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A --rules value into out as names separated by commas: "all" becomes every
 * rule set of the registry (sow_rule_names), anything else is copied (the
 * callers check each name); truncated to len. */
void cli_rules_csv(const char *spec, char *out, size_t len);

/* Resolve rule set and position from g's fields. 0 or CLI_BAD (message
 * printed): rules and notation fail only with SOW_E_INPUT. */
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
int cmd_serve(int argc, char **argv);  /* cmd_serve.c (a refusal without libmicrohttpd) */
int cmd_annotate(int argc, char **argv); /* cmd_annotate.c */
int cmd_book(int argc, char **argv);     /* cmd_book.c */

/* bench parts (bench_*.c) */
int bench_movegen(const char *rules, int argc, char **argv);
int bench_search(int argc, char **argv);
int bench_tables(int argc, char **argv);
/* sow bench tables --mpi (bench_mpi.c; refuses in builds without MPI) */
int bench_tables_mpi(const char *rules, long pits, long seeds, long threads, const char *builder,
                     const char *ranks);
int bench_probe(int argc, char **argv);    /* bench_probe.c */
int bench_rules(int argc, char **argv);
int bench_engine(int argc, char **argv);   /* bench_engine.c */
/* One exact solve of p with a fresh search context (bench_search.c): value,
 * nodes, positions expanded, wall and process CPU seconds.  0, or a CLI
 * status after a one-line message (interrupted: CLI_INTERRUPTED). */
int bench_solve_once(const struct ruleset *rs, const sow_position *p, int threads, unsigned hash,
                     volatile sig_atomic_t *stop, int *val, uint64_t *nodes, uint64_t *expanded,
                     double *secs, double *cpu);

#endif
