/* sow variants: compare rule sets — the solved-start atlas and play statistics. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "sow/search.h"
#include "tables/tables.h"
#include "util.h"
#include "variants/variants.h"

static const char usage[] =
    "usage: sow variants atlas [--rules R,...|all] [--pits LIST] [--seeds LIST] [--budget S]\n"
    "                          [--csv FILE] [--threads T] [--hash MB] [--tables DIR]\n"
    "                          [--no-tables] [--tb-entries N] [--min-total N] [--max-total N]\n"
    "                          [--verbose] [--resume]\n"
    "       sow variants play  [--rules R,...|all] [--pits N] [--seeds S] [--games N]\n"
    "                          [--seed X] [--engine-depth D] [--random-plies K]\n"
    "                          [--threads T] [--csv FILE] [--lengths FILE]\n"
    "\n"
    "atlas: for every rule set, holes per side and starting seeds per hole, the exact\n"
    "  value of the start for the first player, every first move achieving it, the\n"
    "  length of the principal variation, nodes and time.  LIST: 3, 1-4, 1..4 or\n"
    "  1,3,5-6.  Defaults: all rule sets, --pits 1-3, --seeds 1-4, --budget 10 s per\n"
    "  instance, 1 thread, 64 MiB hash.  An instance not solved in the budget gets a\n"
    "  bounded search (a quarter of the budget more) and is listed `open` with the\n"
    "  bounds it proved.  Endgame tables: levels of at most --tb-entries positions\n"
    "  (default 2000000) are built when missing into --tables DIR (default $SOW_TABLES\n"
    "  or ./tables) and probed by the solver; --no-tables solves without them.  A\n"
    "  start whose solution file RULES-2xPITS-LLL.sowsol is in DIR is answered from it\n"
    "  (docs/solutions.md).\n"
    "  --min-total/--max-total N skip instances with fewer/more than N seeds on the\n"
    "  board (2 x pits x seeds).  --verbose: the solver's MTD(f) steps on stderr.\n"
    "  CSV header: rules,pits,seeds,value,best,pv_length,nodes,time_ms,status\n"
    "  (best moves joined by spaces; open rows: value LO..HI, best and pv_length '-').\n"
    "  Ctrl-C with --csv FILE keeps the rows finished in FILE; --resume reads them\n"
    "  back and solves only the instances FILE lacks (the same command otherwise).\n"
    "\n"
    "play: N games per rule set (default 1000) between random players and, with\n"
    "  --engine-depth D > 0 (default 2), between two alpha-beta engines searching D\n"
    "  plies for the most net captured seeds, first best move in generation order\n"
    "  (after K random opening plies, default 2, so the games differ).  First-player\n"
    "  wins/draws/losses, game length (plies), branching, relay laps per move,\n"
    "  never-ending moves per 1000 positions, seeds captured per move, and how games\n"
    "  ended.  A game ends when the mover has no move, when a position repeats, or\n"
    "  after " "2000" " plies (the cap, settled like a repetition).  Same --seed (default\n"
    "  1) gives the same numbers with any --threads.  --csv: one row per rule set and\n"
    "  player; --lengths: one row per game (rules,players,game,length,result,end).\n";

_Static_assert(VAR_MOVE_CAP == 2000, "usage text states the move cap");

/* "3", "1-4", "1..4", "1,3,5-6" → sorted distinct values in [lo, hi]. */
static int parse_list(const char *cmd, const char *name, const char *spec, int lo, int hi,
                      int *out, int *count)
{
    bool seen[256] = {false};
    char buf[128];
    if (strlen(spec) >= sizeof buf || !*spec)
        return cli_bad(cmd, "%s '%s': expected a number, a range A-B or a list", name, spec);
    strcpy(buf, spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        long a, b;
        char *dash = strstr(tok, "..");
        int skip = 2;
        if (!dash) {
            dash = strchr(tok, '-');
            skip = 1;
        }
        if (dash) {
            *dash = 0;
            if (util_parse_long(tok, lo, hi, &a) < 0 ||
                util_parse_long(dash + skip, lo, hi, &b) < 0 || b < a)
                return cli_bad(cmd, "%s '%s': ranges are A-B with %d <= A <= B <= %d", name,
                               spec, lo, hi);
        } else {
            if (util_parse_long(tok, lo, hi, &a) < 0)
                return cli_bad(cmd, "%s '%s': expected whole numbers in %d..%d", name, spec, lo,
                               hi);
            b = a;
        }
        for (long v = a; v <= b; v++)
            seen[v] = true;
    }
    *count = 0;
    for (int v = lo; v <= hi; v++)
        if (seen[v])
            out[(*count)++] = v;
    return 0;
}

