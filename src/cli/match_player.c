/* sow match: the players (match.h): a SPEC's text read into struct pspec,
 * and each worker's pair of players, engines in this process or programs
 * speaking the engine protocol (docs/engine.md "Protocol") over pipes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "match.h"
#include "sow/engine.h"
#include "sow/search.h"

/* ---- players ---- */

int player_open(struct mctx *M, int who, struct player *pl, char *err, int errlen)
{
    const struct pspec *sp = &M->spec[who];
    memset(pl, 0, sizeof *pl);
    pl->sp = sp;
    if (sp->kind == P_SOW) {
        struct engine_opts o = {.threads = sp->threads, .hash_mb = sp->hash, .tb = M->tb[who],
                                .weights = sp->have_weights ? &sp->w : NULL,
                                .solution = M->sol[who]};
        struct sow_error ee;
        if (engine_new(&M->rs, &o, &pl->e, &ee) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", ee.msg);
            return -1;
        }
        return 0;
    }
    if (sp->kind == P_THRESHOLD) {
        struct search_opts o = {.threads = 1, .hash_mb = sp->hash, .depth = sp->depth,
                                .time_limit = sp->depth ? 0 : (sp->ms > 0 ? sp->ms : M->defms) / 1000,
                                .cpu_clock = M->cpu_clock, .threshold = true};
        struct sow_error se;
        if (search_new(&M->rs, &o, &pl->s, &se) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", se.msg);
            return -1;
        }
        return 0;
    }
    if (sp->kind == P_CMD) {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
            snprintf(err, (size_t)errlen, "pipe: %s", strerror(errno));
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, (size_t)errlen, "fork: %s", strerror(errno));
            return -1;
        }
        if (pid == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[0]);
            close(in[1]);
            close(out[0]);
            close(out[1]);
            execl("/bin/sh", "sh", "-c", sp->cmd, (char *)NULL);
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        pl->pid = pid;
        pl->to = fdopen(in[1], "w");
        pl->from = fdopen(out[0], "r");
        if (!pl->to || !pl->from) {
            snprintf(err, (size_t)errlen, "fdopen failed");
            return -1;
        }
        fprintf(pl->to, "uci\nsetoption name Rules value %s\nsetoption name Pits value %d\n"
                        "setoption name Seeds value %d\nisready\n",
                M->rs.name, M->rs.pits, M->rs.seeds);
        fflush(pl->to);
        char line[4096];
        while (fgets(line, sizeof line, pl->from))
            if (!strncmp(line, "readyok", 7))
                return 0;
        snprintf(err, (size_t)errlen, "'%s' did not answer isready", sp->cmd);
        return -1;
    }
    return 0;
}

void player_close(struct player *pl)
{
    engine_free(pl->e);
    search_free(pl->s);
    if (pl->pid > 0) {
        fprintf(pl->to, "quit\n");
        fclose(pl->to);
        fclose(pl->from);
        waitpid(pl->pid, NULL, 0);
    }
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
                            const sow_move *mv, int nm)
{
    const struct ruleset *rs = &M->rs;
    const struct pspec *sp = pl->sp;
    double ms = sp->ms > 0 ? sp->ms : M->defms;
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
    if (sp->kind == P_SOW) {
        struct engine_limits lim = {.depth = sp->depth, .seconds = sp->depth ? 0 : ms / 1000,
                                    .cpu_clock = M->cpu_clock};
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
        if (search_solve(pl->s, p, &r) < 0)
            return SOW_MOVE_NONE;
        return r.best;
    }
    /* external program */
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, open, pos, sizeof pos);
    fprintf(pl->to, "position pos %s", pos);
    if (nm) {
        fprintf(pl->to, " moves");
        sow_position q = *open;
        for (int i = 0; i < nm; i++) {
            char name[SOW_MOVE_MAXLEN];
            move_format(rs, q.side, mv[i], name, sizeof name);
            fprintf(pl->to, " %s", name);
            struct sow_movelist m2;
            rules_generate(rs, &q, &m2);
            q = m2.c[rules_find_move(&m2, mv[i])].pos;
        }
    }
    if (sp->depth)
        fprintf(pl->to, "\ngo depth %d\n", sp->depth);
    else
        fprintf(pl->to, "\ngo movetime %.0f\n", ms);
    fflush(pl->to);
    char line[65536];
    while (fgets(line, sizeof line, pl->from)) {
        if (strncmp(line, "bestmove ", 9))
            continue;
        char *t = line + 9;
        t[strcspn(t, " \r\n")] = 0;
        sow_move m;
        if (move_parse(rs, p, t, &m, NULL) != SOW_OK) {
            /* oware letters */
            if (rs->family == SOW_OWARE && t[0] && !t[1] &&
                (t[0] - (p->side ? 'a' : 'A')) >= 0 && (t[0] - (p->side ? 'a' : 'A')) < rs->pits)
                m = (sow_move)(t[0] - (p->side ? 'a' : 'A'));
            else
                return SOW_MOVE_NONE;
        }
        return rules_find_move(&ml, m) >= 0 ? m : SOW_MOVE_NONE;
    }
    return SOW_MOVE_NONE;
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
        else if (!strcmp(kv, "tables") && sp->kind == P_SOW && *v)
            sp->tables = strdup(v);
        else if (!strcmp(kv, "solution") && sp->kind == P_SOW && *v)
            sp->solution = strdup(v);
        else if (!strcmp(kv, "weights") && sp->kind == P_SOW) {
            char w[256];
            snprintf(w, sizeof w, "%s", v);
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
