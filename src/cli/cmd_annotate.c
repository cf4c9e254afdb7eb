/* sow annotate: a game record (OGN, docs/ogn.md) written back with every
 * move's value, the best move where it differs and a mark where the move
 * changes the result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "ogn/ogn.h"
#include "sow/analyse.h"
#include "sow/tables_probe.h"
#include "sow/version.h"
#include "tables_path.h"
#include "util.h"

static const char usage[] =
    "usage: sow annotate GAME.ogn [--tables DIR] [--time S] [--threads T] [-o OUT [--resume]]\n"
    "Read a game record (OGN, the format of the Aualé program: docs/ogn.md), replay\n"
    "and check every move, and write the record back with a comment after each\n"
    "move: its value for the player who made it (net seeds he captures from that\n"
    "move on under perfect play), the best move and its value where another move\n"
    "is worth more, and whether the values are exact or the engine's estimate.  A\n"
    "move after which the result (win, draw or loss for its mover) is worse than\n"
    "after the best move is marked '?' (exact values) or '?!' (estimates).\n";

static const char notes[] =
    "Each position is given about S seconds (default 1): the exact solver with the\n"
    "endgame tables of --tables DIR for half of it, else the alpha-beta engine for\n"
    "the other half, as sow serve answers.  Comments of an earlier sow annotate\n"
    "(they begin with 'sow:') are replaced.  The record goes to stdout, or to OUT\n"
    "(written whole, then renamed into place).  A malformed record is refused with\n"
    "one line naming the problem and where: FILE:LINE:COLUMN (exit 2).  Ctrl-C with\n"
    "-o OUT writes the record with the moves annotated so far to OUT; --resume then\n"
    "keeps OUT's comments (it must hold the same game) and annotates only the moves\n"
    "that have none.\n";

struct annotate_args {
    const char *file, *tables, *out;
    double seconds;
    long threads;
    bool resume;
};

/* The whole file (at most OGN_MAX_TEXT + 1 bytes, so that a longer one is
 * seen to be), malloc'd into *text.  0 or an exit status after a message. */
static int read_record(const char *path, char **text, size_t *len)
{
    int fd;
    struct sow_error e;
    if (fio_open_input(path, &fd, &e) != SOW_OK) {
        cli_bad("annotate", "%s", e.msg);
        return cli_exit_code(e.status);
    }
    size_t cap = OGN_MAX_TEXT + 2, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        cli_bad("annotate", "out of memory");
        return CLI_FAIL;
    }
    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            close(fd);
            free(buf);
            cli_bad("annotate", "%s: read error: %s", path, strerror(err));
            return CLI_FAIL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

/* The record at path read and replayed into *g (a refusal's message begins
 * with what, then FILE:LINE:COLUMN).  0 or an exit status after a message. */
static int load_record(const char *path, const char *what, struct ogn_game **g)
{
    char *text = NULL;
    size_t len = 0;
    int r = read_record(path, &text, &len);
    if (r)
        return r;
    struct sow_error e;
    enum sow_status st = ogn_parse(text, len, g, &e);
    free(text);
    if (st != SOW_OK) {
        cli_bad("annotate", "%s%s:%s", what, path, e.msg);
        return cli_exit_code(st);
    }
    return 0;
}

/* "+2", "-4", "0" */
static void signed_value(char *buf, size_t len, int v)
{
    snprintf(buf, len, v > 0 ? "+%d" : "%d", v);
}

