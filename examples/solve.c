/* A small program over the installed libsow (README "Building against
 * libsow"): parse a position, list its moves, play one, solve exactly.
 *
 *   cc solve.c $(pkg-config --cflags --libs sow) -o solve
 *   ./solve [RULES [POSITION [MOVE]]]      default: awari, a small endgame, no move
 *
 * Prints the position, each legal move with the position it leads to, then
 * (after MOVE, if given) the exact value, the best move and the principal
 * variation.  Exit status 2 on bad input, 1 if the solve fails.
 */
#include <stdio.h>
#include <string.h>

#include <sow/sow.h> /* the whole public API */

int main(int argc, char **argv)
{
    const char *rules = argc > 1 ? argv[1] : "awari";
    const char *token = argc > 2 ? argv[2] : "0,0,1,2,0,3/1,0,0,0,1,0/A";
    struct sow_error e; /* errors are values: sow/status.h */

    /* The board size comes from the position token. */
    int pits;
    struct ruleset rs;
    sow_position p;
    if (pos_token_pits(token, &pits, &e) != SOW_OK ||
        rules_init(&rs, rules, pits, -1, &e) != SOW_OK ||
        pos_parse(&rs, token, &p, &e) != SOW_OK) {
        fprintf(stderr, "solve: %s\n", e.msg); /* all bad input (SOW_E_INPUT) */
        return 2;
    }

    char buf[SOW_POS_MAXLEN], name[SOW_MOVE_MAXLEN];
    struct sow_movelist ml;
    rules_generate(&rs, &p, &ml);
    pos_format(&rs, &p, buf, sizeof buf);
    printf("libsow %s, %s 2x%d\nposition %s\n", sow_version(), rs.name, rs.pits, buf);
    for (int i = 0; i < ml.n; i++) {
        move_format(&rs, p.side, ml.c[i].move, name, sizeof name);
        pos_format(&rs, &ml.c[i].pos, buf, sizeof buf);
        printf("  move %-4s -> %s\n", name, buf);
    }

    if (argc > 3) { /* play a move by name */
        sow_move m;
        int i = -1;
        if (move_parse(&rs, &p, argv[3], &m, &e) == SOW_OK)
            i = rules_find_move(&ml, m);
        else
            fprintf(stderr, "solve: %s\n", e.msg);
        if (i < 0) {
            fprintf(stderr, "solve: move '%s' is not legal here\n", argv[3]);
            return 2;
        }
        p = ml.c[i].pos;
        pos_format(&rs, &p, buf, sizeof buf);
        printf("after %s: %s\n", argv[3], buf);
    }

    /* Exact mode: depth 0, no time limit; one thread. */
    struct search_opts o = {.threads = 1, .hash_mb = 16};
    struct search_ctx *s;
    if (search_new(&rs, &o, &s, &e) != SOW_OK) {
        fprintf(stderr, "solve: %s\n", e.msg);
        return 1;
    }
    struct search_result r;
    if (search_solve(s, &p, &r) != SOW_OK) {
        const struct sow_error *why = search_last_error(s);
        fprintf(stderr, "solve: %s: %s\n", sow_status_name(why->status), why->msg);
        search_free(s);
        return 1;
    }
    printf("value %d\n", r.value);
    if (r.best != SOW_MOVE_NONE) {
        move_format(&rs, p.side, r.best, name, sizeof name);
        printf("best %s\npv", name);
        sow_position q = p;
        for (int k = 0; k < r.pv_len; k++) { /* each PV move named in its own position */
            struct sow_movelist qm;
            rules_generate(&rs, &q, &qm);
            int i = rules_find_move(&qm, r.pv[k]);
            if (i < 0)
                break;
            move_format(&rs, q.side, r.pv[k], name, sizeof name);
            printf(" %s", name);
            q = qm.c[i].pos;
        }
        printf("\n");
    }
    search_free(s);
    return 0;
}
