/* sow book: opening books (docs/book.md): build, info, probe. */
#include <stdio.h>
#include <string.h>

#include "book/book.h"
#include "book/builtin.h"
#include "cli.h"
#include "sow/engine.h"

static const char usage_top[] =
    "usage: sow book build --out FILE [--rules R] [--plies P] [--depth D] [--margin M] ...\n"
    "       sow book info FILE\n"
    "       sow book probe [--book FILE] [--rules R] [POSITION]\n"
    "Opening books: the first moves of a game searched in advance (docs/book.md).\n"
    "'sow book SUBCOMMAND --help' for each one's options.\n";

static const char usage_build[] =
    "usage: sow book build --out FILE [--rules R] [--pits N] [--seeds S] [--plies P]\n"
    "                      [--depth D] [--margin M] [--threads T] [--hash MB]\n"
    "                      [--solution FILE]\n"
    "Build the opening book of a rule set: from the start, breadth first, every\n"
    "position to P plies gets every legal move's score (a search of the child to\n"
    "depth D - 1, or the exact value where the game ends or the solution file\n"
    "knows it); the moves scored within M centi-seeds of the best are followed to\n"
    "the next ply.  FILE is written after each ply; a stopped build (Ctrl-C) keeps\n"
    "the plies done and the same command resumes it.\n";

static const char notes_build[] =
    "With --threads 1 (the default) a build gives the same file on every run.\n"
    "Progress with an ETA goes to stderr.\n";

static int build(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    const char *out = NULL, *solution = NULL;
    long plies = 8, depth = 14, margin = 50, threads = 1, hash = 64;
    bool quiet = false;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--out", CLI_STR, &out, 0, 0, "FILE", "the book file to write (or resume)", 0, 0},
        {"--plies", CLI_LONG, &plies, 1, 64, "P", "plies from the start, default 8", 0, 0},
        {"--depth", CLI_LONG, &depth, 2, ENGINE_MAX_PLY - 1, "D",
         "search depth of each move's score, default 14", 0, 0},
        {"--margin", CLI_LONG, &margin, 0, 10000, "M",
         "follow moves within M centi-seeds of the best, default 50", 0, 0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T",
         "search threads, default 1", 0, 0},
        {"--hash", CLI_LONG, &hash, 1, 65536, "MB", "transposition table, default 64", 0, 0},
        {"--solution", CLI_STR, &solution, 0, 0, "FILE",
         "a solution file (sow solve --save): exact scores where it knows them", 0, 0},
        {"--quiet", CLI_FLAG, &quiet, 0, 0, NULL, "no progress on stderr", 0, 0},
        {0}};
    const struct cli_spec spec = {"book build", usage_build, opts, notes_build, 0, NULL};
    int r = cli_parse(&spec, argc, argv, NULL, NULL);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (!out)
        return cli_bad("book build", "--out FILE is needed");
    if (cli_hash_check("book build", "--hash", hash))
        return CLI_BAD;
    if ((r = cli_game_setup("book build", &g)))
        return r;
    struct book_build_opts o = {.plies = (int)plies,
                                .depth = (int)depth,
                                .margin = (int)margin,
                                .threads = (int)threads,
                                .hash_mb = (unsigned)hash,
                                .solution = solution,
                                .stop = cli_catch_signals(false),
                                .progress = !quiet};
    struct sow_error e;
    enum sow_status st = book_build(&g.rs, out, &o, &e);
    if (st == SOW_E_INTERRUPTED) {
        fprintf(stderr, "sow book build: interrupted; %s keeps the plies done, run the same "
                        "command to resume\n", out);
        return cli_interrupted();
    }
    if (st != SOW_OK) {
        cli_bad("book build", "%s", e.msg);
        return cli_exit_code(st);
    }
    return CLI_OK;
}

static int info(int argc, char **argv)
{
    const struct cli_option opts[] = {{0}};
    const struct cli_spec spec = {"book info",
                                  "usage: sow book info FILE\n"
                                  "Check a book file (checksums, order, ranges) and print its "
                                  "header and counts.\n",
                                  opts, NULL, 1, "book file"};
    const char *file = NULL;
    int npos = 0;
    int r = cli_parse(&spec, argc, argv, &file, &npos);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (!file)
        return cli_bad("book info", "a book file is needed");
    struct book b;
    struct sow_error e;
    enum sow_status st = book_open(file, NULL, &b, &e);
    if (st != SOW_OK) {
        cli_bad("book info", "%s", e.msg);
        return cli_exit_code(st);
    }
    uint64_t exact = 0;
    for (uint64_t i = 0; i < b.nmov; i++)
        exact += b.mov[i].flags & BOOK_EXACT;
    printf("%s: %s 2x%d, %d seeds; plies %d, depth %d, margin %d; %llu positions, %llu moves "
           "(%llu exact); checksums ok\n",
           file, b.par.rules, b.par.pits, b.par.seeds, b.par.plies, b.par.depth, b.par.margin,
           (unsigned long long)b.nent, (unsigned long long)b.nmov, (unsigned long long)exact);
    book_free(&b);
    return CLI_OK;
}

static int probe(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    const char *file = NULL;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--book", CLI_STR, &file, 0, 0, "FILE", "a book file, default sow's own", 0, 0},
        {0}};
    const struct cli_spec spec = {"book probe",
                                  "usage: sow book probe [--book FILE] [--rules R] [POSITION]\n"
                                  "Print the book's moves of POSITION (default the start), best "
                                  "first, with their scores\n(centi-seeds for the player to "
                                  "move; '=' exact).  Exit 1 if the book does not hold it.\n",
                                  opts, NULL, 1, "position"};
    int npos = 0;
    int r = cli_parse(&spec, argc, argv, &g.pos, &npos);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if ((r = cli_game_setup("book probe", &g)))
        return r;
    struct book b;
    struct sow_error e;
    enum sow_status st = file ? book_open(file, &g.rs, &b, &e) : book_load_builtin(&g.rs, &b, &e);
    if (st != SOW_OK) {
        cli_bad("book probe", "%s", e.msg);
        return cli_exit_code(st);
    }
    const struct book_entry *t = book_find(&b, &g.rs, &g.p);
    if (!t) {
        fprintf(stderr, "sow book probe: the position is not in the book\n");
        book_free(&b);
        return CLI_FAIL;
    }
    for (int i = 0; i < t->n; i++) {
        const struct book_move *m = &b.mov[t->first + i];
        char name[SOW_MOVE_MAXLEN];
        move_format(&g.rs, g.p.side, m->move, name, sizeof name);
        printf("%-6s %c%d\n", name, m->flags & BOOK_EXACT ? '=' : ' ', m->score);
    }
    book_free(&b);
    return CLI_OK;
}

int cmd_book(int argc, char **argv)
{
    if (argc < 2)
        return cli_bad("book", "a subcommand is needed: build, info or probe (see 'sow book --help')");
    if (cli_is_help(argv[1])) {
        fputs(usage_top, stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "build"))
        return build(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info"))
        return info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "probe"))
        return probe(argc - 1, argv + 1);
    return cli_bad("book", "unknown subcommand '%s' (build, info, probe)", argv[1]);
}
