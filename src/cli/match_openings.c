/* sow match: the games' openings (match.h), balanced by the engine's
 * estimate or a solution file's exact values, or read from a file
 * (docs/engine.md "Openings"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "match.h"
#include "sow/engine.h"
#include "sow/search.h"
#include "util.h"

/* ---- openings ---- */

/* Candidate c: K pseudo-random moves from the start, never into a finished
 * game; with `quiet`, each a move that captures nothing where there is one
 * (unbalanced openings: relay games capture a lot in a few random moves).  The
 * generator is seeded per candidate (splitmix64) so that candidates do not
 * share their low bits.  *made: the moves made (fewer than K where every
 * move tried ended the game). */
static sow_position opening_candidate(const struct ruleset *rs, int c, int plies, bool quiet_only,
                                      int *made)
{
    sow_position p = rules_start(rs);
    uint64_t x = (uint64_t)(c + 1) * 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    if (!x)
        x = 1;
    struct sow_movelist ml, m2;
    *made = 0;
    for (int i = 0; i < plies; i++) {
        rules_generate(rs, &p, &ml);
        if (!ml.n)
            break;
        int quiet[SOW_MAX_PITS + 1], nq = 0;
        for (int j = 0; j < ml.n; j++)
            if (quiet_only && !ml.c[j].captured[0] && !ml.c[j].captured[1])
                quiet[nq++] = j;
        for (int tries = 0; tries < 8; tries++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int j = nq ? quiet[(x >> 32) % (uint64_t)nq] : (int)((x >> 32) % (uint64_t)ml.n);
            const sow_position *q = &ml.c[j].pos;
            rules_generate(rs, q, &m2);
            if (m2.n) {
                p = *q;
                ++*made;
                break;
            }
        }
    }
    return p;
}

/* The expected final margin of South (A) over North in centi-seeds: the
 * stores plus the engine's score of the position (mover's view). */
static int opening_margin(const sow_position *p, int score)
{
    int s = 100 * (p->store[0] - p->store[1]);
    return p->side == SOW_A ? s + score : s - score;
}

/* The games' openings, M->open[0..games/2-1]: distinct candidates; with
 * --balance, only those whose margin for South, estimated by a fixed-depth
 * search of the engine (one thread, default weights, no tables: the same
 * openings for every pair of players), lies within +-balance seeds.  In the
 * relay games a few random moves often decide the game (docs/engine.md
 * "Openings"): a pair of games on such an opening scores 1-1 whoever plays,
 * which measures nothing.  0, or a failure message in err. */