/* "all" or "oware,awari" → canonical names (validated). */
static int parse_rules(const char *cmd, const char *spec, const char **out, int *count)
{
    *count = 0;
    if (strcmp(spec, "all") == 0) {
        for (int i = 0; sow_rule_names[i]; i++)
            out[(*count)++] = sow_rule_names[i];
        return 0;
    }
    char buf[256];
    if (strlen(spec) >= sizeof buf || !*spec)
        return cli_bad(cmd, "--rules '%s': expected names separated by commas, or all", spec);
    strcpy(buf, spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        struct ruleset rs;
        struct sow_error e;
        enum sow_status st = rules_init(&rs, tok, 1, 1, &e);
        if (st != SOW_OK) {
            cli_bad(cmd, "%s", e.msg);
            return cli_exit_code(st);
        }
        bool dup = false;
        for (int i = 0; i < *count; i++)
            dup |= strcmp(out[i], rs.name) == 0;
        if (!dup) {
            if (*count >= SOW_FAMILY_COUNT)
                return cli_bad(cmd, "--rules '%s': too many names", spec);
            out[(*count)++] = rs.name; /* canonical names are static strings */
        }
    }
    return 0;
}

/* Output files follow fileio.h: a regular file or a new one, written
 * to a temporary name and renamed when complete; anything else refused. */
struct outfile {
    FILE *f; /* NULL: no file asked for */
    struct fio_out o;
};

static int out_open(const char *cmd, struct outfile *o, const char *path)
{
    struct sow_error e;
    memset(o, 0, sizeof *o);
    o->o.fd = -1;
    if (!path)
        return 0;
    if (fio_out_begin(&o->o, path, NULL, &e)) {
        cli_bad(cmd, "%s", e.msg);
        return cli_exit_code(e.status);
    }
    if (!(o->f = fio_out_stream(&o->o))) {
        fio_out_abort(&o->o);
        cli_bad(cmd, "%s: out of memory", path);
        return CLI_FAIL;
    }
    return 0;
}

/* Commit (ok) or discard the file.  Returns 0 or the exit status. */
static int out_close(const char *cmd, struct outfile *o, bool ok)
{
    if (!o->f)
        return 0;
    o->f = NULL;
    if (!ok) {
        fio_out_abort(&o->o);
        return 0;
    }
    struct sow_error e;
    if (fio_out_commit(&o->o, &e)) {
        cli_bad(cmd, "%s", e.msg);
        return cli_exit_code(e.status);
    }
    return 0;
}

/* ---- atlas ---- */

static void atlas_note(void *arg, const char *line)
{
    bool verbose = *(bool *)arg;
    if (verbose || line[0] != ' ')
        fprintf(stderr, "  %s\n", line);
}

/* A row of an earlier run's CSV (--resume), as read. */
struct atlas_saved {
    const char *rules; /* the canonical name, static */
    int pits, seeds;
    char value[24], best[160], pv[12];
    unsigned long long nodes, ms;
    bool exact, used;
};

/* One atlas run: its options, the instances they name, the CSV file and
 * the counts of the summary line, shared by the steps below. */
struct atlas_run {
    const char *cmd;
    const char *rules_spec, *pits_spec, *seeds_spec, *csv, *tables;
    long threads, hash, tb_entries, max_total, min_total;
    double budget;
    bool verbose, no_tables, resume;
    struct atlas_saved *saved; /* --resume: the rows read back */
    int nsaved;
    const char *rules[SOW_FAMILY_COUNT];
    int nrules, pits[SOW_MAX_PITS], npits, seeds[256], nseeds;
    struct outfile out;
    FILE *tab; /* the table, printed whole once the CSV is in place */
    char *tbuf;
    size_t tlen;
    volatile sig_atomic_t *stop;
    int total, k, nexact, nopen, nskip, ndone; /* ndone: rows written */
    enum sow_status failed; /* the first failure */
};

