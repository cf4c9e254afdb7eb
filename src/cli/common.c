#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

int cli_memory_check(const char *cmd, double gb)
{
    double ram = util_phys_memory();
    if (ram > 0 && gb * 1e9 > ram)
        return cli_bad(cmd, "--memory %g GB is more than this machine has (%.1f GB of RAM); give at most %ld",
                       gb, ram / 1e9, (long)(ram / 1e9));
    return 0;
}

double cli_table_room(double *ram_mb)
{
    double ram = util_phys_memory() / 1048576.0;
    if (ram_mb)
        *ram_mb = ram;
    return ram > 0 ? 0.75 * ram : 0;
}

long cli_hash_max(long cap)
{
    double room = cli_table_room(NULL);
    if (room > 0 && room < (double)cap)
        cap = (long)room;
    return cap < 1 ? 1 : cap;
}

int cli_hash_check(const char *cmd, const char *what, long mb)
{
    double ram, room = cli_table_room(&ram);
    if (room > 0 && (double)mb > room)
        return cli_bad(cmd,
                       "%s %ld MiB does not fit: this machine has %.0f MiB, at most %.0f MiB "
                       "(3/4 of it) can go to the table",
                       what, mb, ram, room);
    return 0;
}

int cli_bad(const char *cmd, const char *fmt, ...)
{
    /* Messages quote arguments: control characters in them (a newline in a
     * quoted argument) would break the one-line promise, so they become '?'. */
    char msg[1024], c[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sow_scrub(msg);
    snprintf(c, sizeof c, "%s", cmd);
    sow_scrub(c);
    fprintf(stderr, "sow%s%s: %s\n", *c ? " " : "", c, msg);
    return CLI_BAD;
}

/* ---- the option parser ----------------------------------------------------- */

void cli_usage(const struct cli_spec *sp, FILE *f)
{
    fputs(sp->usage, f);
    bool head = false;
    for (const struct cli_option *o = sp->opts; o && o->name; o++) {
        if (!o->help)
            continue;
        if (!head)
            fputs("options:\n", f);
        head = true;
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (strlen(left) > 16)
            fprintf(f, "  %s\n  %-16s %s\n", left, "", o->help);
        else
            fprintf(f, "  %-16s %s\n", left, o->help);
    }
    if (sp->notes)
        fputs(sp->notes, f);
}

/* Store value v of option o (from argv).  0 or CLI_BAD after a message. */
static int set_value(const struct cli_spec *sp, const struct cli_option *o, const char *v)
{
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)o->dst = true;
        break;
    case CLI_STR:
        if (!*v) /* an empty --dir or --csv would mean the current directory or nothing */
            return cli_bad(sp->cmd, "option %s needs a value, not ''", o->name);
        *(const char **)o->dst = v;
        break;
    case CLI_LONG: {
        long x;
        if (util_parse_long(v, (long)o->lo, (long)o->hi, &x) < 0)
            return cli_bad(sp->cmd, "%s '%s': expected a whole number in %ld..%ld", o->name, v,
                           (long)o->lo, (long)o->hi);
        *(long *)o->dst = x;
        break;
    }
    case CLI_DOUBLE: {
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x) || x < o->lo || x > o->hi ||
            (o->open_lo && x == o->lo))
            return cli_bad(sp->cmd, "%s '%s': expected a number %s %g and at most %g", o->name,
                           v, o->open_lo ? ">" : ">=", o->lo, o->hi);
        *(double *)o->dst = x;
        break;
    }
    }
    if (o->seen)
        *o->seen = true;
    return 0;
}

int cli_parse(const struct cli_spec *sp, int argc, char **argv, const char **pos, int *npos)
{
    int np = 0;
    if (npos)
        *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage(sp, stdout);
            return CLI_HELP;
        }
        if (a[0] == '-' && a[1]) {
            const struct cli_option *o = sp->opts;
            size_t n = 0;
            for (; o && o->name; o++) {
                n = strlen(o->name);
                if (strncmp(a, o->name, n) == 0 && (a[n] == 0 || a[n] == '='))
                    break;
            }
            if (!o || !o->name)
                return cli_unknown(sp->cmd, a);
            if (o->kind == CLI_FLAG) {
                if (a[n] == '=')
                    return cli_bad(sp->cmd, "option %s takes no value", o->name);
                if (set_value(sp, o, NULL))
                    return CLI_BAD;
                continue;
            }
            const char *v;
            if (a[n] == '=') {
                v = a + n + 1;
            } else {
                if (i + 1 >= argc)
                    return cli_bad(sp->cmd, "option %s needs a value", o->name);
                v = argv[++i];
            }
            if (set_value(sp, o, v))
                return CLI_BAD;
            continue;
        }
        if (np >= sp->max_pos) {
            if (sp->max_pos == 1 && sp->pos_name)
                return cli_bad(sp->cmd, "more than one %s given ('%s')", sp->pos_name, a);
            return cli_bad(sp->cmd, "unexpected argument '%s'", a);
        }
        pos[np++] = a;
        if (npos)
            *npos = np;
    }
    return 0;
}

