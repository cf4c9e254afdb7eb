/* sow match: the players (match.h): a SPEC's text read into struct pspec,
 * and each worker's pair of players, engines in this process or programs
 * speaking the engine protocol (docs/engine.md "Protocol") over pipes. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"
#include "match.h"
#include "timeman.h"
#include "sow/engine.h"
#include "sow/search.h"
#include "util.h"

/* ---- programs (cmd:) ---- */

/* The next line of program pl's output into line (its newline removed, cut
 * to cap): 1; 0 at the end of its output; -1 if none came by deadline
 * (util_now()); -2 once match_stop is set (looked at every 50 ms: a signal
 * interrupts one thread's wait, not every worker's). */
static int cmd_line(struct player *pl, double deadline, char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(pl->rbuf, '\n', pl->rlen);
        if (nl || pl->rlen == sizeof pl->rbuf) { /* a line longer than rbuf is cut */
            size_t k = nl ? (size_t)(nl - pl->rbuf) : pl->rlen, c = k < cap - 1 ? k : cap - 1;
            memcpy(line, pl->rbuf, c);
            line[c] = 0;
            if (nl)
                k++;
            memmove(pl->rbuf, pl->rbuf + k, pl->rlen - k);
            pl->rlen -= k;
            return 1;
        }
        if (match_stop)
            return -2;
        double left = deadline - util_now();
        if (left <= 0)
            return -1;
        struct pollfd pf = {.fd = pl->rfd, .events = POLLIN};
        int r = poll(&pf, 1, left > 0.05 ? 50 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return 0;
        if (r <= 0)
            continue;
        ssize_t n = read(pl->rfd, pl->rbuf + pl->rlen, sizeof pl->rbuf - pl->rlen);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return 0;
        pl->rlen += (size_t)n;
    }
}

/* The end of program pl: up to secs for its leader to exit by itself, then
 * its whole process group killed (SIGKILL: a program that does not answer
 * may not read quit either; its helpers, a script's sleep, go with it) and
 * the leader reaped.  True if it had exited by itself, with how in how
 * (hlen > 0). */
