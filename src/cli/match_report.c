/* sow match: the Elo estimate of a score, and --resume's reading of an
 * earlier run's --out FILE (match.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "match.h"

double match_elo(double s)
{
    if (s <= 0)
        return -INFINITY;
    if (s >= 1)
        return INFINITY;
    return 400.0 * log10(s / (1.0 - s)); /* (0 at 1/2: +0.0, not -0.0) */
}

/* --resume: read the --out FILE of an earlier run of this match.  Its
 * header lines (every one kept in *heads) must carry this run's settings
 * (head, up to the version); each game line's opening must be the one
 * this run chose for that game; the games found are marked played. */
int match_resume_read(struct mctx *M, const char *path, const char *head, char **heads, char *err,
                       int errlen)
{
    FILE *f = match_open_input(path, err, errlen);
    if (!f)
        return -1;
    size_t hl = strlen(head), cap = 0, n = 0;
    *heads = NULL;
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0, found = 0, rc = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#') {
            if (strncmp(line, head, hl) || strncmp(line + hl, " (sow ", 6)) {
                snprintf(err, (size_t)errlen, "line %d: another match's settings: %.200s",
                         lineno, line);
                rc = -1;
                break;
            }
            size_t k = strlen(line);
            char *h = realloc(*heads, cap = n + k + 2);
            if (!h) {
                snprintf(err, (size_t)errlen, "out of memory");
                rc = -1;
                break;
            }
            *heads = h;
            memcpy(h + n, line, k);
            h[n + k] = '\n';
            h[n += k + 1] = 0;
            continue;
        }
        int g;
        char pos[SOW_POS_MAXLEN], want[SOW_POS_MAXLEN];
        const char *a = strstr(line, ") a=");
        double pts;
        if (!n || sscanf(line, "game %d opening %191s", &g, pos) != 2 || g < 1 ||
            g > M->games || !a || sscanf(a + 4, "%lf", &pts) != 1 ||
            (pts != 0 && pts != 0.5 && pts != 1)) {
            snprintf(err, (size_t)errlen, "line %d: %s", lineno,
                     n ? "not a game line of sow match" : "no header line of sow match first");
            rc = -1;
            break;
        }
        pos_format(&M->rs, &M->open[(g - 1) / 2], want, sizeof want);
        if (strcmp(pos, want)) {
            snprintf(err, (size_t)errlen, "line %d: game %d opened %.80s, this run chose %.80s",
                     lineno, g, pos, want);
            rc = -1;
            break;
        }
        if (M->text[g - 1]) {
            snprintf(err, (size_t)errlen, "line %d: game %d twice", lineno, g);
            rc = -1;
            break;
        }
        if (!(M->text[g - 1] = strdup(line))) {
            snprintf(err, (size_t)errlen, "out of memory");
            rc = -1;
            break;
        }
        M->score[g - 1] = pts;
        found++;
    }
    free(line);
    fclose(f);
    (void)cap;
    if (rc == 0 && !n) {
        snprintf(err, (size_t)errlen, "no header line of sow match");
        rc = -1;
    }
    if (rc < 0) {
        free(*heads);
        *heads = NULL;
        return -1;
    }
    fprintf(stderr, "sow match: resuming: %d of %d games in %s\n", found, M->games, path);
    return 0;
}

/* The Elo interval over the colour-swapped pairs (docs/engine.md
 * "Matches"): a pair's two games averaged are one sample (0, 1/4, 1/2,
 * 3/4 or 1), so what an opening gives the side that is South cancels
 * within its pair, where the per-game interval counts it as the players'
 * spread.  Every pair alike: the pairs show no spread of their own, and
 * the interval is the games' (se: its standard error of the mean score).
 * Nothing without a complete pair. */
static void print_pairs(const struct match_tally *t, double se)
{
    int np = 0;
    double ps = 0, ps2 = 0;
    for (int k = 0; k < 5; k++) {
        double x = k / 4.0;
        np += t->pair[k];
        ps += t->pair[k] * x;
        ps2 += t->pair[k] * x * x;
    }
    if (!np)
        return;
    double m = ps / np, v = ps2 / np - m * m;
    double e = 1.96 * (v > 0 ? sqrt(v / np) : se);
    printf("pairs    : %d (a's points in the two games 0 / 0.5 / 1 / 1.5 / 2: %d / %d / %d / %d / "
           "%d)\n",
           np, t->pair[0], t->pair[1], t->pair[2], t->pair[3], t->pair[4]);
    printf("elo pairs: %+.1f (95%%: %+.1f .. %+.1f)\n", match_elo(m), match_elo(m - e),
           match_elo(m + e));
}

