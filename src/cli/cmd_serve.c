/* sow serve: the JSON API (src/serve/serve.h) over HTTP, on libmicrohttpd.
 * Built only where meson found libmicrohttpd (SOW_SERVE); without it the
 * command still parses its options and --help, then says why it cannot run. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cli.h"
#include "tables_path.h"
#include "util.h"
#ifdef SOW_SERVE
#include <microhttpd.h>

#include "serve/serve.h"
#endif

static const char usage[] =
    "usage: sow serve [--tables DIR] [--solution FILE]... [--bind ADDR] [--port P]\n"
    "                 [--threads T] [--time S] [--max-clients N] [--levels MPOS]\n"
    "Serve the board page and answer HTTP requests with JSON (docs/serve.md):\n"
    "  GET /                                       the board page (compiled in)\n"
    "  GET /api/RULES?pos=POS[&pits=N][&seeds=S]   value, source, every move's value\n"
    "  GET /api/RULES/mainline?pos=POS             the principal variation\n"
    "  GET /api/RULES/moves?pos=POS                the legal moves, without values\n"
    "  GET /api/rules                              the rule sets\n"
    "pos absent: the start.  Values are exact from the levels shared in memory, a\n"
    "solution file, or the solver within half of --time, else the engine's\n"
    "estimate in the other half (\"exact\": false).\n";

static const char notes[] =
    "--solution FILE (repeatable; also DIR's RULES-2xN-LLL.sowsol files): positions\n"
    "it holds are answered from it.  --levels: the lowest levels of each rule set\n"
    "and size asked for, solved once in memory (3 bytes a position) and shared.\n"
    "Errors are {\"error\": \"...\"} with a 4xx status; the server keeps serving.\n"
    "At most --max-clients requests are worked on at once (more wait their turn).\n"
    "It listens on --bind only (default loopback); --port 0 takes a free port.  The\n"
    "address it listens on is printed on stderr: \"sow serve: listening on\n"
    "http://ADDR:PORT/\".  Ctrl-C stops it (exit 130; SIGTERM: 143) after the\n"
    "requests under way are answered.\n";

/* --solution may be given this many times */
#define SERVE_MAX_FILES 16

struct serve_args {
    const char *tables, *bind, *solution;
    const char *solutions[SERVE_MAX_FILES];
    int nsolutions;
    long port, threads, max_clients;
    double tlimit, levels;
};

/* --solution is repeatable, which the option table is not: every one is
 * taken out of argv (into a->solutions) before the table parses the rest,
 * and the table still lists it for --help.  0 or CLI_BAD. */
static int take_solutions(int argc, char **argv, struct serve_args *a, char **rest, int *nrest)
{
    static const char opt[] = "--solution";
    const size_t n = sizeof opt - 1;
    *nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        if (i > 0 && strncmp(argv[i], opt, n) == 0 && (argv[i][n] == 0 || argv[i][n] == '=')) {
            if (argv[i][n] == '=')
                v = argv[i] + n + 1;
            else if (i + 1 < argc)
                v = argv[++i];
            else
                return cli_bad("serve", "option --solution needs a value");
            if (!*v)
                return cli_bad("serve", "option --solution needs a value, not ''");
            if (a->nsolutions == SERVE_MAX_FILES)
                return cli_bad("serve", "--solution given more than %d times", SERVE_MAX_FILES);
            a->solutions[a->nsolutions++] = v;
            continue;
        }
        rest[(*nrest)++] = argv[i];
    }
    return 0;
}

