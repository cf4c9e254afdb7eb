/* sow moves / sow play */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ogn/ogn.h"

static const char moves_usage[] =
    "usage: sow moves [--rules R] [--pits N] [--seeds S] [--json] [POS]\n"
    "List every legal move of POS (default: the start) with the resulting position\n"
    "and the seeds each player captured during the move; if the game is over, say\n"
    "why and how the seeds left on the board are settled.\n"
    "JSON: {\"position\":P,\"over\":bool,\"moves\":[{\"move\":\"3A\",\"position\":P,\"captured\":[a,b]}],\n"
    "       \"end\":REASON,\"settlement\":[a,b]}   (end and settlement only when over)\n";

static void print_settlement(const struct ruleset *rs, const sow_position *p,
                             const struct sow_movelist *ml)
{
    (void)rs;
    printf("game over: %s\n", rules_end_name(ml->end));
    printf("settlement: A takes %d, B takes %d", ml->settle[0], ml->settle[1]);
    int left = rules_board_seeds(rs, p) - ml->settle[0] - ml->settle[1];
    if (left)
        printf(", %d go to nobody", left);
    printf("\nfinal score: A %d, B %d\n", p->store[0] + ml->settle[0], p->store[1] + ml->settle[1]);
}

int cmd_moves(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    bool json = false;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--json", CLI_FLAG, &json, 0, 0, NULL, "one JSON object (below)", 0, 0},
        {0}};
    const struct cli_spec spec = {"moves", moves_usage, opts, NULL, 1, "position"};
    int r = cli_parse(&spec, argc, argv, &g.pos, NULL);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (cli_game_setup("moves", &g))
        return CLI_BAD;
    struct sow_movelist ml;
    struct sow_relay_cache *cache = cli_relay_cache(&g.rs, 12, NULL);
    g.rs.generate(&g.rs, &g.p, &ml, cache, NULL);
    rules_cache_free(cache);
    char tok[SOW_POS_MAXLEN], mv[SOW_MOVE_MAXLEN];
    pos_format(&g.rs, &g.p, tok, sizeof tok);
    if (json) {
        printf("{\"position\":\"%s\",\"rules\":\"%s\",\"over\":%s,\"moves\":[", tok, g.rs.name,
               ml.n ? "false" : "true");
        for (int i = 0; i < ml.n; i++) {
            move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
            pos_format(&g.rs, &ml.c[i].pos, tok, sizeof tok);
            printf("%s{\"move\":\"%s\",\"position\":\"%s\",\"captured\":[%d,%d]}", i ? "," : "", mv,
                   tok, ml.c[i].captured[0], ml.c[i].captured[1]);
        }
        printf("]");
        if (!ml.n)
            printf(",\"end\":\"%s\",\"settlement\":[%d,%d]", rules_end_name(ml.end), ml.settle[0],
                   ml.settle[1]);
        printf(",\"endless\":%d}\n", ml.endless);
        return CLI_OK;
    }
    printf("position %s (%s 2x%d)\n", tok, g.rs.name, g.rs.pits);
    if (!ml.n) {
        print_settlement(&g.rs, &g.p, &ml);
        return CLI_OK;
    }
    printf("%-8s %-9s %s\n", "move", "captured", "position");
    for (int i = 0; i < ml.n; i++) {
        char cap[24];
        move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
        pos_format(&g.rs, &ml.c[i].pos, tok, sizeof tok);
        snprintf(cap, sizeof cap, "%d-%d", ml.c[i].captured[0], ml.c[i].captured[1]);
        printf("%-8s %-9s %s\n", mv, cap, tok);
    }
    if (ml.endless)
        printf("(%d move%s not listed: %s sowing never ends)\n", ml.endless, ml.endless > 1 ? "s" : "",
               ml.endless > 1 ? "their" : "its");
    return CLI_OK;
}

static const char play_usage[] =
    "usage: sow play [--rules R] [--pits N] [--seeds S] [--ogn] [POS] MOVE...\n"
    "Apply the moves in turn from POS (default: the start) and print each resulting\n"
    "position; the final position token stands alone on the last line.  Moves are\n"
    "named 3A (hole 3 of A), pass, or jerin's opening 2A+3A.  A position that\n"
    "repeats one earlier in the sequence ends the game (repetition rule).  --ogn\n"
    "prints the game as a record instead (OGN, docs/ogn.md: Aualé's format).\n";

/* The game as an OGN record on stdout.  0 or an exit status. */
static int print_ogn(const struct cli_game *g, const struct sow_child *steps, int nmoves)
{
    struct ogn_game *og = ogn_new(&g->rs, &g->p);
    struct sow_error e;
    enum sow_status st = og ? SOW_OK : SOW_E_NOMEM;
    for (int i = 0; st == SOW_OK && i < nmoves; i++)
        st = ogn_play(og, steps[i].move, &e);
    st = st ? st : ogn_update_result(og);
    char *s = st ? NULL : ogn_format(og, NULL);
    ogn_free(og);
    if (!s) { /* the moves were checked: only memory can fail */
        cli_bad("play", "out of memory");
        return CLI_FAIL;
    }
    fputs(s, stdout);
    free(s);
    return CLI_OK;
}

