/* sow bench tables --mpi: distributed table builds (docs/distributed.md) on
 * this machine's loopback ranks.  Builds the levels once in this process,
 * then runs `mpirun -np R <this sow> tables build` for each rank count R
 * (SOW_MPI_STATS=1: the ranks report bytes sent and peak memory; each rank
 * gets --memory of its share of the machine's default budget), checks
 * every level file is byte-identical to the single-process one and prints,
 * per R: wall time (mpirun's start included), CPU time of the whole job,
 * bytes sent between ranks per position, supersteps, and peak memory per
 * rank (resident set, and the level arrays and buffers alone). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "tables/tables.h"
#include "util.h"

#ifdef SOW_MPI
static double child_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* Level files 0..seeds of a and b identical byte for byte. */
static bool same_files(const struct ruleset *rs, const char *a, const char *b, int seeds)
{
    bool same = true;
    for (int n = 0; n <= seeds && same; n++) {
        char pa[4200], pb[4200];
        tb_file_name(a, rs->name, rs->pits, n, pa, sizeof pa);
        tb_file_name(b, rs->name, rs->pits, n, pb, sizeof pb);
        FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
        same = fa && fb;
        char x[1 << 16], y[1 << 16];
        while (same) {
            size_t ka = fread(x, 1, sizeof x, fa), kb = fread(y, 1, sizeof y, fb);
            same = ka == kb && memcmp(x, y, ka) == 0;
            if (!ka)
                break;
        }
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
    }
    return same;
}

/* mpirun -np R self tables build ...; stderr into log.  Exit status or -1. */
static int run_ranks(const char *self, const struct ruleset *rs, int ranks, long seeds,
                     long threads, const char *builder, const char *dir, const char *log,
                     volatile sig_atomic_t *stop)
{
    char np[24], se[24], th[24], pi[24], me[24];
    snprintf(np, sizeof np, "%d", ranks);
    /* the ranks share this machine: each is given its share of the default
     * budget (3/4 of RAM), as docs/distributed.md tells a cluster's user */
    double ram = util_phys_memory();
    long gb = ram > 0 ? (long)(0.75 * ram / 1e9 / ranks) : 0;
    snprintf(me, sizeof me, "%ld", gb > 1 ? gb : 1);
    snprintf(se, sizeof se, "%ld", seeds);
    snprintf(th, sizeof th, "%ld", threads > 0 ? threads : 1);
    snprintf(pi, sizeof pi, "%d", rs->pits);
    const char *argv[40];
    int k = 0;
    argv[k++] = "mpirun";
    argv[k++] = "--oversubscribe";
    if (geteuid() == 0)
        argv[k++] = "--allow-run-as-root";
    argv[k++] = "--mca";
    argv[k++] = "mpi_yield_when_idle";
    argv[k++] = "1";
    argv[k++] = "-x";
    argv[k++] = "SOW_MPI_STATS";
    if (getenv("OMP_WAIT_POLICY")) {
        argv[k++] = "-x";
        argv[k++] = "OMP_WAIT_POLICY";
    }
    if (getenv("SOW_MPI_LOWER")) { /* owned|mapped lower levels (docs/distributed.md) */
        argv[k++] = "-x";
        argv[k++] = "SOW_MPI_LOWER";
    }
    argv[k++] = "-np";
    argv[k++] = np;
    argv[k++] = self;
    argv[k++] = "tables";
    argv[k++] = "build";
    argv[k++] = "--rules";
    argv[k++] = rs->name;
    argv[k++] = "--pits";
    argv[k++] = pi;
    argv[k++] = "--seeds";
    argv[k++] = se;
    argv[k++] = "--threads";
    argv[k++] = th;
    argv[k++] = "--builder";
    argv[k++] = builder;
    argv[k++] = "--dir";
    argv[k++] = dir;
    argv[k++] = "--memory";
    argv[k++] = me;
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        if (!f || !freopen("/dev/null", "w", stdout))
            _exit(127);
        setenv("SOW_MPI_STATS", "1", 1);
        execvp("mpirun", (char *const *)argv);
        fprintf(stderr, "mpirun: %s\n", strerror(errno));
        _exit(127);
    }
    /* Stopped (a signal to this process alone, not to its group as Ctrl-C
     * sends it): mpirun told to end the job, once */
    int ws;
    bool told = false;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR)
            return -1;
        if (*stop && !told) {
            kill(pid, SIGTERM);
            told = true;
        }
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

