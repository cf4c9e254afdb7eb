/* sow bench tables: retrograde build speed, positions per second per level,
 * into a temporary directory that is removed afterwards. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sow/tables.h"
#include "sow/util.h"

struct bt {
    double total_s;
    uint64_t total_pos;
};

static void level_done(void *ctx, int level, uint64_t entries, double secs, bool built)
{
    struct bt *b = ctx;
    if (!built)
        return;
    b->total_s += secs;
    b->total_pos += entries;
    printf("  level %3d %12llu positions %8.3f s %8.2f Mpos/s\n", level,
           (unsigned long long)entries, secs, secs > 0 ? (double)entries / secs / 1e6 : 0.0);
    fflush(stdout);
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

int bench_tables(int argc, char **argv)
{
    const char *rules = "oware,awari";
    long pits = 6, seeds = 14, threads = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            printf("usage: sow bench tables [--rules R[,R...]|all] [--pits N] [--seeds N] "
                   "[--threads T]\n  builds levels 0..N (default oware,awari 2x6 up to 14) into "
                   "a temporary directory,\n  printing positions per second per level\n");
            return CLI_OK;
        }
        if ((r = cli_opt("bench tables", argc, argv, &i, "--rules", &rules)) ||
            (r = cli_opt_long("bench tables", argc, argv, &i, "--pits", 1, SOW_MAX_PITS, &pits)) ||
            (r = cli_opt_long("bench tables", argc, argv, &i, "--seeds", 0, TB_MAX_LEVEL, &seeds)) ||
            (r = cli_opt_long("bench tables", argc, argv, &i, "--threads", 1, 1024, &threads))) {
            if (r < 0)
                return CLI_BAD;
            continue;
        }
        return cli_unknown("bench tables", argv[i]);
    }
    char list[512];
    snprintf(list, sizeof list, "%s",
             strcmp(rules, "all") == 0 ? "oware,awari,jodu,jodu-ibadan,jodu-starve,odu,jerin,darra"
                                       : rules);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        struct ruleset rs;
        char err[512];
        if (rules_init(&rs, name, (int)pits, 0, err, sizeof err) < 0)
            return cli_bad("bench tables", "%s", err);
        char dir[] = "/tmp/sow-bench-tables-XXXXXX";
        if (!mkdtemp(dir)) {
            fprintf(stderr, "sow bench tables: cannot create a temporary directory\n");
            return CLI_FAIL;
        }
        struct bt b = {0, 0};
        struct tb_build_opts opt = {(int)threads, 0, NULL, NULL, level_done, &b};
        printf("%s 2x%ld levels 0..%ld, %s threads:\n", rs.name, pits, seeds,
               threads ? "" : "all");
        int r = tb_build(&rs, dir, (int)seeds, &opt, err, sizeof err);
        rm_dir(dir);
        if (r != 0) {
            fprintf(stderr, "sow bench tables: %s\n", err);
            return CLI_FAIL;
        }
        printf("%s total: %llu positions in %.2f s = %.2f Mpos/s\n", rs.name,
               (unsigned long long)b.total_pos, b.total_s,
               b.total_s > 0 ? (double)b.total_pos / b.total_s / 1e6 : 0.0);
    }
    return CLI_OK;
}