/* The options and the lists they give: 0, CLI_HELP or the exit status. */
static int atlas_parse(struct atlas_run *A, int argc, char **argv)
{
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &A->rules_spec, 0, 0, "R,...", "rule sets, or all (default)", 0,
         0},
        {"--pits", CLI_STR, &A->pits_spec, 0, 0, "LIST", "holes per side, default 1-3", 0, 0},
        {"--seeds", CLI_STR, &A->seeds_spec, 0, 0, "LIST", "seeds per hole, default 1-4", 0, 0},
        {"--budget", CLI_DOUBLE, &A->budget, 0, 1e7, "S", "seconds per instance (0: no limit)",
         0, 0},
        {"--csv", CLI_STR, &A->csv, 0, 0, "FILE", "also write the rows as CSV", 0, 0},
        {"--threads", CLI_LONG, &A->threads, 1, (double)cli_max_threads(), "T",
         "threads, default 1", 0, 0},
        {"--hash", CLI_LONG, &A->hash, 1, 1 << 20, "MB", "transposition table, MiB", 0, 0},
        {"--tables", CLI_STR, &A->tables, 0, 0, "DIR", "endgame tables (built when missing)", 0,
         0},
        {"--no-tables", CLI_FLAG, &A->no_tables, 0, 0, NULL, "solve without endgame tables", 0,
         0},
        {"--tb-entries", CLI_LONG, &A->tb_entries, 0, 4000000000.0, "N",
         "largest level built, positions", 0, 0},
        {"--min-total", CLI_LONG, &A->min_total, 0, 255, "N", "skip fewer seeds on the board", 0,
         0},
        {"--max-total", CLI_LONG, &A->max_total, 0, 255, "N", "skip more seeds on the board", 0,
         0},
        {"--verbose", CLI_FLAG, &A->verbose, 0, 0, NULL, "the solver's steps on stderr", 0, 0},
        {"--resume", CLI_FLAG, &A->resume, 0, 0, NULL,
         "keep the rows of --csv FILE, solve the rest", 0, 0},
        {0}};
    const struct cli_spec spec = {A->cmd, usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr;
    if (cli_hash_check(A->cmd, "--hash", A->hash))
        return CLI_BAD;
    if (A->resume && !A->csv)
        return cli_bad(A->cmd, "--resume goes on from the rows of a --csv FILE: give --csv");
    if (A->no_tables)
        A->tables = NULL;
    /* a DIR named but not a directory (a FIFO, a device, a file): bad input,
     * not a build that fails and is skipped */
    struct stat sb;
    if (A->tables && stat(A->tables, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return cli_bad(A->cmd, "--tables %s: not a directory", A->tables);
    if (parse_rules(A->cmd, A->rules_spec, A->rules, &A->nrules) ||
        parse_list(A->cmd, "--pits", A->pits_spec, 1, SOW_MAX_PITS, A->pits, &A->npits) ||
        parse_list(A->cmd, "--seeds", A->seeds_spec, 1, SOW_MAX_SEEDS, A->seeds, &A->nseeds))
        return CLI_BAD;
    return 0;
}

static const char atlas_header[] = "rules,pits,seeds,value,best,pv_length,nodes,time_ms,status";

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* A whole number of digits alone, at most max. */
static bool atlas_num(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!*s || strlen(s) > 19)
        return false;
    unsigned long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (unsigned)(*s - '0');
    }
    *out = v;
    return v <= max;
}

/* One CSV row into r (why: what is wrong with it). */
static bool atlas_parse_row(const struct atlas_run *A, char *line, struct atlas_saved *r,
                            const char **why)
{
    char *f[10];
    int n = 0;
    for (char *p = line;; p++) {
        f[n++] = p;
        p += strcspn(p, ",");
        if (!*p || n == 10)
            break;
        *p = 0;
    }
    *why = "expected the 9 fields of the header";
    if (n != 9)
        return false;
    unsigned long long pits, seeds, pv, x;
    r->rules = NULL;
    for (int i = 0; i < A->nrules; i++)
        if (!strcmp(f[0], A->rules[i]))
            r->rules = A->rules[i];
    *why = "a number of holes, seeds, nodes or milliseconds that is not one";
    if (!atlas_num(f[1], SOW_MAX_PITS, &pits) || !atlas_num(f[2], SOW_MAX_SEEDS, &seeds) ||
        !atlas_num(f[6], ~0ULL, &r->nodes) || !atlas_num(f[7], ~0ULL, &r->ms))
        return false;
    r->pits = (int)pits;
    r->seeds = (int)seeds;
    long n_on = 2L * r->pits * r->seeds;
    *why = "not an instance of this run (another --rules, --pits, --seeds or total)";
    if (!r->rules || !in_list(A->pits, A->npits, r->pits) ||
        !in_list(A->seeds, A->nseeds, r->seeds) || n_on > A->max_total || n_on < A->min_total)
        return false;
    r->exact = !strcmp(f[8], "exact");
    int lo, hi, end = 0;
    const char *v = f[3] + (f[3][0] == '-');
    *why = "a value, best or pv_length that does not fit its status";
    if (r->exact) {
        if (!atlas_num(v, 255, &x) || !atlas_num(f[5], 100000, &pv) || !f[4][0] ||
            !strcmp(f[4], "-") || strlen(f[4]) >= sizeof r->best)
            return false;
        snprintf(r->value, sizeof r->value, "%+d", f[3][0] == '-' ? -(int)x : (int)x);
    } else {
        if (strcmp(f[8], "open") || sscanf(f[3], "%d..%d%n", &lo, &hi, &end) != 2 ||
            f[3][end] || lo > hi || strcmp(f[4], "-") || strcmp(f[5], "-"))
            return false;
        snprintf(r->value, sizeof r->value, "%d..%d", lo, hi);
    }
    snprintf(r->best, sizeof r->best, "%s", f[4]);
    snprintf(r->pv, sizeof r->pv, "%s", f[5]);
    r->used = false;
    return true;
}

