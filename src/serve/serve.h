/* sow serve's answers: an HTTP request (method, path, query arguments) in, a
 * JSON text and an HTTP status out, without a socket (cmd_serve.c puts it on
 * libmicrohttpd; tests/test_serve.c calls it directly).
 *
 *   GET /api/oware?pos=2,2,2/2,2,2/A          -> 200 {"rules":"oware","pos":...,
 *                                                "value":6,"exact":true,...}
 *   GET /api/oware/mainline?pits=3&seeds=2   -> 200 {...,"line":[{"move","pos"},...]}
 *   GET /api/chess                           -> 404 {"error":"unknown rule set ..."}
 *
 * How a value is found (docs/cli.md "sow serve"): the loaded endgame tables
 * and the exact solver (tables, closure) within half the time budget, else the
 * alpha-beta engine over every move within the other half.  Nothing in a
 * request names a file: the rule set is looked up in the registry before any
 * table of it is opened.
 *
 * Thread-safety: serve_answer may run in many threads at once on one context
 * (each request gets its own searches; the table sets are opened once under
 * the context's lock and only probed afterwards). */
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

struct tb_set;

struct serve_set {
    struct ruleset rs;   /* the rule set the tables were opened with (outlives tb) */
    struct tb_set *tb;   /* NULL: none could be opened (missing dir: an empty set) */
};

struct serve_ctx {
    const char *tables;  /* --tables DIR, or NULL: no tables */
    int threads;         /* search threads per request */
    double time_budget;  /* seconds per request (exact try, then the engine) */
    unsigned hash_mb;    /* the engine's transposition table per request */
    double memory;       /* bytes the exact try's closure may hold (0: 3/4 of RAM),
                            per request: the caller divides by the concurrency */
    volatile sig_atomic_t *stop; /* the server is stopping (may be NULL) */
    pthread_mutex_t lock; /* guards sets / nsets */
    struct serve_set sets[SERVE_MAX_SETS];
    int nsets;
};

/* One request, as the HTTP layer decoded it.  Arguments other than pos, pits
 * and seeds are refused (400), so that a typo is not silently ignored. */
struct serve_arg {
    const char *name, *value;
};

struct serve_request {
    const char *method;  /* "GET" (HEAD is answered as GET by the HTTP layer) */
    const char *path;    /* "/api/oware/mainline", without the query */
    const struct serve_arg *args;
    int nargs;
};

/* The answer: status (200, 4xx, 5xx) and a JSON text, NUL-terminated,
 * malloc'd (NULL only if memory ran out: status 500 then). */
struct serve_answer {
    int status;
    char *json;
    size_t len;
};

void serve_ctx_init(struct serve_ctx *c, const char *tables, int threads, double time_budget,
                    volatile sig_atomic_t *stop);
void serve_ctx_free(struct serve_ctx *c);

/* Answer one request (see above).  Never fails otherwise: every error is an
 * answer with its status and {"error":"..."}. */
struct serve_answer serve_answer(struct serve_ctx *c, const struct serve_request *rq);

#endif