int match_choose_openings(struct mctx *M, char *err, int errlen)
{
    const struct ruleset *rs = &M->rs;
    int need = M->games / 2, have = 0;
    /* (engstr) The candidates' budget, in units: a candidate costs 1, one
     * judged by the search costs `scale`.  Without a solution file scale is
     * 1: a thousand candidates per opening length, as before.  With one,
     * exact look-ups cost about 1/1000 of a depth-10 search, so twenty
     * times as many candidates keep their K moves (in jerin only 5 of the
     * first 1000 distinct openings of 4-5 moves lie within 2 seeds exactly,
     * docs/engine.md; longer openings are endings), while candidates the
     * file lacks still cost a thousandth of a length each. */
    const long scale = M->bsol ? 20 : 1, per = 1000 * scale;
    long maxu = per + per / 5 * need, units = 0;
    struct engine *e = NULL;
    double t0 = util_now(), last = t0;
    long c;
    for (c = 0; units < maxu && have < need && !match_stop; c++) {
        /* K moves; when those run short (distinct and balanced ones are
         * few in some relay games), one more per thousand candidates */
        int plies = M->oplies + (M->balance < 0 ? 0 : (int)(units / per));
        units++;
        int made;
        sow_position p = opening_candidate(rs, (int)c, plies, M->balance < 0, &made);
        struct sow_movelist ml;
        rules_generate(rs, &p, &ml);
        if (!ml.n)
            continue;
        bool dup = false;
        for (int i = 0; i < have && !dup; i++)
            dup = rules_same_position(&M->open[i], &p) &&
                  M->open[i].store[0] == p.store[0] && M->open[i].store[1] == p.store[1];
        if (dup)
            continue;
        int margin = 0;
        bool exact = false;
        /* (engstr) the exact value where the solution file holds it: the
         * opening is the game's first position (no history before it), so
         * the file's V is its exact value (engine_know.h) */
        if (M->bsol) {
            struct search_result sr;
            int vals[SOW_MAX_PITS + 1];
            if (search_solution_answer(M->bsol, &p, &sr, vals) >= 0) {
                margin = opening_margin(&p, 100 * sr.value);
                exact = true;
                if (abs(margin) > 100 * M->balance)
                    continue;
            }
        }
        if (!exact && M->balance >= 0) {
            units += scale - 1;
            if (!e) {
                struct engine_opts o = {.threads = 1, .hash_mb = 16};
                struct sow_error ee;
                if (engine_new(rs, &o, &e, &ee) != SOW_OK) {
                    snprintf(err, (size_t)errlen, "%s", ee.msg);
                    return -1;
                }
            }
            struct engine_limits lim = {.depth = M->bdepth};
            struct engine_result r;
            engine_clear(e);
            engine_search(e, &p, NULL, 0, &lim, &r);
            margin = opening_margin(&p, r.info.score);
            if (abs(margin) > 100 * M->balance)
                continue;
        }
        if (plies > M->maxoplies)
            M->maxoplies = plies;
        M->open[have] = p;
        M->oexact[have] = exact;
        M->omoves[have] = made;
        M->nexact += exact;
        M->omargin[have++] = margin;
        double now = util_now();
        if (M->balance >= 0 && now - last >= 2) {
            last = now;
            double eta = (now - t0) / have * (need - have);
            fprintf(stderr, "sow match: openings %d/%d (%ld candidates), ETA %.0f s\n", have,
                    need, c + 1, eta);
        }
    }
    engine_free(e);
    M->have_margin = M->balance >= 0;
    if (match_stop)
        return -1;
    if (have < need) {
        snprintf(err, (size_t)errlen,
                 "only %d of %d openings within --balance %g found in %ld candidates; "
                 "raise --balance or change --opening-plies", have, need, M->balance, c);
        return -1;
    }
    M->ncand = c;
    return 0;
}

FILE *match_open_input(const char *path, char *why, int whylen)
{
    int fd;
    struct sow_error fe;
    if (fio_open_input(path, &fd, &fe) != SOW_OK) {
        /* fileio's messages begin with the path, which the callers name */
        const char *m = fe.msg;
        size_t n = strlen(path);
        if (!strncmp(m, path, n) && m[n] == ':' && m[n + 1] == ' ')
            m += n + 2;
        snprintf(why, (size_t)whylen, "%s", m);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, (size_t)whylen, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

/* Openings from a file (--openings): one position per line, text after
 * '#' ignored, blank lines skipped; the first games/2 are used as given. */
int match_read_openings(struct mctx *M, const char *path, char *err, int errlen)
{
    char why[300];
    FILE *f = match_open_input(path, why, sizeof why);
    if (!f) {
        snprintf(err, (size_t)errlen, "--openings %s: %s", path, why);
        return -1;
    }
    char *line = NULL; /* (getline: a long comment is one line, not several) */
    size_t lcap = 0;
    int have = 0, ln = 0, need = M->games / 2, rc = 0;
    while (have < need && getline(&line, &lcap, f) > 0) {
        ln++;
        line[strcspn(line, "#\r\n")] = 0;
        char *a = line, *b;
        while (*a == ' ' || *a == '\t')
            a++;
        for (b = a + strlen(a); b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
            b[-1] = 0;
        if (!*a)
            continue;
        struct sow_error pe;
        struct sow_movelist ml;
        if (pos_parse(&M->rs, a, &M->open[have], &pe) != SOW_OK) {
            snprintf(err, (size_t)errlen, "--openings %s line %d: %s", path, ln, pe.msg);
            rc = -1;
            break;
        }
        rules_generate(&M->rs, &M->open[have], &ml);
        if (!ml.n) {
            snprintf(err, (size_t)errlen, "--openings %s line %d: the game is over there", path,
                     ln);
            rc = -1;
            break;
        }
        M->omargin[have++] = 0;
    }
    free(line);
    fclose(f);
    if (rc)
        return rc;
    if (have < need) {
        snprintf(err, (size_t)errlen, "--openings %s: %d positions, %d games need %d", path, have,
                 M->games, need);
        return -1;
    }
    M->ncand = have;
    M->maxoplies = M->oplies;
    return 0;
}