/* --resume: the rows of the CSV an earlier run of this command left
 * (interrupted, or complete).  0 or the exit status. */
static int atlas_resume_read(struct atlas_run *A)
{
    int fd;
    struct sow_error e;
    if (fio_open_input(A->csv, &fd, &e) != SOW_OK)
        return cli_bad(A->cmd, "--resume: %s", e.msg);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return cli_bad(A->cmd, "--resume %s: %s", A->csv, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int ln = 0, rc = 0;
    A->saved = calloc((size_t)A->total + 1, sizeof *A->saved);
    while (!rc && getline(&line, &cap, f) > 0) {
        ln++;
        line[strcspn(line, "\r\n")] = 0;
        const char *why = NULL;
        if (!A->saved)
            rc = cli_bad(A->cmd, "--resume %s: out of memory", A->csv);
        else if (ln == 1 && strcmp(line, atlas_header))
            rc = cli_bad(A->cmd, "--resume %s: line 1: not the header of an atlas CSV", A->csv);
        else if (ln == 1)
            continue;
        else if (A->nsaved == A->total)
            rc = cli_bad(A->cmd, "--resume %s: line %d: more rows than this run's %d instances",
                         A->csv, ln, A->total);
        else if (!atlas_parse_row(A, line, &A->saved[A->nsaved], &why))
            rc = cli_bad(A->cmd, "--resume %s: line %d: %s", A->csv, ln, why);
        else {
            struct atlas_saved *r = &A->saved[A->nsaved];
            for (int i = 0; i < A->nsaved && !rc; i++)
                if (A->saved[i].rules == r->rules && A->saved[i].pits == r->pits &&
                    A->saved[i].seeds == r->seeds)
                    rc = cli_bad(A->cmd, "--resume %s: line %d: %s 2x%d/%d a second time",
                                 A->csv, ln, r->rules, r->pits, r->seeds);
            A->nsaved++;
        }
    }
    if (!rc && ln == 0)
        rc = cli_bad(A->cmd, "--resume %s: empty, not an atlas CSV", A->csv);
    free(line);
    fclose(f);
    return rc;
}

/* A row of the earlier run for this instance (--resume), or NULL. */
static struct atlas_saved *atlas_saved_row(struct atlas_run *A, const char *rules, int pits,
                                           int seeds)
{
    for (int i = 0; i < A->nsaved; i++)
        if (!strcmp(A->saved[i].rules, rules) && A->saved[i].pits == pits &&
            A->saved[i].seeds == seeds)
            return &A->saved[i];
    return NULL;
}

/* A row read back, into the CSV as it was. */
static void atlas_csv_saved(FILE *f, const struct atlas_saved *r)
{
    fprintf(f, "%s,%d,%d,%s,%s,%s,%llu,%llu,%s\n", r->rules, r->pits, r->seeds,
            r->value + (r->value[0] == '+'), r->best, r->pv, r->nodes, r->ms,
            r->exact ? "exact" : "open");
}

/* A row read back, on stdout and in the CSV (its pv column without the
 * table's r and + marks, which the CSV does not keep). */
static void atlas_row_saved(struct atlas_run *A, const struct atlas_saved *r, int n)
{
    fprintf(A->tab, "%-12s %4d %5d %5d %9s %-18s %5s %14llu %10llu  %s\n", r->rules, r->pits,
            r->seeds, n, r->value, r->best, r->pv, r->nodes, r->ms, r->exact ? "exact" : "open");
    if (A->out.f)
        atlas_csv_saved(A->out.f, r);
    *(r->exact ? &A->nexact : &A->nopen) += 1;
}

/* A solved instance's row on stdout and in the CSV file. */
static void atlas_row(struct atlas_run *A, const struct ruleset *rs, int pits, int seeds, int n,
                      const struct var_atlas_result *r)
{
    char val[32], pv[16];
    if (r->exact) {
        snprintf(val, sizeof val, "%+d", r->value);
        if (r->over)
            snprintf(pv, sizeof pv, "0");
        else
            snprintf(pv, sizeof pv, "%d%s", r->pv_len,
                     r->pv_repeats                  ? "r"
                     : r->pv_len >= SEARCH_MAX_PV ? "+"
                                                   : "");
        A->nexact++;
    } else {
        snprintf(val, sizeof val, "%d..%d", r->lower, r->upper);
        snprintf(pv, sizeof pv, "-");
        A->nopen++;
    }
    long long ms = (long long)(r->seconds * 1000 + 0.5);
    char csvpv[16];
    snprintf(csvpv, sizeof csvpv, "%d", r->over ? 0 : r->pv_len);
    if (!r->exact)
        strcpy(csvpv, "-");
    fprintf(A->tab, "%-12s %4d %5d %5d %9s %-18s %5s %14llu %10lld  %s\n", rs->name, pits, seeds,
            n, val, r->best_str, pv, (unsigned long long)r->nodes, ms,
            r->exact ? "exact" : "open");
    if (A->out.f)
        fprintf(A->out.f, "%s,%d,%d,%s,%s,%s,%llu,%lld,%s\n", rs->name, pits, seeds,
                r->exact ? val + (val[0] == '+') : val, r->exact ? r->best_str : "-", csvpv,
                (unsigned long long)r->nodes, ms, r->exact ? "exact" : "open");
}

/* One instance: skipped, solved (its row), or the run's end (interrupted,
 * or A->failed set).  False stops the loop over the instances. */
static bool atlas_instance(struct atlas_run *A, const char *rules, int pits, int seeds)
{
    struct ruleset rs;
    struct sow_error e;
    A->k++;
    int n = 2 * pits * seeds;
    if (n > A->max_total || n < A->min_total ||
        rules_init(&rs, rules, pits, seeds, &e) != SOW_OK) {
        A->nskip++;
        fprintf(stderr, "[%d/%d] %s 2x%d, %d seeds: skipped (%s)\n", A->k, A->total, rules, pits,
                seeds,
                n > A->max_total   ? "more than --max-total seeds"
                : n < A->min_total ? "fewer than --min-total seeds"
                                   : e.msg);
        return true;
    }
    struct atlas_saved *sv = atlas_saved_row(A, rs.name, pits, seeds);
    if (sv) {
        fprintf(stderr, "[%d/%d] %s 2x%d, %d seeds per hole: from %s\n", A->k, A->total, rs.name,
                pits, seeds, A->csv);
        sv->used = true;
        atlas_row_saved(A, sv, n);
        A->ndone++;
        return true;
    }
    fprintf(stderr, "[%d/%d] %s 2x%d, %d seeds per hole (%d on the board)...\n", A->k, A->total,
            rs.name, pits, seeds, n);
    struct var_atlas_opts ao = {0};
    ao.threads = (int)A->threads;
    ao.hash_mb = (unsigned)A->hash;
    ao.budget = A->budget;
    ao.tables_dir = A->tables;
    ao.tb_build_entries = (uint64_t)A->tb_entries;
    ao.stop = (volatile int *)A->stop;
    ao.progress = atlas_note;
    ao.progress_arg = &A->verbose;
    struct var_atlas_result r;
    enum sow_status st = var_atlas_solve(&rs, &ao, &r, &e);
    if (st != SOW_OK) {
        if (!r.interrupted) {
            fprintf(stderr, "sow %s: %s 2x%d/%d: %s\n", A->cmd, rs.name, pits, seeds, e.msg);
            A->failed = st;
        }
        return false;
    }
    atlas_row(A, &rs, pits, seeds, n, &r);
    A->ndone++;
    return true;
}

static int cmd_atlas(int argc, char **argv)
{
    struct atlas_run A = {.cmd = "variants atlas",
                          .rules_spec = "all",
                          .pits_spec = "1-3",
                          .seeds_spec = "1-4",
                          .tables = tb_default_dir(),
                          .threads = 1,
                          .hash = SEARCH_HASH_MB,
                          .tb_entries = 2000000,
                          .max_total = 255,
                          .budget = 10,
                          .failed = SOW_OK};
    const char *cmd = A.cmd;
    int pr = atlas_parse(&A, argc, argv);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;

    A.total = A.nrules * A.npits * A.nseeds;
    int rc = A.resume ? atlas_resume_read(&A) : 0;
    if (!rc)
        rc = out_open(cmd, &A.out, A.csv);
    if (rc) {
        free(A.saved);
        return rc;
    }
    if (A.out.f)
        fprintf(A.out.f, "%s\n", atlas_header);
    volatile sig_atomic_t *stop = A.stop = cli_catch_signals(false);

    /* The table is printed whole at the end, after the CSV is in place: a
     * run that fails or is interrupted prints nothing on stdout (its rows
     * went to stderr's progress; docs/cli.md "Exit statuses"). */
    if (!(A.tab = open_memstream(&A.tbuf, &A.tlen))) {
        out_close(cmd, &A.out, false);
        free(A.saved);
        fprintf(stderr, "sow %s: out of memory\n", cmd);
        return CLI_FAIL;
    }
    fprintf(A.tab, "%-12s %4s %5s %5s %9s %-18s %5s %14s %10s  %s\n", "rules", "pits", "seeds",
            "total", "value", "best", "pv", "nodes", "time_ms", "status");
    for (int a = 0; a < A.nrules && !*stop && A.failed == SOW_OK; a++)
        for (int b = 0; b < A.npits && !*stop && A.failed == SOW_OK; b++)
            for (int c = 0; c < A.nseeds && !*stop && A.failed == SOW_OK; c++)
                if (!atlas_instance(&A, A.rules[a], A.pits[b], A.seeds[c]))
                    break;
    fclose(A.tab);
    /* Rows of the file that this run did not reach (interrupted before
     * them) are kept too, so that a second Ctrl-C loses nothing. */
    for (int i = 0; i < A.nsaved && A.out.f; i++)
        if (!A.saved[i].used) {
            atlas_csv_saved(A.out.f, &A.saved[i]);
            A.ndone++;
        }
    free(A.saved);
    if (*stop || A.failed != SOW_OK) {
        free(A.tbuf);
        /* Interrupted: the rows finished stay in FILE for --resume. */
        bool keep = A.failed == SOW_OK && A.out.f;
        int kr = out_close(cmd, &A.out, keep);
        if (A.failed != SOW_OK)
            return cli_exit_code(A.failed);
        if (kr)
            return kr;
        if (keep)
            fprintf(stderr, "sow %s: interrupted: %d rows kept in %s (the same command with "
                    "--resume goes on)\n", cmd, A.ndone, A.csv);
        else
            fprintf(stderr, "sow %s: interrupted (no --csv FILE to keep the rows in)\n", cmd);
        return cli_interrupted();
    }
    rc = out_close(cmd, &A.out, true);
    if (rc == 0) {
        fwrite(A.tbuf, 1, A.tlen, stdout);
        fprintf(stderr, "atlas: %d exact, %d open, %d skipped\n", A.nexact, A.nopen, A.nskip);
    }
    free(A.tbuf);
    return rc;
}

/* ---- play ---- */

struct play_progress {
    const char *rules, *players;
    double last;
};

static void play_note(void *arg, int done, int games)
{
    struct play_progress *pp = arg;
    double now = util_now();
    if (done == games || now - pp->last >= 0.5) {
        pp->last = now;
        fprintf(stderr, "\r%s %s: %d/%d games%s", pp->rules, pp->players, done, games,
                done == games ? "\n" : "");
    }
}

static void play_row(FILE *f, const char *rules, const char *players,
                     const struct var_play_stats *s)
{
    double g = s->games;
    fprintf(f, "%-12s %-10s %6d %5.1f %5.1f %5.1f %7.1f %6.1f %5d %5d %6.2f %6.2f %8.2f %6.3f",
            rules, players, s->games, 100 * s->wins / g, 100 * s->draws / g,
            100 * s->losses / g, s->len_mean, s->len_sd, s->len_min, s->len_max,
            s->live_positions ? (double)s->moves_generated / (double)s->live_positions : 0,
            s->moves_generated ? (double)s->pickups / (double)s->moves_generated : 0,
            s->positions ? 1000.0 * (double)s->endless / (double)s->positions : 0,
            s->plies ? (double)s->captured / (double)s->plies : 0);
    for (int e = 1; e < VAR_END_COUNT; e++)
        fprintf(f, " %6.1f", 100 * s->ends[e] / g);
    fputc('\n', f);
}

static void play_csv(FILE *f, const char *rules, int pits, int seeds, const char *players,
                     const struct var_play_stats *s)
{
    fprintf(f, "%s,%d,%d,%s,%d,%d,%d,%d,%.3f,%.3f,%d,%d,%.4f,%.4f,%.4f,%.4f", rules, pits,
            seeds, players, s->games, s->wins, s->draws, s->losses, s->len_mean, s->len_sd,
            s->len_min, s->len_max,
            s->live_positions ? (double)s->moves_generated / (double)s->live_positions : 0,
            s->moves_generated ? (double)s->pickups / (double)s->moves_generated : 0,
            s->positions ? 1000.0 * (double)s->endless / (double)s->positions : 0,
            s->plies ? (double)s->captured / (double)s->plies : 0);
    for (int e = 1; e < VAR_END_COUNT; e++)
        fprintf(f, ",%d", s->ends[e]);
    fprintf(f, ",%.3f\n", s->seconds);
}

/* One play run: its options, the rule sets, the output files, the
 * per-game arrays for --lengths and the table being printed, shared by the
 * steps below. */
struct play_run {
    const char *cmd;
    const char *rules_spec, *csv, *lengths;
    long pits, seeds, games, seed, depth, rplies, threads;
    struct ruleset rsets[SOW_FAMILY_COUNT];
    int nrules;
    struct outfile out, lout;
    char *tbuf;
    size_t tlen;
    FILE *tab;
    int *glen;
    int8_t *gres;
    uint8_t *gend;
    volatile sig_atomic_t *stop;
};

/* The options and the rule sets: 0, CLI_HELP or the exit status. */
static int play_parse(struct play_run *R, int argc, char **argv)
{
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &R->rules_spec, 0, 0, "R,...", "rule sets, or all (default)", 0,
         0},
        {"--pits", CLI_LONG, &R->pits, 1, SOW_MAX_PITS, "N", "holes per side, default 6", 0, 0},
        {"--seeds", CLI_LONG, &R->seeds, 1, SOW_MAX_SEEDS, "S", "seeds per hole, default 4", 0,
         0},
        {"--games", CLI_LONG, &R->games, 1, 100000000, "N", "games per rule set, default 1000",
         0, 0},
        {"--seed", CLI_LONG, &R->seed, 0, 2147483647.0, "X", "random seed, default 1", 0, 0},
        {"--engine-depth", CLI_LONG, &R->depth, 0, 64, "D", "engine plies, default 2 (0: none)",
         0, 0},
        {"--random-plies", CLI_LONG, &R->rplies, 0, 1000, "K",
         "random opening plies, default 2", 0, 0},
        {"--threads", CLI_LONG, &R->threads, 1, (double)cli_max_threads(), "T",
         "threads, default 1", 0, 0},
        {"--csv", CLI_STR, &R->csv, 0, 0, "FILE", "one row per rule set and player", 0, 0},
        {"--lengths", CLI_STR, &R->lengths, 0, 0, "FILE", "one row per game", 0, 0},
        {0}};
    const struct cli_spec spec = {R->cmd, usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr;
    const char *rules[SOW_FAMILY_COUNT];
    if (parse_rules(R->cmd, R->rules_spec, rules, &R->nrules))
        return CLI_BAD;
    for (int a = 0; a < R->nrules; a++) {
        struct sow_error e;
        enum sow_status st = rules_init(&R->rsets[a], rules[a], (int)R->pits, (int)R->seeds, &e);
        if (st != SOW_OK) {
            cli_bad(R->cmd, "%s", e.msg);
            return cli_exit_code(st);
        }
    }
    return 0;
}