/* --tc: the clock, and what the players had left of it as their games
 * ended (the games played in this run; resumed ones were not timed here):
 * how much of its time each one spent. */
static void print_clocks(const struct mctx *M)
{
    printf("clock    : %g ms a player a game, %g ms more a move (--tc)\n", M->tc_ms, M->tc_inc);
    int n = 0;
    double sum[2] = {0, 0}, least[2] = {0, 0};
    for (int g = 0; g < M->games; g++)
        if (M->tcdone[g]) {
            for (int k = 0; k < 2; k++) {
                sum[k] += M->tcleft[g][k];
                if (!n || M->tcleft[g][k] < least[k])
                    least[k] = M->tcleft[g][k];
            }
            n++;
        }
    if (n)
        printf("clock    : left as a game ended, a %.1f s on average (least %.1f s), b %.1f s "
               "(least %.1f s), over the %d games of this run\n",
               sum[0] / n / 1000, least[0] / 1000, sum[1] / n / 1000, least[1] / 1000, n);
}

/* The summary on stdout: the players, the games, the openings, the
 * result of a and its Elo difference over b with a 95% interval, over
 * the games and over the colour-swapped pairs. */
void match_print_report(const struct mctx *M, const struct match_tally *t, const char *openings,
                        double secs)
{
    int played = t->played;
    double sum = t->sum;
    double s = played ? sum / played : 0, var = played ? t->sum2 / played - s * s : 0;
    /* All games with one result: no spread to measure; count one more game
     * half won (the usual correction) so that the interval is not empty. */
    if (played && var <= 0) {
        double s1 = (sum + 0.5) / (played + 1);
        var = s1 * (1 - s1);
    }
    double se = played ? sqrt(var / played) : 0;
    printf("rules    : %s 2x%d\n", M->rs.name, M->rs.pits);
    printf("a        : %s\n", M->spec[0].text);
    printf("b        : %s\n", M->spec[1].text);
    if (M->cpu_clock)
        printf("clock    : CPU time of the thinking thread (--clock cpu)\n");
    if (M->tc)
        print_clocks(M);
    for (int k = 0; k < 2; k++) /* --ponder: how often the reply it pondered on came */
        if (M->ponder[k])
            printf("ponder   : %c pondered after %ld of its moves, and the opponent played the "
                   "reply it pondered on %ld times (%.1f%%), in this run's games\n", 'a' + k,
                   M->ptries[k], M->phits[k],
                   M->ptries[k] ? 100.0 * M->phits[k] / M->ptries[k] : 0.0);
    /* openings of a file: their moves are not known, so none are claimed */
    char plies[48] = "";
    if (!openings && M->maxoplies > M->oplies)
        snprintf(plies, sizeof plies, " of %d-%d moves", M->oplies, M->maxoplies);
    else if (!openings)
        snprintf(plies, sizeof plies, " of %d moves", M->oplies);
    printf("games    : %d (%d openings%s, colours swapped; %.0f s)\n", played, M->games / 2,
           plies, secs);
    if (openings)
        printf("openings : from %s\n", openings);
    else if (M->bsol)
        printf("openings : South within +-%g seeds: %d exact (%s), %d at depth %d (%ld "
               "candidates tried)\n",
               M->balance, M->nexact, M->bsol_path, M->games / 2 - M->nexact, M->bdepth,
               M->ncand);
    else if (M->balance >= 0)
        printf("openings : South within +-%g seeds at depth %d (%ld candidates tried)\n",
               M->balance, M->bdepth, M->ncand);
    else
        printf("openings : not checked for balance\n");
    printf("a W/D/L  : %d / %d / %d\n", t->w, t->d, t->l);
    printf("score a  : %.1f / %d (%.1f%%)\n", sum, played, played ? 100 * s : 0);
    printf("elo a-b  : %+.1f (95%%: %+.1f .. %+.1f)\n", match_elo(s), match_elo(s - 1.96 * se),
           match_elo(s + 1.96 * se));
    print_pairs(t, se);
}