static bool cmd_end(struct player *pl, double secs, char *how, size_t hlen)
{
    if (pl->pid <= 0)
        return false;
    double until = util_now() + secs;
    bool exited = false;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: still a zombie, so its group id is not reused before
         * the kill below */
        if (waitid(P_PID, (id_t)pl->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == pl->pid) {
            exited = true;
            break;
        }
        if (util_now() >= until || match_stop)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    kill(-pl->pid, SIGKILL);
    kill(pl->pid, SIGKILL); /* should its setpgid have failed */
    int st = 0;
    while (waitpid(pl->pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (exited && hlen) {
        if (WIFEXITED(st))
            snprintf(how, hlen, "exited with status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(how, hlen, "was killed by signal %d (%s)", WTERMSIG(st),
                     strsignal(WTERMSIG(st)));
        else
            snprintf(how, hlen, "ended");
    }
    pl->pid = 0;
    pl->gone = true;
    return exited;
}

/* The last line program pl wrote on its stderr (its temporary file), made
 * printable, into buf ("" if none). */
static void cmd_stderr_tail(const struct player *pl, char *buf, size_t len)
{
    char b[513];
    buf[0] = 0;
    if (!pl->errf)
        return;
    int fd = fileno(pl->errf);
    off_t end = lseek(fd, 0, SEEK_END);
    ssize_t n = end > 0 ? pread(fd, b, 512, end > 512 ? end - 512 : 0) : 0;
    if (n <= 0)
        return;
    while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' '))
        n--;
    b[n] = 0;
    char *t = strrchr(b, '\n');
    t = t ? t + 1 : b;
    size_t k = 0;
    for (; *t && k + 1 < len && k < 200; t++)
        buf[k++] = (unsigned char)*t < 0x20 || *t == 0x7f ? '?' : *t;
    buf[k] = 0;
}

/* Program SPEC sp started in a process group of its own, its stdin and
 * stdout pipes, its stderr a temporary file.  0, or -1 with err. */
static int cmd_start(const struct pspec *sp, struct player *pl, char *err, int errlen)
{
    int in[2], out[2];
    if (!(pl->errf = tmpfile())) {
        snprintf(err, (size_t)errlen, "'%s': a temporary file for its stderr: %s", sp->cmd,
                 strerror(errno));
        return -1;
    }
    fcntl(fileno(pl->errf), F_SETFD, FD_CLOEXEC); /* not the other workers' programs' */
    if (pipe2(in, O_CLOEXEC)) {
        snprintf(err, (size_t)errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC)) {
        snprintf(err, (size_t)errlen, "pipe: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, (size_t)errlen, "fork: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return -1;
    }
    if (pid == 0) {
        /* its own group: killed whole on a timeout or our SIGINT/SIGTERM,
         * and a terminal's Ctrl-C is ours to pass on, not its */
        setpgid(0, 0);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* and gone if we are SIGKILLed */
#endif
        signal(SIGPIPE, SIG_DFL); /* ignored here, which exec keeps */
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(fileno(pl->errf), 2);
        execl("/bin/sh", "sh", "-c", sp->cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* both sides: whichever runs first */
    close(in[0]);
    close(out[1]);
    pl->pid = pid;
    pl->rfd = out[0];
    if (!(pl->to = fdopen(in[1], "w"))) {
        close(in[1]);
        snprintf(err, (size_t)errlen, "fdopen failed");
        return -1;
    }
    return 0;
}

/* A move token of a program's answer in position p: the notation of
 * move_parse, or oware's hole letter (A-F South, a-f North); SOW_MOVE_NONE
 * if neither (legality is the caller's). */
static sow_move cmd_parse_move(const struct ruleset *rs, const sow_position *p, const char *t)
{
    sow_move m;
    if (move_parse(rs, p, t, &m, NULL) == SOW_OK)
        return m;
    if (rs->family == SOW_OWARE && t[0] && !t[1] && (t[0] - (p->side ? 'a' : 'A')) >= 0 &&
        (t[0] - (p->side ? 'a' : 'A')) < rs->pits)
        return (sow_move)(t[0] - (p->side ? 'a' : 'A'));
    return SOW_MOVE_NONE;
}

/* `position pos OPEN moves ...`: the game from its opening by mv[0..nm-1]
 * (hist[i]: the position mv[i] was played in, whose side names it), and
 * then `extra` by the side to move at p unless SOW_MOVE_NONE (the reply a
 * ponder assumes). */
static void cmd_position(const struct ruleset *rs, struct player *pl, const sow_position *open,
                         const sow_position *hist, const sow_move *mv, int nm,
                         const sow_position *p, sow_move extra)
{
    char pos[SOW_POS_MAXLEN], name[SOW_MOVE_MAXLEN];
    pos_format(rs, open, pos, sizeof pos);
    fprintf(pl->to, "position pos %s", pos);
    if (nm || extra != SOW_MOVE_NONE)
        fprintf(pl->to, " moves");
    for (int i = 0; i < nm; i++) {
        move_format(rs, hist[i].side, mv[i], name, sizeof name);
        fprintf(pl->to, " %s", name);
    }
    if (extra != SOW_MOVE_NONE) {
        move_format(rs, p->side, extra, name, sizeof name);
        fprintf(pl->to, " %s", name);
    }
    fputc('\n', pl->to);
}

/* `go [ponder ]wtime W btime B winc I binc I`: the clocks (South's, side
 * A's, first; never below 0) for pl to move as side `side`. */
static void cmd_go_clocks(const struct mctx *M, struct player *pl, int side, const double left[2],
                          const char *ponder)
{
    int who = (int)(pl->sp - M->spec);
    double mine = fmax(left[who], 0), theirs = fmax(left[!who], 0);
    fprintf(pl->to, "go %swtime %.0f btime %.0f winc %.0f binc %.0f\n", ponder,
            side == SOW_A ? mine : theirs, side == SOW_A ? theirs : mine, M->tc_inc, M->tc_inc);
}

/* Program pl's answer to go at position p by the deadline limit seconds
 * from now: its move (legal or not: the caller checks; its token, made
 * short and printable for --out's game line, in tok), with the reply it
 * names to ponder on kept in pl->ptok.  SOW_MOVE_NONE with why if it gave
 * no move it could parse, if it did not answer in time or ended (then
 * killed), or once match_stop is set. */
static sow_move cmd_bestmove(struct mctx *M, struct player *pl, const sow_position *p,
                             double limit, char tok[16], char *why, size_t wlen)
{
    char line[1024];
    int r;
    pl->ptok[0] = 0;
    while ((r = cmd_line(pl, util_now() + limit, line, sizeof line)) == 1) {
        if (strncmp(line, "bestmove ", 9))
            continue;
        char *t = line + 9, *sp = t + strcspn(t, " \r\n"), *pk;
        if (*sp && !strncmp(sp + 1, "ponder ", 7) && (pk = sp + 8)[0]) {
            pk[strcspn(pk, " \r\n")] = 0;
            snprintf(pl->ptok, sizeof pl->ptok, "%s", pk);
        }
        *sp = 0;
        sow_move m = cmd_parse_move(&M->rs, p, t);
        snprintf(tok, 16, "%.15s", t);
        for (char *c = tok; *c; c++)
            if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= 'a' && *c <= 'z') || *c == '-' || *c == '+' || *c == '_'))
                *c = '?';
        if (m == SOW_MOVE_NONE)
            snprintf(why, wlen, "the illegal move '%s'", tok);
        return m;
    }
    char how[160];
    if (r == -2)
        cmd_end(pl, 0, NULL, 0); /* stopped: the game is not counted */
    else if (r == -1) {
        cmd_end(pl, 0, NULL, 0);
        snprintf(why, wlen, M->tc ? "lost on time: no bestmove within %.1f s"
                                  : "no bestmove within %.1f s", limit);
    } else if (cmd_end(pl, 1.0, how, sizeof how))
        snprintf(why, wlen, "%s without a bestmove", how);
    else
        snprintf(why, wlen, "closed its output without a bestmove");
    return SOW_MOVE_NONE;
}

/* A ponder that missed, or a game that ended: `stop`, and the answer it
 * gives read and set aside, within --grace plus a second.  0, or -1 with
 * why (the program killed). */
static int cmd_unponder(struct mctx *M, struct player *pl, char *why, size_t wlen)
{
    pl->pondering = false;
    fprintf(pl->to, "stop\n");
    fflush(pl->to);
    char line[1024];
    int r;
    double wait = M->grace + MATCH_STOP_WAIT;
    while ((r = cmd_line(pl, util_now() + wait, line, sizeof line)) == 1)
        if (!strncmp(line, "bestmove", 8))
            return 0;
    cmd_end(pl, 0, NULL, 0);
    snprintf(why, wlen, r == -1 ? "no bestmove within %.1f s of stop (pondering)"
                                : "ended while pondering", wait);
    return -1;
}

/* ---- players ---- */

int player_open(struct mctx *M, int who, struct player *pl, char *err, int errlen)
{
    const struct pspec *sp = &M->spec[who];
    memset(pl, 0, sizeof *pl);
    pl->sp = sp;
    pl->rfd = -1;
    if (sp->kind == P_SOW) {
        struct engine_opts o = {.threads = sp->threads, .hash_mb = sp->hash, .tb = M->tb[who],
                                .weights = sp->have_weights ? &sp->w : NULL,
                                .solution = M->sol[who], .lmr = sp->lmr,
                                .qdepth = sp->qdepth, .swindle = sp->swindle,
                                .root_closure = sp->root_closure};
        struct sow_error ee;
        if (engine_new(&M->rs, &o, &pl->e, &ee) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", ee.msg);
            return -1;
        }
        engine_set_stop_flag(pl->e, &match_stop); /* SIGINT/SIGTERM stop a move at once */
        return 0;
    }
    if (sp->kind == P_THRESHOLD) {
        struct search_opts o = {.threads = 1, .hash_mb = sp->hash, .depth = sp->depth,
                                .time_limit = sp->depth ? 0 : (sp->ms > 0 ? sp->ms : M->defms) / 1000,
                                .cpu_clock = M->cpu_clock, .threshold = true,
                                .stop = &match_stop};
        struct sow_error se;
        if (search_new(&M->rs, &o, &pl->s, &se) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", se.msg);
            return -1;
        }
        return 0;
    }
    if (sp->kind == P_CMD) {
        if (cmd_start(sp, pl, err, errlen) < 0) {
            player_close(pl);
            return -1;
        }
        /* Ponder true (--ponder): its bestmove names the reply to ponder on */
        fprintf(pl->to, "uci\nsetoption name Rules value %s\nsetoption name Pits value %d\n"
                        "setoption name Seeds value %d\n%sisready\n",
                M->rs.name, M->rs.pits, M->rs.seeds,
                M->ponder[who] ? "setoption name Ponder value true\n" : "");
        fflush(pl->to);
        double wait = MATCH_START_WAIT + M->grace;
        char line[4096], how[160], tail[220];
        int r;
        while ((r = cmd_line(pl, util_now() + wait, line, sizeof line)) == 1)
            if (!strncmp(line, "readyok", 7))
                return 0;
        if (r == 0 && cmd_end(pl, 1.0, how, sizeof how))
            ;
        else {
            cmd_end(pl, 0, NULL, 0);
            snprintf(how, sizeof how, r == -2 ? "was stopped" : r == -1 ?
                     "did not answer isready within %.1f s" : "closed its output", wait);
        }
        cmd_stderr_tail(pl, tail, sizeof tail);
        snprintf(err, (size_t)errlen, "player %c: '%s' %s before readyok%s%s", 'a' + who,
                 sp->cmd, how, tail[0] ? ": " : "", tail);
        player_close(pl);
        return -1;
    }
    return 0;
}

void player_close(struct player *pl)
{
    engine_free(pl->e);
    search_free(pl->s);
    pl->e = NULL;
    pl->s = NULL;
    if (pl->pid > 0 && pl->to) {
        fprintf(pl->to, "quit\n");
        fflush(pl->to);
    }
    cmd_end(pl, 0.5, NULL, 0); /* half a second to quit, then killed */
    if (pl->to)
        fclose(pl->to);
    if (pl->rfd >= 0)
        close(pl->rfd);
    if (pl->errf)
        fclose(pl->errf);
    pl->to = NULL;
    pl->rfd = -1;
    pl->errf = NULL;
}

void player_newgame(struct player *pl)
{
    if (pl->e)
        engine_clear(pl->e);
    if (pl->s)
        search_clear(pl->s);
    if (pl->to) {
        fprintf(pl->to, "ucinewgame\n");
        fflush(pl->to);
    }
}

/* The move of the player at position p (history hist[0..nh-1], the game
 * from its opening position `open` by moves mv[0..nm-1]).  SOW_MOVE_NONE if
 * the player failed. */
sow_move player_move(struct mctx *M, struct player *pl, const sow_position *p,
                     const sow_position *hist, int nh, const sow_position *open,
                     const sow_move *mv, int nm, const double left[2], char *why, size_t wlen)
{
    const struct ruleset *rs = &M->rs;
    const struct pspec *sp = pl->sp;
    double ms = sp->ms > 0 ? sp->ms : M->defms, soft = 0;
    int who = (int)(sp - M->spec);
    if (M->tc) { /* the clock's limits for this move (a SPEC under --tc gives no time) */
        struct timeman tm = timeman_move(left[who], M->tc_inc, 0);
        ms = 1000 * tm.hard;
        soft = tm.soft;
    }
    struct sow_movelist ml;
    rules_generate(rs, p, &ml);
    if (sp->kind == P_GREEDY) {
        int best = 0, bv = -1000;
        for (int i = 0; i < ml.n; i++) {
            int v = ml.c[i].captured[p->side] - ml.c[i].captured[!p->side];
            if (v > bv) {
                bv = v;
                best = i;
            }
        }
        return ml.c[best].move;
    }
    const struct book_entry *bt;
    if (sp->kind == P_SOW && M->have_book[who] && (bt = book_find(&M->book[who], rs, p))) {
        /* the choice among equal moves is a function of the game (its
         * opening and the position), not of the order games are played in */
        uint64_t rng = book_key(open) ^ book_key(p) ^ (uint64_t)(who + 1);
        return book_choose(&M->book[who], bt, 0, &rng);
    }
    if (sp->kind == P_SOW) {
        struct engine_limits lim = {.depth = sp->depth, .seconds = sp->depth ? 0 : ms / 1000,
                                    .soft = sp->depth ? 0 : soft, .cpu_clock = M->cpu_clock};
        struct engine_result r;
        int from = nh > ENGINE_MAX_HISTORY ? nh - ENGINE_MAX_HISTORY : 0;
        /* (engstr) the small levels solved in memory, before the clock
         * starts, as `sow engine` builds them on `position` (so cmd:sow
         * engine and sow: players get the same clock).  They are built once
         * per engine, up to the largest seed count met; inside
         * engine_search they count against the move's time: a jerin
         * opening of 12 seeds spent a "1 s" move on a loaded machine
         * building them, completed no iteration and played the first legal
         * move, a loss.  A fixed-depth search is the same either way. */
        engine_prepare(pl->e, p);
        engine_search(pl->e, p, hist + from, nh - from, &lim, &r);
        return r.best;
    }
    if (sp->kind == P_THRESHOLD) {
        struct search_result r;
        if (search_solve(pl->s, p, &r) < 0) {
            snprintf(why, wlen, "its search failed");
            return SOW_MOVE_NONE;
        }
        return r.best;
    }
    /* external program */
    if (pl->gone) {
        snprintf(why, wlen, "not running");
        return SOW_MOVE_NONE;
    }
    double limit;
    if (M->tc) /* the flag falls at -grace (play_game): no answer is waited for past it */
        limit = fmax(left[who] / 1000 + M->grace, 0);
    else /* its time, and the grace for pipes and a loaded machine */
        limit = ms / 1000 + M->grace;
    if (pl->pondering && nm > 0 && mv[nm - 1] == pl->pmove) {
        /* the reply it pondered on: its clock runs from now (UCI) */
        fprintf(pl->to, "ponderhit\n");
        pl->pondering = false;
        pl->phits++;
    } else {
        if (pl->pondering && cmd_unponder(M, pl, why, wlen) < 0)
            return SOW_MOVE_NONE;
        cmd_position(rs, pl, open, hist, mv, nm, p, SOW_MOVE_NONE);
        if (M->tc)
            cmd_go_clocks(M, pl, p->side, left, "");
        else
            fprintf(pl->to, "go movetime %.0f\n", ms);
    }
    fflush(pl->to); /* a write error (it is gone) shows as the end of its output */
    char tok[16];
    sow_move m = cmd_bestmove(M, pl, p, limit, tok, why, wlen);
    if (m != SOW_MOVE_NONE && rules_find_move(&ml, m) < 0) {
        snprintf(why, wlen, "the illegal move '%s'", tok);
        return SOW_MOVE_NONE;
    }
    return m;
}

void player_ponder(struct mctx *M, struct player *pl, const sow_position *p,
                   const sow_position *hist, const sow_position *open, const sow_move *mv,
                   int nm, const double left[2])
{
    const struct ruleset *rs = &M->rs;
    int who = (int)(pl->sp - M->spec);
    if (!M->ponder[who] || pl->gone || !pl->to || !pl->ptok[0])
        return;
    struct sow_movelist ml, after;
    rules_generate(rs, p, &ml);
    sow_move r = cmd_parse_move(rs, p, pl->ptok);
    int i = r == SOW_MOVE_NONE ? -1 : rules_find_move(&ml, r);
    if (i < 0)
        return; /* no reply named, or none legal: the game is over or it erred */
    rules_generate(rs, &ml.c[i].pos, &after);
    if (after.n == 0)
        return; /* the reply ends the game: nothing to think about */
    cmd_position(rs, pl, open, hist, mv, nm, p, r);
    if (M->tc)
        cmd_go_clocks(M, pl, ml.c[i].pos.side, left, "ponder ");
    else
        fprintf(pl->to, "go ponder movetime %.0f\n", pl->sp->ms > 0 ? pl->sp->ms : M->defms);
    fflush(pl->to);
    pl->pondering = true;
    pl->pmove = r;
    pl->ptries++;
}

void player_unponder(struct mctx *M, struct player *pl)
{
    char why[200];
    if (pl->pondering)
        cmd_unponder(M, pl, why, sizeof why);
}

int match_parse_spec(const char *s, struct pspec *sp, char *err, int errlen)
{
    memset(sp, 0, sizeof *sp);
    sp->threads = 1;
    sp->hash = 16;
    snprintf(sp->text, sizeof sp->text, "%s", s);
    if (!strncmp(s, "cmd:", 4)) {
        if (!s[4] || strlen(s + 4) >= sizeof sp->cmd) {
            snprintf(err, (size_t)errlen, "'%s': expected cmd:COMMAND", s);
            return -1;
        }
        sp->kind = P_CMD;
        snprintf(sp->cmd, sizeof sp->cmd, "%s", s + 4);
        return 0;
    }
    if (!strcmp(s, "greedy")) {
        sp->kind = P_GREEDY;
        return 0;
    }
    const char *rest;
    if (!strncmp(s, "sow", 3) && (!s[3] || s[3] == ':')) {
        sp->kind = P_SOW;
        rest = s[3] ? s + 4 : "";
    } else if (!strncmp(s, "threshold", 9) && (!s[9] || s[9] == ':')) {
        sp->kind = P_THRESHOLD;
        rest = s[9] ? s + 10 : "";
    } else {
        snprintf(err, (size_t)errlen, "player '%s': expected sow[:..], threshold[:..], greedy "
                 "or cmd:COMMAND", s);
        return -1;
    }
    static char buf[2048];
    char local[2048];
    (void)buf;
    snprintf(local, sizeof local, "%s", rest);
    char *save = NULL;
    for (char *kv = strtok_r(local, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, (size_t)errlen, "player '%s': '%s' is not KEY=VALUE", s, kv);
            return -1;
        }
        *eq = 0;
        const char *v = eq + 1;
        char *end;
        double x = strtod(v, &end);
        bool num = end != v && !*end;
        if (!strcmp(kv, "depth") && num && x >= 1 && x < ENGINE_MAX_PLY && x == (int)x)
            sp->depth = (int)x;
        else if (!strcmp(kv, "time") && num && x > 0 && x <= 1e7)
            sp->ms = x;
        else if (!strcmp(kv, "threads") && num && x >= 1 && x <= 256 && x == (int)x &&
                 sp->kind == P_SOW)
            sp->threads = (int)x;
        else if (!strcmp(kv, "hash") && num && x >= 1 && x <= 65536 && x == (int)x)
            sp->hash = (unsigned)x;
        else if (!strcmp(kv, "tables") && sp->kind == P_SOW)
            sp->tables = *v ? strdup(v) : ""; /* "": none (not the default path) */
        else if (!strcmp(kv, "tablecache") && num && x >= 1 && x <= 1 << 20 && x == (int)x &&
                 sp->kind == P_SOW)
            sp->table_cache = (long)x;
        else if (!strcmp(kv, "lmr") && num && (x == 0 || x == 1) && sp->kind == P_SOW)
            sp->lmr = x == 1 ? ENGINE_LMR_ON : ENGINE_LMR_OFF;
        else if (!strcmp(kv, "qs") && num && x >= 0 && x <= 16 && x == (int)x && sp->kind == P_SOW)
            sp->qdepth = (int)x;
        else if (!strcmp(kv, "swindle") && num && (x == 0 || x == 1) && sp->kind == P_SOW)
            sp->swindle = x == 1;
        else if (!strcmp(kv, "rootclosure") && num && x >= 0 && x <= 1e6 && x == (int)x &&
                 sp->kind == P_SOW)
            sp->root_closure = x ? 1000LL * (long long)x : -1;
        else if (!strcmp(kv, "solution") && sp->kind == P_SOW && *v)
            sp->solution = strdup(v);
        else if (!strcmp(kv, "book") && sp->kind == P_SOW && *v)
            sp->book = strdup(v);
        else if (!strcmp(kv, "weights") && sp->kind == P_SOW) {
            /* w1/.../w7 (commas would split the spec), or a weights file */
            char w[4096];
            snprintf(w, sizeof w, "%s", v);
            if (strspn(w, "0123456789+-/") == strlen(w))
                for (char *c = w; *c; c++)
                    if (*c == '/')
                        *c = ',';
            struct sow_error we;
            if (eval_parse_weights(w, &sp->w, &we) != SOW_OK) {
                snprintf(err, (size_t)errlen, "%s", we.msg);
                return -1;
            }
            sp->have_weights = true;
        } else {
            snprintf(err, (size_t)errlen, "player '%s': bad option '%s=%s'", s, kv, v);
            return -1;
        }
    }
    return 0;
}
