/* sow engine: the alpha-beta engine behind a line protocol in the style of
 * the Universal Chess Interface (docs/engine.md "Protocol").  The main
 * thread reads commands; `go` starts one search thread, which prints `info`
 * lines and `bestmove`; `stop` ends it (the engine polls its stop flag every
 * 256 nodes).  `go ponder` searches with no clock until `ponderhit`, which
 * starts the go command's time limit on a timer thread (it sets the same
 * stop flag), or `stop`.  This file is the command loop; engine_proto.h
 * lists the files of the rest and describes letter mode. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "engine_proto.h"
#include "util.h"

static const char usage[] =
    "usage: sow engine [--letters]\n"
    "Speaks a UCI-style line protocol on stdin/stdout (docs/engine.md):\n"
    "  uci | isready | setoption name N value V | ucinewgame\n"
    "  position startpos | pos TOKEN | fen F  [moves M ...]\n"
    "  go [ponder] [depth D] [movetime MS] [wtime MS btime MS [winc MS binc MS] [movestogo N]]\n"
    "     [nodes N] [infinite] | ponderhit | stop | quit\n"
    "Options: Hash, Threads, Rules, Pits, Seeds, Tables, Solution, Weights, Ponder, Swindle.\n"
    "For oware, F is the twelve hole counts (South's A-F, North's a-f), the two stores and\n"
    "the side S/N joined by '-', and moves may be hole letters (A-F South, a-f North), also\n"
    "run together (moves CfB).  After such a position the answers are in letters, as the\n"
    "oware GUIs read them: pv CaAfA, score cp only, bestmove 0000 at the end.\n"
    "Tables DIR without Solution also probes DIR's solution file (sow solve --save,\n"
    "named RULES-2xPITS-LLL.sowsol) that holds the position set by 'position'.\n";

#define LINE_MAX_LEN 65536

/* One line of stdin, read as bytes, into line (cap bytes, NUL-terminated,
 * its end of line and a CR before it removed).  False at the end of input.
 * *why: NULL, or why the line is refused: too long (the rest of it is
 * skipped), or a control byte in it (a NUL would cut the line short where
 * fgets and strlen disagree, which once swallowed the next line). */
static bool read_line(char *line, size_t cap, const char **why, char *whybuf, size_t wlen)
{
    size_t len = 0;
    int c, ctl = -1;
    bool any = false;
    *why = NULL;
    while ((c = getc_unlocked(stdin)) != EOF && c != '\n') {
        any = true;
        if (len + 1 < cap)
            line[len] = (char)c;
        if (ctl < 0 && ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f))
            ctl = c;
        len++;
    }
    if (c == EOF && !any)
        return false;
    if (len > cap - 2) {
        snprintf(whybuf, wlen, "line longer than %zu characters ignored", cap - 2);
        *why = whybuf;
        line[0] = 0;
        return true;
    }
    line[len] = 0;
    while (len && line[len - 1] == '\r')
        line[--len] = 0;
    for (size_t i = 0; ctl < 0 && i < len; i++) /* a CR inside the line */
        if (line[i] == '\r')
            ctl = '\r';
    if (ctl >= 0) {
        snprintf(whybuf, wlen, "unknown command: the line holds the control byte 0x%02x", ctl);
        *why = whybuf;
    }
    return true;
}

int cmd_engine(int argc, char **argv)
{
    bool force_letters = false;
    const struct cli_option opts[] = {
        {"--letters", CLI_FLAG, &force_letters, 0, 0, NULL,
         "answer in letters after any position, and name a ponder move", 0, 0},
        {0}};
    const struct cli_spec spec = {"engine", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    /* The session's state: large (histories), so on the heap, zeroed. */
    struct proto *P = calloc(1, sizeof *P);
    char *line = malloc(LINE_MAX_LEN);
    if (!P || !line) {
        free(P);
        free(line);
        fprintf(stderr, "sow engine: out of memory\n");
        return cli_exit_code(SOW_E_NOMEM);
    }
    pthread_mutex_init(&P->out, NULL);
    pthread_mutex_init(&P->tmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&P->tcv, &ca);
    pthread_condattr_destroy(&ca);
    P->force_letters = force_letters;
    snprintf(P->rules, sizeof P->rules, "oware");
    P->pits = 6;
    P->seeds = 4;
    P->hash = 64;
    P->threads = 1;
    P->own_book = true;
    P->swindle = PROTO_SWINDLE;
    P->root_closure = ENGINE_ROOT_CLOSURE / 1000;
    proto_default_tables(P, true);
    /* book moves vary from one session to the next (equal moves) */
    P->book_rng = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(util_now() * 1e9);
    char err[320];
    if (proto_setup_rules(P, err, sizeof err) < 0) {
        free(line);
        free(P);
        return cli_bad("engine", "%s", err);
    }
    const char *why;
    char whybuf[100];
    while (read_line(line, LINE_MAX_LEN, &why, whybuf, sizeof whybuf)) {
        if (why) {
            ERR(P, "%s", why);
            continue;
        }
        char *cmd = line + strspn(line, " \t");
        if (!*cmd)
            continue;
        char *args = cmd + strcspn(cmd, " \t");
        if (*args)
            *args++ = 0;
        /* A finished search (depth reached) is joined before anything else. */
        if (P->searching && __atomic_load_n(&P->done, __ATOMIC_ACQUIRE))
            proto_join_search(P);
        if (!strcmp(cmd, "quit"))
            break;
        if (!strcmp(cmd, "stop")) {
            proto_stop(P);
            continue;
        }
        if (!strcmp(cmd, "ponderhit")) {
            proto_ponderhit(P);
            continue;
        }
        if (!strcmp(cmd, "isready")) {
            if (!P->searching)
                proto_ensure_engine(P);
            proto_say(P, "readyok");
            continue;
        }
        if (!strcmp(cmd, "uci")) {
            proto_uci(P);
            continue;
        }
        bool known = !strcmp(cmd, "setoption") || !strcmp(cmd, "ucinewgame") ||
                     !strcmp(cmd, "position") || !strcmp(cmd, "go");
        if (!known) {
            ERR(P, "unknown command '%s'", cmd);
            continue;
        }
        if (P->searching) {
            ERR(P, "%s: a search is running (send stop first)", cmd);
            continue;
        }
        if (!strcmp(cmd, "setoption"))
            proto_setoption(P, args);
        else if (!strcmp(cmd, "ucinewgame")) {
            P->pos = P->start;
            if (proto_ensure_engine(P) == 0) {
                engine_clear(P->e);
                engine_prepare(P->e, &P->pos);
            }
            P->nhist = 0;
        } else if (!strcmp(cmd, "position"))
            proto_position(P, args);
        else
            proto_go(P, args);
    }
    proto_stop(P);
    engine_free(P->e);
    tb_close(P->tb);
    search_solution_close(P->sol);
    book_free(&P->book);
    pthread_mutex_destroy(&P->out);
    pthread_mutex_destroy(&P->tmu);
    pthread_cond_destroy(&P->tcv);
    free(line);
    free(P);
    return CLI_OK;
}