long cli_max_threads(void)
{
    long n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 8 ? n : 8;
}

/* ---- signals ---------------------------------------------------------------- */

/* The one flag of the process: a signal handler cannot be handed a context. */
static volatile sig_atomic_t cli_stop_flag;
static volatile sig_atomic_t cli_stop_signal;
static volatile sig_atomic_t cli_second_kills;
static struct timespec cli_first_stop; /* written by the handler only (both signals masked) */

/* A second stop signal ends the process at once (with second_kills), but
 * only from SECOND_AFTER_NS after the first: `timeout -s INT` sends its
 * signal to the command and then to the whole process group, so one stop
 * arrives twice within microseconds, and the clean stop (files kept for a
 * rerun) must not be cut by its own echo. */
#define SECOND_AFTER_NS 500000000L

static void on_stop_signal(int sig)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe (POSIX 2008) */
    if (cli_stop_flag) {
        long dns = (long)(now.tv_sec - cli_first_stop.tv_sec) * 1000000000L +
                   (now.tv_nsec - cli_first_stop.tv_nsec);
        if (cli_second_kills && sig != SIGUSR1 && dns >= SECOND_AFTER_NS) {
            signal(sig, SIG_DFL); /* delivered, with its default action, on return */
            raise(sig);
        }
        return;
    }
    cli_first_stop = now;
    cli_stop_signal = sig;
    cli_stop_flag = 1;
}

volatile sig_atomic_t *cli_catch_signals(bool second_kills)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGUSR1);
    /* No SA_RESTART: a blocking call returns EINTR, so the flag is seen. */
    cli_second_kills = second_kills;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &cli_stop_flag;
}

/* ---- mpi (docs/distributed.md): mpirun forwards SIGUSR1 to every rank, not
 * SIGINT (which it answers by killing them), so scripts/sow-mpirun turns
 * Ctrl-C into SIGUSR1 and the ranks stop as on Ctrl-C. */
void cli_catch_usr1(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}
/* ---- end mpi ---- */

int cli_interrupted(void)
{
    return cli_stop_signal == SIGTERM ? CLI_TERMINATED : CLI_INTERRUPTED;
}

struct sow_relay_cache *cli_relay_cache(const struct ruleset *rs, unsigned log2_entries,
                                        volatile sig_atomic_t *stop)
{
    struct sow_relay_cache *c = rs->relay ? rules_cache_new(log2_entries) : NULL;
    rules_cache_set_stop(c, stop);
    return c;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_unknown(const char *cmd, const char *arg)
{
    return cli_bad(cmd, "unknown option '%s' (see 'sow %s --help')", arg, cmd);
}

int cli_game_setup(const char *cmd, struct cli_game *g)
{
    struct sow_error e;
    enum sow_status st;
    const char *rules = g->rules ? g->rules : "oware";
    int pits = (int)g->pits;
    if (g->pos) {
        int tp;
        if ((st = pos_token_pits(g->pos, &tp, &e)) != SOW_OK) {
            cli_bad(cmd, "position: %s", e.msg);
            return cli_exit_code(st);
        }
        if (pits && pits != tp)
            return cli_bad(cmd, "position has %d holes per side but --pits is %d", tp, pits);
        pits = tp;
    }
    st = rules_init(&g->rs, rules, pits, g->pos && g->seeds < 0 ? 4 : (int)g->seeds, &e);
    if (st != SOW_OK) {
        cli_bad(cmd, "%s", e.msg);
        return cli_exit_code(st);
    }
    if (!g->pos) {
        g->p = rules_start(&g->rs);
        return 0;
    }
    if ((st = pos_parse(&g->rs, g->pos, &g->p, &e)) != SOW_OK) {
        cli_bad(cmd, "position: %s", e.msg);
        return cli_exit_code(st);
    }
    return 0;
}

int cli_check_dir(const char *cmd, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return cli_bad(cmd, "%s: no such directory", dir);
    if (!S_ISDIR(st.st_mode))
        return cli_bad(cmd, "%s: not a directory", dir);
    return 0;
}

int cli_exit_code(enum sow_status st)
{
    switch (st) {
    case SOW_OK: return CLI_OK;
    case SOW_E_INPUT:
    case SOW_E_TOO_BIG: return CLI_BAD;
    case SOW_E_IO:
    case SOW_E_NOMEM: return CLI_FAIL;
    case SOW_E_INTERRUPTED: return cli_interrupted();
    }
    return CLI_FAIL;
}

void cli_rules_csv(const char *spec, char *out, size_t len)
{
    if (strcmp(spec, "all") != 0) {
        snprintf(out, len, "%s", spec);
        return;
    }
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; sow_rule_names[i] && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? "," : "", sow_rule_names[i]);
}
