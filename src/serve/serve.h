/* sow serve's answers: an HTTP request (method, path, query arguments) in, a
 * body, its content type and an HTTP status out, without a socket
 * (cmd_serve.c puts it on libmicrohttpd; tests/serve/test_serve.c calls it
 * directly).
 *
 *   GET /                                    -> 200 the board page (index.html)
 *   GET /app.js                              -> 200 one of the page's files
 *   GET /api/rules                           -> 200 {"rules":[{"name":"oware",...}]}
 *   GET /api/oware?pos=2,2,2/2,2,2/A          -> 200 {"rules":"oware","pos":...,
 *                                                "value":6,"exact":true,...}
 *   GET /api/oware/mainline?pits=3&seeds=2   -> 200 {...,"line":[{"move","pos"},...]}
 *   GET /api/oware/moves?pos=...             -> 200 {...,"moves":[{"move","pos",...}]}
 *   GET /api/chess                           -> 404 {"error":"unknown rule set ..."}
 *
 * How a value is found (docs/serve.md) is sow/analyse.h's analyse_position,
 * given the context's shared levels, solution files and tables of the
 * position's rule set and size: the levels solved in memory and shared by
 * every request, a solution file holding the position, the exact solver
 * (tables, closure) within half the time budget, else the alpha-beta engine
 * over every move within the other half; analyse_json writes the answer.
 * serve keeps the requests, the context and the other answers.  Nothing in
 * a request names a file: the page's files are compiled in (www.h) and
 * looked up by exact name, and the rule set is looked up in the registry
 * before any table or solution file of it is opened.
 *
 * Thread-safety: serve_answer may run in many threads at once on one context
 * (each request gets its own searches; the table sets and solution files are
 * opened once under the context's lock and only probed afterwards; the
 * shared levels lock themselves: sow/analyse.h).  serve_ctx_add_solution is for before the first request. */
#ifndef SOW_SERVE_H
#define SOW_SERVE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "sow/rules.h"

/* Longest path, and longest query (names and values summed), a request may
 * have: anything longer is refused with 414 before it is looked at. */
#define SERVE_MAX_PATH 128
#define SERVE_MAX_QUERY 512
/* Table sets kept open: one per rule set and board size asked for. */
#define SERVE_MAX_SETS 64
/* Solution files kept open, over all rule sets (--solution and those found
 * in the tables directory). */
#define SERVE_MAX_SOLS 64

struct tb_set;
struct sol;
struct analyse_levels;

/* The tables and shared levels of one rule set and board size (known.c),
 * made at its first request and kept. */
struct serve_set {
    struct ruleset rs;   /* the rule set the tables were opened with (outlives tb) */
    struct tb_set *tb;   /* NULL: none could be opened (missing dir: an empty set) */
    /* The lowest levels solved in memory, shared by every request of this
     * rule set and size (sow/analyse.h: extended by the request that needs
     * a level above those built, if it fits ctx->levels positions, probed
     * otherwise); NULL if ctx->levels is 0. */
    struct analyse_levels *levels;
};

/* A solution file: the rule set it was opened with (outlives sol). */
struct serve_sol {
    struct ruleset rs;
    struct sol *sol;
};

struct serve_ctx {
    const char *tables;  /* --tables DIR, or NULL: no tables */
    int threads;         /* search threads per request */
    double time_budget;  /* seconds per request (exact try, then the engine) */
    unsigned hash_mb;    /* the engine's transposition table per request, MiB
                            (0: sow/analyse.h's default, 16) */
    double memory;       /* bytes the exact try's closure may hold (0: 3/4 of RAM),
                            per request: the caller divides by the concurrency */
    volatile sig_atomic_t *stop; /* the server is stopping (may be NULL) */
    unsigned long long levels; /* positions of the shared levels per set (0: none) */
    /* Told once of each file of --tables left out (damaged, unreadable): the
     * answers stay right without it, but the operator should know.  May be
     * NULL; called under the lock. */
    void (*note)(const char *line);
    pthread_mutex_t lock; /* guards sets / nsets and sols / nsols */
    struct serve_set sets[SERVE_MAX_SETS];
    int nsets;
    struct serve_sol sols[SERVE_MAX_SOLS];
    int nsols;
};

/* One request, as the HTTP layer decoded it.  Arguments other than pos, pits
 * and seeds are refused (400), so that a typo is not silently ignored (the
 * page's files take none). */
struct serve_arg {
    const char *name, *value;
};

struct serve_request {
    const char *method;  /* "GET" (HEAD is answered as GET by the HTTP layer) */
    const char *path;    /* "/api/oware/mainline", without the query */
    const struct serve_arg *args;
    int nargs;
};

/* The answer: status (200, 4xx, 5xx), its content type, and a body of len
 * bytes: a JSON text, NUL-terminated and malloc'd (NULL only if memory ran
 * out: status 500 then), or one of the page's compiled-in files (then
 * is_static: the caller must not free it). */
struct serve_answer {
    int status;
    char *body;
    size_t len;
    const char *type;  /* "application/json", "text/html; charset=utf-8", ... */
    bool is_static;
};

/* The default of ctx->levels: about 12 MB kept per rule set and size. */
#define SERVE_LEVELS_DEFAULT (4ULL << 20)

void serve_ctx_init(struct serve_ctx *c, const char *tables, int threads, double time_budget,
                    volatile sig_atomic_t *stop);
void serve_ctx_free(struct serve_ctx *c);

/* Open the solution file at path (sow solve --save) for the rule set and
 * board size it holds (the registry's, tried in turn: the header names
 * them) and answer its positions from it.  SOW_OK, or SOW_E_INPUT (not a
 * solution file, damaged, of no known rule set, too many files) or SOW_E_IO
 * with one line in *e.  Before the first request only. */
enum sow_status serve_ctx_add_solution(struct serve_ctx *c, const char *path,
                                       struct sow_error *e);
/* The rule set and board size of solution file i (for the start-up line). */
const struct ruleset *serve_ctx_solution_rules(const struct serve_ctx *c, int i,
                                               unsigned long long *positions);

/* Free an answer's body (nothing for a static one). */
void serve_answer_free(struct serve_answer *a);

/* Answer one request (see above).  Never fails otherwise: every error is an
 * answer with its status and {"error":"..."}. */
struct serve_answer serve_answer(struct serve_ctx *c, const struct serve_request *rq);

#endif