int bench_tables_mpi(const char *rules, long pits, long seeds, long threads, const char *builder,
                     const char *ranks)
{
    char self[4096];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        return cli_bad("bench tables", "--mpi: cannot find this program's path");
    self[l] = 0;
    int rlist[16], nr = 0;
    char rb[256];
    snprintf(rb, sizeof rb, "%s", ranks);
    for (char *save = NULL, *t = strtok_r(rb, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        char *end;
        long r = strtol(t, &end, 10);
        if (*end || r < 1 || r > 256 || nr == 16)
            return cli_bad("bench tables", "--ranks '%s': expected up to 16 counts 1..256",
                           ranks);
        rlist[nr++] = (int)r;
    }
    /* Ctrl-C (the ranks, in this process group, get it too): the builds
     * stop, the temporary directory is removed, exit 130 */
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    char list[512];
    cli_rules_csv(rules, list, sizeof list);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        struct ruleset rs;
        struct sow_error e;
        enum sow_status st = rules_init(&rs, name, (int)pits, 0, &e);
        if (st != SOW_OK) {
            cli_bad("bench tables", "%s", e.msg);
            return cli_exit_code(st);
        }
        char base[4096];
        if (!util_mkdtemp(base, sizeof base, "sow-bench-mpi")) {
            fprintf(stderr, "sow bench tables: cannot create a temporary directory in %s: %s\n",
                    util_tmpdir(), strerror(errno));
            return CLI_FAIL;
        }
        char ref[4200], dir[4200], log[4200];
        snprintf(ref, sizeof ref, "%s/ref", base);
        snprintf(log, sizeof log, "%s/log", base);
        int bld = strcmp(builder, "fast") == 0 ? TB_BUILDER_FAST
                  : strcmp(builder, "lean") == 0 ? TB_BUILDER_LEAN
                                                 : TB_BUILDER_AUTO;
        struct tb_build_opts opt = {.threads = (int)(threads > 0 ? threads : 1), .builder = bld,
                                    .stop = stop};
        printf("%s 2x%ld levels 0..%ld, %ld thread(s) per rank, --builder %s, %ld cores:\n",
               rs.name, pits, seeds, threads > 0 ? threads : 1, builder,
               sysconf(_SC_NPROCESSORS_ONLN));
        double t0 = util_now();
        st = tb_build(&rs, ref, (int)seeds, &opt, &e);
        int rc = CLI_OK;
        if (st != SOW_OK && !*stop) {
            fprintf(stderr, "sow bench tables: %s\n", e.msg);
            rc = CLI_FAIL;
        } else if (st == SOW_OK) {
            printf("  one process (no MPI)  %8.2f s\n", util_now() - t0);
            fflush(stdout);
        }
        for (int k = 0; k < nr && rc == CLI_OK && !*stop; k++) {
            snprintf(dir, sizeof dir, "%s/r%d", base, rlist[k]);
            double c0 = child_cpu(), w0 = util_now();
            int x = run_ranks(self, &rs, rlist[k], seeds, threads, builder, dir, log, stop);
            double wall = util_now() - w0, cpu = child_cpu() - c0;
            char line[1024] = "";
            FILE *f = fopen(log, "r");
            char buf[1024];
            while (f && fgets(buf, sizeof buf, f))
                if (strncmp(buf, "mpi: ", 5) == 0 && buf[5] >= '0' && buf[5] <= '9')
                    snprintf(line, sizeof line, "%s", buf + 5);
            if (f)
                fclose(f);
            if (*stop) {
                util_rmdir_flat(dir);
                break;
            }
            if (x != 0 || !line[0]) {
                util_rmdir_flat(dir);
                fprintf(stderr, "sow bench tables: mpirun -np %d failed (status %d); its log:\n",
                        rlist[k], x);
                f = fopen(log, "r");
                while (f && fgets(buf, sizeof buf, f))
                    fputs(buf, stderr);
                if (f)
                    fclose(f);
                rc = CLI_FAIL;
                break;
            }
            bool same = same_files(&rs, ref, dir, (int)seeds);
            /* "R ranks, B, P positions built, X bytes sent between ranks (Y
             * per position), S supersteps, peak memory per rank M MB (rss),
             * A MB (level arrays and buffers)" */
            unsigned long long pos = 0, bytes = 0, steps = 0;
            double bpp = 0, rss = 0, arr = 0;
            int rr = 0;
            char how[16] = "";
            sscanf(line,
                   "%d ranks, %15[a-z-], %llu positions built, %llu bytes sent between ranks "
                   "(%lf per position), %llu supersteps, peak memory per rank %lf MB (rss), "
                   "%lf MB",
                   &rr, how, &pos, &bytes, &bpp, &steps, &rss, &arr);
            printf("  %d rank%s (%s)  %8.2f s wall  %8.2f cpu-s  %6.2f B sent/pos  %7llu "
                   "supersteps  peak/rank %7.1f MB rss  %7.1f MB arrays  %s\n",
                   rlist[k], rlist[k] > 1 ? "s" : " ", how, wall, cpu, bpp, steps, rss, arr,
                   same ? "byte-identical" : "DIFFERENT FILES");
            fflush(stdout);
            util_rmdir_flat(dir);
            if (!same)
                rc = CLI_FAIL;
        }
        util_rmdir_flat(ref);
        unlink(log);
        rmdir(base);
        if (*stop) {
            fprintf(stderr, "sow bench tables: interrupted\n");
            return cli_interrupted();
        }
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}
#else
int bench_tables_mpi(const char *rules, long pits, long seeds, long threads, const char *builder,
                     const char *ranks)
{
    (void)rules, (void)pits, (void)seeds, (void)threads, (void)builder, (void)ranks;
    return cli_bad("bench tables", "--mpi: this sow was built without MPI "
                                   "(meson setup -Dmpi=enabled, docs/distributed.md)");
}
#endif
