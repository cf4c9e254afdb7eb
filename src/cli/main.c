/* sow — command-line entry: dispatch to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sow/version.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"show", cmd_show, "draw a position"},
    {"moves", cmd_moves, "list the legal moves and their results"},
    {"play", cmd_play, "apply moves and print the positions"},
    {"perft", cmd_perft, "count move sequences of a given length"},
    {"tables", cmd_tables, "endgame tables: build, info, stats, verify, probe"},
    {"solve", cmd_solve, "exact value, best move and principal variation"},
    {"variants", cmd_variants, "compare rule sets: solved-start atlas, play statistics"},
    {"bench", cmd_bench, "benchmarks (movegen, ...)"},
    {"engine", cmd_engine, "the alpha-beta engine behind a UCI-style protocol"},
    {"match", cmd_match, "play two engines against each other"},
    {"serve", cmd_serve, "HTTP server: JSON API of values and best moves"},
    {"annotate", cmd_annotate, "a game record (OGN) with every move's value"},
    {"book", cmd_book, "opening books: build, info, probe"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: sow COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    char names[256];
    rules_names_line(names, sizeof names, false);
    fprintf(f, "\nrule sets: %s\n", names);
    fprintf(f, "positions: A1,...,AN/B1,...,BN/SIDE[/SA-SB[/STATE]]\n"
               "'sow COMMAND --help' for each command's options; 'sow --version' for the\n"
               "version and the git commit sow was built from.\n"
               "exit status: 0 ok, 1 failure while working, 2 bad input, 130 interrupted\n"
               "(Ctrl-C), 143 stopped by SIGTERM.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_bad("", "a command is needed (see 'sow --help')");
    if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sow %s (git %s)\n", sow_version(), sow_commit());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    return cli_bad("", "unknown command '%s' (see 'sow --help')", argv[1]);
}