static int outcome(int v)
{
    return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/* The comment and mark of move i from the analysis of the position before it. */
static enum sow_status annotate_move(struct ogn_game *g, int i, const struct analysis *a)
{
    const struct ogn_ply *y = &g->ply[i];
    const sow_position *p = ogn_before(g, i);
    int k = rules_find_move(&a->ml, y->move);
    if (k < 0) /* cannot be: the record was replayed with the same rules */
        return SOW_E_INPUT;
    int played = a->vals[k], b = a->order[0], best = a->vals[b];
    char note[160], v[16], bv[16], how[32];
    signed_value(v, sizeof v, played);
    if (a->exact)
        snprintf(how, sizeof how, "exact");
    else
        snprintf(how, sizeof how, "engine d%d", a->depth);
    if (best > played) {
        char name[SOW_MOVE_MAXLEN];
        ogn_name(&g->rs, p->side, a->ml.c[b].move, name, sizeof name);
        signed_value(bv, sizeof bv, best);
        snprintf(note, sizeof note, "sow: %s, best %s %s %s", v, name, bv, how);
    } else {
        snprintf(note, sizeof note, "sow: %s %s", v, how);
    }
    ogn_drop_notes(g, i + 1, "sow:");
    enum sow_status st = ogn_add_note(g, i + 1, note);
    /* the result for the mover: the seeds he has over the opponent, plus
     * what he nets from here on */
    int diff = p->store[p->side] - p->store[!p->side];
    if (outcome(diff + played) < outcome(diff + best))
        snprintf(g->ply[i].mark, sizeof g->ply[i].mark, "%s", a->exact ? "?" : "?!");
    return st;
}

/* --resume: the comments (and marks) of sow annotate in OUT, an earlier
 * run's record of the same game, copied into g; done[i] set for each move
 * they annotate.  0 or an exit status after a message. */
static int resume_from(const char *path, struct ogn_game *g, bool *done, int *ndone)
{
    struct ogn_game *o = NULL;
    int r = load_record(path, "--resume ", &o);
    if (r)
        return r;
    enum sow_status st = SOW_OK;
    /* the same game: rule set, board, start and every move */
    char why[80] = "";
    if (strcmp(o->rs.name, g->rs.name) || o->rs.pits != g->rs.pits ||
        memcmp(&o->start, &g->start, sizeof o->start))
        snprintf(why, sizeof why, "another rule set, board or start");
    else if (o->nply != g->nply)
        snprintf(why, sizeof why, "another game (%d moves, not %d)", o->nply, g->nply);
    for (int i = 0; !why[0] && i < g->nply; i++)
        if (o->ply[i].move != g->ply[i].move)
            snprintf(why, sizeof why, "another game (move %d differs)", i + 1);
    if (why[0]) {
        ogn_free(o);
        return cli_bad("annotate", "--resume %s: %s", path, why);
    }
    *ndone = 0;
    for (int k = 0; k < o->nnotes && st == SOW_OK; k++) {
        const struct ogn_note *n = &o->notes[k];
        if (n->ply < 1 || strncmp(n->text, "sow:", 4))
            continue;
        int i = n->ply - 1;
        if (!done[i]) {
            ogn_drop_notes(g, n->ply, "sow:");
            memcpy(g->ply[i].mark, o->ply[i].mark, sizeof g->ply[i].mark);
            done[i] = true;
            ++*ndone;
        }
        st = ogn_add_note(g, n->ply, n->text);
    }
    ogn_free(o);
    if (st != SOW_OK)
        return cli_bad("annotate", "out of memory");
    return 0;
}

int cmd_annotate(int argc, char **argv)
{
    struct annotate_args a = {.seconds = 1.0, .threads = 1};
    const struct cli_option opts[] = {
        {"--tables", CLI_STR, &a.tables, 0, 0, "DIR", "endgame tables for exact values", 0, 0},
        {"--time", CLI_DOUBLE, &a.seconds, 0, 1e6, "S", "seconds per position, default 1",
         true, 0},
        {"--threads", CLI_LONG, &a.threads, 1, (double)cli_max_threads(), "T",
         "search threads, default 1", 0, 0},
        {"-o", CLI_STR, &a.out, 0, 0, "OUT", "write the record to OUT, not stdout", 0, 0},
        {"--resume", CLI_FLAG, &a.resume, 0, 0, NULL,
         "keep the comments of OUT, annotate the other moves", 0, 0},
        {0}};
    const struct cli_spec spec = {"annotate", usage, opts, notes, 1, "game record"};
    int r = cli_parse(&spec, argc, argv, &a.file, NULL);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (!a.file)
        return cli_bad("annotate", "a game record is needed (see 'sow annotate --help')");
    if (a.resume && !a.out)
        return cli_bad("annotate", "--resume goes on from the record of -o OUT: give -o");
    char why[4200];
    if (a.tables && tpath_check(a.tables, why, sizeof why))
        return cli_bad("annotate", "--tables: %s", why);

    struct ogn_game *g = NULL;
    if ((r = load_record(a.file, "", &g)))
        return r;
    struct sow_error e;
    enum sow_status st;
    bool *done = calloc((size_t)g->nply + 1, sizeof *done);
    int ndone = 0;
    if (!done) {
        ogn_free(g);
        return cli_bad("annotate", "out of memory");
    }
    if (a.resume && (r = resume_from(a.out, g, done, &ndone))) {
        free(done);
        ogn_free(g);
        return r;
    }
    struct tb_set *tb = NULL;
    if (a.tables && tb_open(&g->rs, a.tables, &tb, &e) != SOW_OK) {
        free(done);
        ogn_free(g);
        cli_bad("annotate", "--tables %s: %s", a.tables, e.msg);
        return cli_exit_code(e.status);
    }
    /* the output's temporary file before the work: a target that cannot be
     * written is refused at once */
    struct fio_out out = {.fd = -1};
    FILE *of = stdout;
    if (a.out) {
        if (fio_out_begin(&out, a.out, NULL, &e) != SOW_OK) {
            free(done);
            tb_close(tb);
            ogn_free(g);
            cli_bad("annotate", "%s", e.msg);
            return cli_exit_code(e.status);
        }
        if (!(of = fio_out_stream(&out))) {
            fio_out_abort(&out);
            free(done);
            tb_close(tb);
            ogn_free(g);
            cli_bad("annotate", "%s: out of memory", a.out);
            return CLI_FAIL;
        }
    }
    volatile sig_atomic_t *stop = cli_catch_signals(!a.out);
    struct analyse_opts ao = {
        .threads = (int)a.threads,
        .seconds = a.seconds,
        .tb = tb,
        .stop = stop,
    };
    struct analysis *an = malloc(sizeof *an);
    int rc = CLI_OK;
    if (!an) {
        cli_bad("annotate", "out of memory");
        rc = CLI_FAIL;
    }
    if (ndone)
        fprintf(stderr, "sow annotate: %d of %d moves annotated in %s already\n", ndone, g->nply,
                a.out);
    double t0 = util_now();
    int todo = g->nply - ndone, analysed = 0;
    bool interrupted = false;
    for (int i = 0; rc == CLI_OK && !interrupted && i < g->nply; i++) {
        if (done[i])
            continue;
        st = analyse_position(&g->rs, ogn_before(g, i), &ao, an, &e);
        if (st == SOW_OK && *stop)
            st = SOW_E_INTERRUPTED;
        if (st == SOW_OK)
            st = annotate_move(g, i, an);
        if (st == SOW_E_INTERRUPTED) {
            interrupted = true;
        } else if (st != SOW_OK) {
            cli_bad("annotate", "move %d: %s", i + 1,
                    st == SOW_E_NOMEM ? "out of memory" : e.msg);
            rc = cli_exit_code(st);
        } else {
            done[i] = true;
            ndone++;
            double spent = util_now() - t0;
            if (++analysed < todo && spent >= 2.0)
                fprintf(stderr, "sow annotate: move %d of %d (%.1f s, ETA %.0f s)\n", i + 1,
                        g->nply, spent, spent / analysed * (todo - analysed));
        }
    }
    free(an);
    free(done);
    tb_close(tb);
    /* Interrupted: with -o OUT, the record with the moves annotated so far
     * goes to OUT (whole) for --resume; on stdout nothing. */
    if (interrupted && (!a.out || !ndone)) {
        fprintf(stderr, "sow annotate: interrupted%s\n", a.out ? " (no move annotated)" : "");
        rc = cli_interrupted();
    }
    char ver[64];
    snprintf(ver, sizeof ver, "sow %s", sow_version());
    char *s = NULL;
    size_t n = 0;
    if (rc == CLI_OK && (ogn_set_tag(g, "Annotator", ver) != SOW_OK || !(s = ogn_format(g, &n)))) {
        cli_bad("annotate", "out of memory");
        rc = CLI_FAIL;
    }
    int nply = g->nply;
    ogn_free(g);
    if (rc == CLI_OK) {
        e.msg[0] = 0;
        if (a.out) {
            if (fwrite(s, 1, n, of) != n || fio_out_commit(&out, &e) != SOW_OK) {
                fio_out_abort(&out);
                cli_bad("annotate", "%s", e.msg[0] ? e.msg : "write error");
                rc = CLI_FAIL;
            } else if (interrupted) {
                fprintf(stderr,
                        "sow annotate: interrupted: %d of %d moves annotated in %s (the same "
                        "command with --resume goes on)\n",
                        ndone, nply, a.out);
                rc = cli_interrupted();
            }
        } else if (fwrite(s, 1, n, stdout) != n || fflush(stdout) != 0) {
            cli_bad("annotate", "write error on stdout");
            rc = CLI_FAIL;
        }
    } else if (a.out) {
        fio_out_abort(&out);
    }
    free(s);
    return rc;
}