/* Everything between the open files and the games: the per-game arrays,
 * the CSV headers, the signal handlers and the table's header.  0 or the
 * exit status (play_finish frees what was made). */
static int play_setup(struct play_run *R)
{
    const char *cmd = R->cmd;
    R->glen = R->lout.f ? malloc(sizeof *R->glen * (size_t)R->games) : NULL;
    R->gres = R->lout.f ? malloc((size_t)R->games) : NULL;
    R->gend = R->lout.f ? malloc((size_t)R->games) : NULL;
    if (R->lout.f && (!R->glen || !R->gres || !R->gend)) {
        fprintf(stderr, "sow %s: out of memory\n", cmd);
        return CLI_FAIL;
    }
    if (R->out.f) {
        fprintf(R->out.f, "rules,pits,seeds,players,games,wins,draws,losses,len_mean,len_sd,"
                          "len_min,len_max,branching,laps_per_move,endless_per_1000,"
                          "captured_per_move");
        for (int e = 1; e < VAR_END_COUNT; e++)
            fprintf(R->out.f, ",end_%s", var_end_name(e));
        fprintf(R->out.f, ",seconds\n");
    }
    if (R->lout.f)
        fprintf(R->lout.f, "rules,players,game,length,result,end\n");
    R->stop = cli_catch_signals(false);
    /* The table is printed whole at the end: an interrupted run prints
     * nothing on stdout (docs/cli.md "Exit statuses"). */
    FILE *tab = R->tab = open_memstream(&R->tbuf, &R->tlen);
    if (!tab) {
        fprintf(stderr, "sow %s: out of memory\n", cmd);
        return CLI_FAIL;
    }
    fprintf(tab, "2x%ld, %ld seeds per hole, %ld games each, seed %ld; W/D/L %% for the first "
           "player; length in plies; endings in %% of games\n",
           R->pits, R->seeds, R->games, R->seed);
    fprintf(tab, "%-12s %-10s %6s %5s %5s %5s %7s %6s %5s %5s %6s %6s %8s %6s", "rules", "players",
           "games", "W%", "D%", "L%", "len", "sd", "min", "max", "branch", "laps", "endl/1k",
           "cap/mv");
    for (int e = 1; e < VAR_END_COUNT; e++)
        fprintf(tab, " %6.6s", var_end_name(e));
    fprintf(tab, "\n");
    return 0;
}

