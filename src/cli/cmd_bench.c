/* sow bench: the benchmarks, one part per concern. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: sow bench [PART [OPTIONS]]   (no PART: the search bench)\n"
    "       sow bench --rules R,...|all [...]   movegen and search per rule set side by side\n"
    "parts:\n"
    "  search [--file F] [--hash MB] [--threads T]\n"
    "      solver nodes/second over bench/positions.txt, 1 then T (2) threads.\n"
    "  movegen [--rules R|all] [--positions N] [--time S]\n"
    "      moves generated per second per rule set over a fixed position set;\n"
    "      then oware perft.  (Against the slow twins: build/bench/sow-bench-twin.)\n"
    "  tables [--rules R[,R..]|all] [--pits N] [--seeds N] [--threads T]\n"
    "      endgame-table build speed: positions per second per level.\n"
    "      --mpi [--ranks 1,2,4]: distributed builds under mpirun (docs/distributed.md).\n"
    "  probe [--rules R] [--seeds N] [--dir DIR] [--probes M] [--block-shift B,...]\n"
    "      endgame-table probes per second, raw and compressed (cold, warm cache),\n"
    "      and compressed size per level.\n"
    "  engine [--rules R|all] [--depth D] [--threads T] [--hash MB]\n"
    "      the alpha-beta engine at a fixed depth over fixed positions per rule set.\n";

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "search") == 0)
        return bench_search(argc < 2 ? 1 : argc - 1, argc < 2 ? argv : argv + 1);
    if (cli_is_help(argv[1])) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (strncmp(argv[1], "--rules", 7) == 0) /* sow bench --rules all: every rule set side by side */
        return bench_rules(argc, argv);
    if (strcmp(argv[1], "movegen") == 0)
        return bench_movegen("all", argc - 1, argv + 1);
    if (strcmp(argv[1], "tables") == 0)
        return bench_tables(argc - 1, argv + 1);
    if (strcmp(argv[1], "probe") == 0) /* bench_probe.c */
        return bench_probe(argc - 1, argv + 1);
    if (strcmp(argv[1], "engine") == 0) /* bench_engine.c */
        return bench_engine(argc - 1, argv + 1);
    return cli_bad("bench", "unknown part '%s' (see 'sow bench --help')", argv[1]);
}