static int serve_parse(int argc, char **argv, struct serve_args *a)
{
    *a = (struct serve_args){.bind = "127.0.0.1", .port = 8080, .threads = 1,
                             .max_clients = 8, .tlimit = 1.0, .levels = 4};
    char **rest = malloc(sizeof *rest * (size_t)(argc + 1));
    if (!rest)
        return cli_bad("serve", "out of memory");
    int nrest;
    if (take_solutions(argc, argv, a, rest, &nrest)) {
        free(rest);
        return CLI_BAD;
    }
    rest[nrest] = NULL;
    const struct cli_option opts[] = {
        {"--tables", CLI_STR, &a->tables, 0, 0, "DIR",
         "the endgame tables and solution files in DIR, or in DIR1:DIR2:.. (default: none)", 0,
         0},
        {"--solution", CLI_STR, &a->solution, 0, 0, "FILE",
         "answer the positions of a solution file from it (repeatable)", 0, 0},
        {"--bind", CLI_STR, &a->bind, 0, 0, "ADDR",
         "address to listen on, IPv4 or IPv6, default 127.0.0.1", 0, 0},
        {"--port", CLI_LONG, &a->port, 0, 65535, "P", "port, default 8080; 0: a free one", 0, 0},
        {"--threads", CLI_LONG, &a->threads, 1, (double)cli_max_threads(), "T",
         "search threads per request, default 1", 0, 0},
        {"--time", CLI_DOUBLE, &a->tlimit, 0, 3600, "S",
         "seconds of search per request, default 1", true, 0},
        {"--max-clients", CLI_LONG, &a->max_clients, 1, 1024, "N",
         "requests worked on at once, default 8", 0, 0},
        {"--levels", CLI_DOUBLE, &a->levels, 0, 4096, "MPOS",
         "M positions of shared levels per rule set and size, default 4", 0, 0},
        {0}};
    const struct cli_spec spec = {"serve", usage, opts, notes, 0, NULL};
    int r = cli_parse(&spec, nrest, rest, NULL, NULL);
    free(rest);
    if (r)
        return r;
    char why[4200]; /* a mistyped --tables would otherwise serve without them */
    if (a->tables && tpath_check(a->tables, why, sizeof why))
        return cli_bad("serve", "--tables: %s", why);
    return 0;
}

#ifdef SOW_SERVE

/* The query arguments of one request, as libmicrohttpd decoded them. */
#define SERVE_MAX_ARGS 8
struct args_seen {
    struct serve_arg a[SERVE_MAX_ARGS];
    int n;
    bool too_many;
};

/* A file of --tables left out (serve_ctx's note). */
static void say_left_out(const char *why)
{
    fprintf(stderr, "sow serve: note: %s (left out; answered without it)\n", why);
}

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    (void)kind;
    struct args_seen *s = cls;
    if (s->n == SERVE_MAX_ARGS) {
        s->too_many = true;
        return MHD_NO; /* stop iterating */
    }
    s->a[s->n++] = (struct serve_arg){key ? key : "", value};
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    (void)upload_data;
    struct serve_ctx *c = cls;
    /* GET and HEAD are answered on the second call, once the request is
     * whole (a body, which they should not have, is read and dropped):
     * libmicrohttpd keeps the connection open only for an answer queued
     * then.  Other methods get their 405 at once, and the connection is
     * closed. */
    static int whole; /* a marker: the request's first call was seen */
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (get && !*con_cls) {
        *con_cls = &whole;
        return MHD_YES;
    }
    if (get && *upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct args_seen seen = {0};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, &seen);
    struct serve_answer ans;
    if (seen.too_many) {
        static const char msg[] = "{\"error\":\"more than 8 query parameters\"}";
        ans = (struct serve_answer){414, (char *)msg, sizeof msg - 1, "application/json", true};
    } else {
        const struct serve_request rq = {method, url, seen.a, seen.n};
        ans = serve_answer(c, &rq);
    }
    *upload_data_size = 0;
    if (!ans.body)
        return MHD_NO; /* out of memory: the connection is closed */
    struct MHD_Response *r = MHD_create_response_from_buffer(
        ans.len, ans.body, ans.is_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!r) {
        serve_answer_free(&ans);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ans.type);
    /* the page's files may be kept but are checked again (a new sow may
     * serve new ones); answers are not kept */
    MHD_add_response_header(r, "Cache-Control", ans.is_static ? "no-cache" : "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* the page loads nothing from elsewhere and runs no inline script */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data: blob:; "
                            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    enum MHD_Result q = MHD_queue_response(conn, (unsigned)ans.status, r);
    MHD_destroy_response(r);
    return q;
}