/* The games of one rule set and kind of player (0 random, 1 engine) and
 * their rows.  0, also when interrupted (R->stop), or the exit status. */
static int play_one(struct play_run *R, const struct ruleset *rs, int kind)
{
    char players[32];
    if (kind == 0)
        snprintf(players, sizeof players, "random");
    else
        snprintf(players, sizeof players, "engine-d%ld", R->depth);
    struct play_progress pp = {rs->name, players, 0};
    struct var_play_opts po = {0};
    po.player = kind ? VAR_ENGINE : VAR_RANDOM;
    po.games = (int)R->games;
    po.seed = (uint64_t)R->seed;
    po.engine_depth = (int)R->depth;
    po.random_plies = (int)R->rplies;
    po.threads = (int)R->threads;
    po.stop = (volatile int *)R->stop;
    po.progress = play_note;
    po.progress_arg = &pp;
    po.game_len = R->glen;
    po.game_result = R->gres;
    po.game_end = R->gend;
    struct var_play_stats st;
    struct sow_error e;
    enum sow_status vs = var_play(rs, &po, &st, &e);
    if (vs != SOW_OK) {
        if (*R->stop)
            return 0;
        fprintf(stderr, "sow %s: %s %s: %s\n", R->cmd, rs->name, players, e.msg);
        return cli_exit_code(vs);
    }
    play_row(R->tab, rs->name, players, &st);
    if (R->out.f)
        play_csv(R->out.f, rs->name, (int)R->pits, (int)R->seeds, players, &st);
    if (R->lout.f)
        for (long g = 0; g < R->games; g++)
            fprintf(R->lout.f, "%s,%s,%ld,%d,%d,%s\n", rs->name, players, g, R->glen[g],
                    R->gres[g], var_end_name(R->gend[g]));
    return 0;
}

