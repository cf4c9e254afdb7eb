/* sow — the C side of the Python module (sow._sow, built with cffi).
 *
 * A thin layer over libsow's public API (sow/rules.h, sow/position.h,
 * sow/search.h, sow/tables_probe.h) with plain types and one error convention, so
 * that the cffi declarations in python/sow_cffi.py stay small and do not
 * change when the library's own signatures do: every function that can fail
 * returns 0 (or a count) on success, -1 with a one-line message in err
 * (size errlen) on bad input or failure, and SOWPY_INTERRUPTED when Ctrl-C
 * stopped it.  The Python side turns -1 into ValueError.
 *
 * Thread-safety: a sowpy_rules or sowpy_tables is read-only once made and
 * may be shared; each call to sowpy_solve makes its own search context.
 * sowpy_solve catches SIGINT only while it runs on the process's main thread.
 */
#ifndef SOW_PYTHON_SOWPY_H
#define SOW_PYTHON_SOWPY_H

#include <stdint.h>

#include "sow/rules.h"

#define SOWPY_INTERRUPTED (-2)
#define SOWPY_MOVE_LEN 16
#define SOWPY_POS_LEN 192
#define SOWPY_MAX_MOVES (SOW_MAX_PITS + 1)
#define SOWPY_MAX_PV 256

struct sowpy_rules;
struct sowpy_tables;

const char *sowpy_version(void);
const char *sowpy_commit(void);
/* Canonical rule-set name i (0, 1, ...), NULL past the last. */
const char *sowpy_rule_name(int i);

/* A rule set by name or alias; pits 0 and seeds < 0 take the defaults. */
struct sowpy_rules *sowpy_rules_new(const char *name, int pits, int seeds, char *err, int errlen);
void sowpy_rules_free(struct sowpy_rules *r);
const char *sowpy_rules_name(const struct sowpy_rules *r);
int sowpy_rules_pits(const struct sowpy_rules *r);
int sowpy_rules_seeds(const struct sowpy_rules *r);

/* Holes per side of a position token, or -1 with a reason. */
int sowpy_token_pits(const char *tok, char *err, int errlen);
int sowpy_parse(const struct sowpy_rules *r, const char *tok, sow_position *out, char *err,
                int errlen);
void sowpy_start(const struct sowpy_rules *r, sow_position *out);
void sowpy_format(const struct sowpy_rules *r, const sow_position *p, char *buf, int len);
/* The board drawn as `sow show` draws it, into buf (truncated to len). */
void sowpy_draw(const struct sowpy_rules *r, const sow_position *p, char *buf, int len);

/* The legal moves of p with their results; if none, why the game is over
 * (end, its name) and the seeds the settlement gives A and B. */
struct sowpy_moves {
    int n;
    char name[SOWPY_MAX_MOVES][SOWPY_MOVE_LEN];
    sow_position pos[SOWPY_MAX_MOVES];
    int captured[SOWPY_MAX_MOVES][2];
    int end;
    const char *end_name;
    int settle[2];
};
void sowpy_moves(const struct sowpy_rules *r, const sow_position *p, struct sowpy_moves *out);

/* Endgame tables in dir for r's rule set and size (an empty set if none). */
struct sowpy_tables *sowpy_tables_open(const struct sowpy_rules *r, const char *dir, char *err,
                                       int errlen);
void sowpy_tables_free(struct sowpy_tables *t);
int sowpy_tables_max_level(const struct sowpy_tables *t);
/* 1 and *value if p's level is loaded, else 0. */
int sowpy_tables_probe(const struct sowpy_tables *t, const sow_position *p, int *value);

struct sowpy_solve_opts {
    int threads;           /* <= 0: 1 */
    unsigned hash_mb;      /* bounded mode's table, MiB; 0: 64 */
    int depth;             /* > 0: bounded to this many plies */
    double seconds;        /* > 0: bounded, deepening for this long */
    long long levels;      /* exact mode's in-memory levels, positions; 0: default, < 0: none */
    int moves;             /* also every legal move's exact value (exact mode) */
    const struct sowpy_tables *tables; /* or NULL */
};

struct sowpy_result {
    int over, exact, value, lower, upper, depth;
    char best[SOWPY_MOVE_LEN];            /* "" if over */
    int pv_len, pv_repeats;
    char pv[SOWPY_MAX_PV][SOWPY_MOVE_LEN];
    int nmoves;                            /* moves valued (opts.moves), else 0 */
    char move[SOWPY_MAX_MOVES][SOWPY_MOVE_LEN];
    int move_value[SOWPY_MAX_MOVES];
    uint64_t nodes, expanded, tb_hits;
    double seconds;
};

/* Solve p: exact (depth 0 and seconds 0) or bounded.  0, -1 + err, or
 * SOWPY_INTERRUPTED. */
int sowpy_solve(const struct sowpy_rules *r, const sow_position *p,
                const struct sowpy_solve_opts *o, struct sowpy_result *res, char *err,
                int errlen);

/* Parse move name s for p's side to move (sow/position.h move_parse; legality
 * not checked) and write its canonical name into out.  0, or -1 + err. */
int sowpy_move_parse(const struct sowpy_rules *r, const sow_position *p, const char *s,
                     char *out, int outlen, char *err, int errlen);

/* p analysed as sow serve's GET /api/RULES answers (sow/analyse.h): the
 * exact solver within half of seconds, else the engine; its JSON text,
 * malloc'd, into *json (sowpy_free it).  0, -1 + err, or SOWPY_INTERRUPTED. */
int sowpy_analyse(const struct sowpy_rules *r, const sow_position *p, double seconds,
                  int threads, const struct sowpy_tables *tables, char **json, char *err,
                  int errlen);
void sowpy_free(void *ptr);

#endif