int cmd_serve(int argc, char **argv)
{
    struct serve_args a;
    int r0 = serve_parse(argc, argv, &a);
    if (r0)
        return r0 == CLI_HELP ? CLI_OK : r0;

    /* the address, IPv4 or IPv6, parsed here: libmicrohttpd takes a sockaddr */
    struct sockaddr_in sa4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)a.port)};
    struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)a.port)};
    const struct sockaddr *sa;
    bool v6 = false;
    if (inet_pton(AF_INET, a.bind, &sa4.sin_addr) == 1) {
        sa = (const struct sockaddr *)&sa4;
    } else if (inet_pton(AF_INET6, a.bind, &sa6.sin6_addr) == 1) {
        sa = (const struct sockaddr *)&sa6;
        v6 = true;
    } else {
        return cli_bad("serve", "--bind '%s': not an IPv4 or IPv6 address", a.bind);
    }

    /* A second Ctrl-C ends the process at once: serve writes no file. */
    volatile sig_atomic_t *stop = cli_catch_signals(true);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is its business */

    struct serve_ctx ctx;
    serve_ctx_init(&ctx, a.tables, (int)a.threads, a.tlimit, stop);
    ctx.levels = (unsigned long long)(a.levels * 1e6);
    ctx.note = say_left_out;
    for (int i = 0; i < a.nsolutions; i++) {
        struct sow_error e;
        enum sow_status st = serve_ctx_add_solution(&ctx, a.solutions[i], &e);
        if (st != SOW_OK) {
            serve_ctx_free(&ctx);
            cli_bad("serve", "--solution %s", e.msg);
            return cli_exit_code(st);
        }
        unsigned long long n;
        const struct ruleset *rs = serve_ctx_solution_rules(&ctx, i, &n);
        fprintf(stderr, "sow serve: %s: %s 2x%d, %llu positions\n", a.solutions[i], rs->name,
                rs->pits, n);
    }
    /* every request at once may hold a closure: they share half the RAM */
    double ram = util_phys_memory();
    if (ram > 0)
        ctx.memory = ram / 2 / (double)a.max_clients;

    /* A pool of max-clients threads works on requests (each blocks while it
     * searches); connections beyond 4 per thread are refused at accept, so
     * that a flood costs sockets, not memory. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)a.port, NULL, NULL, on_request, &ctx, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)a.max_clients, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(4 * a.max_clients), MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_END);
    if (!d) {
        serve_ctx_free(&ctx);
        fprintf(stderr, "sow serve: cannot listen on %s port %ld (in use, or not this "
                        "machine's address)\n", a.bind, a.port);
        return CLI_FAIL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : (unsigned)a.port;
    fprintf(stderr, "sow serve: listening on http://%s%s%s:%u/\n", v6 ? "[" : "", a.bind,
            v6 ? "]" : "", port);
    fflush(stderr);

    /* The signal handler only sets the flag: polled, as it signals no one. */
    while (!*stop) {
        struct timespec t = {0, 100 * 1000000L};
        nanosleep(&t, NULL);
    }
    /* in-flight requests see the flag (their searches stop), answer 503 */
    MHD_stop_daemon(d);
    serve_ctx_free(&ctx);
    fprintf(stderr, "sow serve: stopped\n");
    return cli_interrupted();
}

#else

int cmd_serve(int argc, char **argv)
{
    struct serve_args a;
    int r0 = serve_parse(argc, argv, &a);
    if (r0)
        return r0 == CLI_HELP ? CLI_OK : r0;
    return cli_bad("serve", "this sow was built without the HTTP server (libmicrohttpd: "
                            "install libmicrohttpd-dev and rebuild, meson -Dserve=enabled)");
}

#endif