/* The end, whatever rc: the table on stdout and the files committed only
 * if all went well; everything freed.  Returns the exit status. */
static int play_finish(struct play_run *R, int rc)
{
    if (R->tab)
        fclose(R->tab);
    free(R->glen);
    free(R->gres);
    free(R->gend);
    /* the files first: a file that cannot be committed (disk full) is one
     * error line, the other file discarded, nothing on stdout */
    int r1 = out_close(R->cmd, &R->out, rc == 0);
    int r2 = out_close(R->cmd, &R->lout, rc == 0 && r1 == 0);
    if (rc == 0)
        rc = r1 ? r1 : r2;
    if (rc == 0 && R->tab)
        fwrite(R->tbuf, 1, R->tlen, stdout);
    free(R->tbuf);
    return rc;
}

static int cmd_play_stats(int argc, char **argv)
{
    struct play_run R = {.cmd = "variants play",
                         .rules_spec = "all",
                         .pits = 6,
                         .seeds = 4,
                         .games = 1000,
                         .seed = 1,
                         .depth = 2,
                         .rplies = 2,
                         .threads = 1};
    const char *cmd = R.cmd;
    int pr = play_parse(&R, argc, argv);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    int rc = out_open(cmd, &R.out, R.csv);
    if (rc)
        return rc;
    if ((rc = out_open(cmd, &R.lout, R.lengths))) {
        out_close(cmd, &R.out, false);
        return rc;
    }
    if ((rc = play_setup(&R)))
        return play_finish(&R, rc);
    volatile sig_atomic_t *stop = R.stop;
    for (int a = 0; a < R.nrules && !*stop; a++) {
        for (int kind = 0; kind < 2 && !*stop; kind++) {
            if (kind == 1 && R.depth <= 0)
                break;
            if ((rc = play_one(&R, &R.rsets[a], kind)))
                return play_finish(&R, rc);
        }
    }
    if (*stop) {
        fprintf(stderr, "\nsow %s: interrupted (no CSV written)\n", cmd);
        rc = cli_interrupted();
    }
    return play_finish(&R, rc);
}

int cmd_variants(int argc, char **argv)
{
    if (argc < 2)
        return cli_bad("variants", "a subcommand is needed: atlas or play (see 'sow variants "
                                   "--help')");
    if (cli_is_help(argv[1])) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "atlas") == 0)
        return cmd_atlas(argc - 1, argv + 1);
    if (strcmp(argv[1], "play") == 0)
        return cmd_play_stats(argc - 1, argv + 1);
    return cli_bad("variants", "unknown subcommand '%s' (atlas, play; see --help)", argv[1]);
}