/* The game as text on stdout: each move, what it captured and the position
 * after it (hist[i + 1]), how a finished game is settled (repeated: the
 * last position repeats an earlier one), and the last position's token
 * alone on the last line. */
static void print_steps(const struct ruleset *rs, const sow_position *hist,
                        const struct sow_child *steps, int nmoves, bool repeated,
                        struct sow_relay_cache *cache)
{
    char mv[SOW_MOVE_MAXLEN], tok[SOW_POS_MAXLEN];
    for (int i = 0; i < nmoves; i++) {
        move_format(rs, hist[i].side, steps[i].move, mv, sizeof mv);
        pos_format(rs, &hist[i + 1], tok, sizeof tok);
        printf("%d. %-6s captured %d-%d  %s\n", i + 1, mv, steps[i].captured[0],
               steps[i].captured[1], tok);
    }
    const sow_position *last = &hist[nmoves];
    struct sow_movelist ml;
    rs->generate(rs, last, &ml, cache, NULL);
    if (repeated) {
        int s2[2];
        rules_repetition_settle2(rs, last, s2);
        printf("game over: position repeated; settlement: A takes %g, B takes %g\n", s2[0] / 2.0,
               s2[1] / 2.0);
    } else if (!ml.n) {
        print_settlement(rs, last, &ml);
    }
    pos_format(rs, last, tok, sizeof tok);
    printf("%s\n", tok);
}

int cmd_play(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    const char **args = calloc((size_t)argc + 1, sizeof *args), **moves = args;
    int nargs = 0, nmoves;
    if (!args)
        return CLI_FAIL;
    bool ogn = false;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--ogn", CLI_FLAG, &ogn, 0, 0, NULL, "print the game as an OGN record", 0, 0},
        {0}};
    const struct cli_spec spec = {"play", play_usage, opts, NULL, argc, NULL};
    int r = cli_parse(&spec, argc, argv, args, &nargs);
    if (r) {
        free(args);
        return r == CLI_HELP ? CLI_OK : r;
    }
    /* A position (it has a '/') may come first; the rest are moves. */
    for (int i = 0; i < nargs; i++)
        if (strchr(args[i], '/') && (i > 0 || g.pos)) {
            r = cli_bad("play", "the position must come once, before the moves ('%s')", args[i]);
            free(args);
            return r;
        } else if (strchr(args[i], '/')) {
            g.pos = args[i];
        }
    if (g.pos)
        moves++;
    nmoves = nargs - (g.pos ? 1 : 0);
    if (cli_game_setup("play", &g)) {
        free(args);
        return CLI_BAD;
    }
    if (!nmoves) {
        free(args);
        return cli_bad("play", "no moves given (see 'sow play --help')");
    }
    /* Work everything out first so that a bad move prints nothing but the error. */
    sow_position *hist = malloc(sizeof *hist * (size_t)(nmoves + 1));
    struct sow_child *steps = malloc(sizeof *steps * (size_t)nmoves);
    struct sow_relay_cache *cache = cli_relay_cache(&g.rs, 12, NULL);
    int rc = CLI_OK, repeated = -1;
    if (!hist || !steps) {
        rc = CLI_FAIL;
        goto out;
    }
    hist[0] = g.p;
    char mv[SOW_MOVE_MAXLEN];
    for (int i = 0; i < nmoves; i++) {
        struct sow_movelist ml;
        sow_position *cur = &hist[i];
        if (repeated >= 0) {
            rc = cli_bad("play", "move %d '%s': the game is over (position repeated after move %d)",
                         i + 1, moves[i], repeated);
            goto out;
        }
        /* The name first: generating the moves can take long where a relay
         * may never end, and a misspelt move must not wait for that. */
        sow_move m;
        struct sow_error e;
        enum sow_status st = move_parse(&g.rs, cur, moves[i], &m, &e);
        if (st != SOW_OK) {
            cli_bad("play", "move %d: %s", i + 1, e.msg);
            rc = cli_exit_code(st);
            goto out;
        }
        g.rs.generate(&g.rs, cur, &ml, cache, NULL);
        if (!ml.n) {
            rc = cli_bad("play", "move %d '%s': the game is over (%s)", i + 1, moves[i],
                         rules_end_name(ml.end));
            goto out;
        }
        int k = rules_find_move(&ml, m);
        if (k < 0) {
            char legal[256] = "";
            size_t o = 0;
            for (int j = 0; j < ml.n; j++) {
                move_format(&g.rs, cur->side, ml.c[j].move, mv, sizeof mv);
                o += (size_t)snprintf(legal + o, sizeof legal - o, " %s", mv);
            }
            rc = cli_bad("play", "move %d '%s' is not legal here (legal:%s)", i + 1, moves[i], legal);
            goto out;
        }
        steps[i] = ml.c[k];
        hist[i + 1] = ml.c[k].pos;
        for (int j = 0; j <= i; j++)
            if (rules_same_position(&hist[j], &hist[i + 1]))
                repeated = i + 1;
    }
    if (ogn)
        rc = print_ogn(&g, steps, nmoves);
    else
        print_steps(&g.rs, hist, steps, nmoves, repeated >= 0, cache);
out:
    rules_cache_free(cache);
    free(hist);
    free(steps);
    free(args);
    return rc;
}
