/* Position and move notation: the one place that parses and formats them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/position.h"
#include "sow/status.h"

/* Every error here is bad input; messages quote the input, and sow_fail
 * keeps them one printable line. */
#define BAD(...) sow_fail(e, SOW_E_INPUT, __VA_ARGS__)

/* Parse one row "n,n,...,n" ending at '/' or NUL: *holes = holes read. */
static enum sow_status parse_row(const char **sp, uint8_t *out, int max, const char *which,
                                 int *holes, struct sow_error *e)
{
    const char *s = *sp;
    int n = 0;
    for (;;) {
        if (!isdigit((unsigned char)*s)) {
            if (!*s)
                return BAD("%s row, hole %d: expected a seed count, found the end", which,
                           n + 1);
            return BAD("%s row, hole %d: expected a seed count, found '%c'", which, n + 1, *s);
        }
        long v = 0;
        int digits = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (*s++ - '0');
            if (++digits > 3 || v > SOW_MAX_SEEDS)
                return BAD("%s row, hole %d: more than %d seeds", which, n + 1, SOW_MAX_SEEDS);
        }
        if (n == max)
            return BAD("%s row: more than %d holes", which, max);
        if (out)
            out[n] = (uint8_t)v;
        n++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '/' || *s == 0)
            break;
        return BAD("%s row, hole %d: unexpected '%c'", which, n, *s);
    }
    *sp = s;
    *holes = n;
    return SOW_OK;
}

enum sow_status pos_token_pits(const char *s, int *pits, struct sow_error *e)
{
    return parse_row(&s, NULL, SOW_MAX_PITS, "A", pits, e);
}

enum sow_status pos_parse(const struct ruleset *rs, const char *s, sow_position *out,
                          struct sow_error *e)
{
    sow_position p;
    memset(&p, 0, sizeof p);
    uint8_t row[SOW_MAX_PITS];
    int na = 0, nb = 0; /* set by parse_row when it returns SOW_OK */
    enum sow_status st = parse_row(&s, row, SOW_MAX_PITS, "A", &na, e);
    if (st != SOW_OK)
        return st;
    if (na != rs->pits)
        return BAD("A row: %d holes, %s on 2x%d needs %d", na, rs->name, rs->pits, rs->pits);
    memcpy(p.board.h, row, (size_t)na);
    if (*s != '/')
        return BAD("B row: missing (expected '/' after A's %d holes)", na);
    s++;
    if ((st = parse_row(&s, row, SOW_MAX_PITS, "B", &nb, e)) != SOW_OK)
        return st;
    if (nb != na)
        return BAD("B row: %d holes but A row has %d", nb, na);
    memcpy(p.board.h + na, row, (size_t)nb);
    if (*s != '/')
        return BAD("side: missing (expected '/A' or '/B' after the rows)");
    s++;
    if ((*s != 'A' && *s != 'B') || (s[1] != '/' && s[1] != 0))
        return BAD("side: expected 'A' or 'B', found '%.8s'", s);
    p.side = *s == 'A' ? SOW_A : SOW_B;
    s++;
    if (*s == '/') {
        s++;
        for (int i = 0; i < 2; i++) {
            if (!isdigit((unsigned char)*s))
                return BAD("captured: expected SA-SB (two counts), found '%.8s'", s);
            long v = 0;
            while (isdigit((unsigned char)*s)) {
                v = v * 10 + (*s++ - '0');
                if (v > 65535)
                    return BAD("captured: count above 65535");
            }
            p.store[i] = (uint16_t)v;
            if (i == 0 && *s++ != '-')
                return BAD("captured: expected SA-SB, e.g. 0-0");
        }
        if (*s == '/') {
            s++;
            if (strcmp(s, "-") == 0)
                p.state = SOW_STATE_NONE;
            else if (strcmp(s, "A") == 0)
                p.state = SOW_STATE_A;
            else if (strcmp(s, "B") == 0)
                p.state = SOW_STATE_B;
            else if (strcmp(s, "open") == 0)
                p.state = SOW_STATE_OPEN;
            else
                return BAD("state: expected '-', 'A', 'B' or 'open', found '%.12s'", s);
            s += strlen(s);
        }
        if (*s)
            return BAD("captured: unexpected '%.8s' after SA-SB", s);
    } else if (*s) {
        return BAD("side: unexpected '%.8s' after the side", s);
    }
    if ((st = rules_validate(rs, &p, e)) != SOW_OK)
        return st;
    /* Captures move seeds from the board to the 16-bit stores: bounding the
     * total keeps every store of every later position in range. */
    if (p.store[0] + p.store[1] + rules_board_seeds(rs, &p) > 65535)
        return BAD("captured: %d-%d plus %d seeds on the board exceed 65535 in all",
                   p.store[0], p.store[1], rules_board_seeds(rs, &p));
    *out = p;
    return SOW_OK;
}

int pos_format(const struct ruleset *rs, const sow_position *p, char *buf, size_t len)
{
    static const char *const states[] = {"-", "A", "B", "open"};
    size_t o = 0;
    for (int i = 0; i < rs->holes; i++)
        o += (size_t)snprintf(buf + o, len > o ? len - o : 0, "%d%s", p->board.h[i],
                              i == rs->pits - 1 ? "/" : (i == rs->holes - 1 ? "" : ","));
    o += (size_t)snprintf(buf + o, len > o ? len - o : 0, "/%c/%d-%d/%s", p->side ? 'B' : 'A',
                          p->store[0], p->store[1], states[p->state & 3]);
    return (int)o;
}

enum sow_status move_parse(const struct ruleset *rs, const sow_position *p, const char *s,
                           sow_move *out, struct sow_error *e)
{
    if (strcmp(s, "pass") == 0) {
        *out = SOW_MOVE_PASS;
        return SOW_OK;
    }
    char side = p->side ? 'B' : 'A';
    int k1 = 0, k2 = 0, n = 0;
    char s1 = 0, s2 = 0, extra = 0;
    if (sscanf(s, "%3d%c+%3d%c%c", &k1, &s1, &k2, &s2, &extra) == 4 && strchr(s, '+')) {
        if (!isdigit((unsigned char)s[0]) || s1 != side || s2 != side)
            return BAD("move '%s': a double move names two holes of %c, e.g. 2%c+3%c",
                       s, side, side, side);
        if (k2 != k1 + 1 || k1 < 1 || k2 > rs->pits)
            return BAD("move '%s': the two holes must be adjacent, k and k+1 in 1..%d",
                       s, rs->pits);
        *out = (sow_move)(SOW_MOVE_DOUBLE | (k1 - 1));
        return SOW_OK;
    }
    if (sscanf(s, "%3d%c%n", &k1, &s1, &n) == 2 && isdigit((unsigned char)s[0]) && s[n] == 0) {
        if (s1 != 'A' && s1 != 'B')
            return BAD("move '%s': expected a hole like 3%c, or 'pass'", s, side);
        if (s1 != side)
            return BAD("move '%s': it is %c's turn", s, side);
        if (k1 < 1 || k1 > rs->pits)
            return BAD("move '%s': hole must be 1..%d", s, rs->pits);
        *out = (sow_move)(k1 - 1);
        return SOW_OK;
    }
    return BAD("move '%s': expected a hole like 3%c, 'pass' or a double like 2%c+3%c",
               s, side, side, side);
}

void move_format(const struct ruleset *rs, int side, sow_move m, char *buf, size_t len)
{
    (void)rs;
    char c = side ? 'B' : 'A';
    if (m == SOW_MOVE_PASS)
        snprintf(buf, len, "pass");
    else if (m & SOW_MOVE_DOUBLE)
        snprintf(buf, len, "%d%c+%d%c", (m & 0x3F) + 1, c, (m & 0x3F) + 2, c);
    else
        snprintf(buf, len, "%d%c", m + 1, c);
}

void pos_draw(FILE *f, const struct ruleset *rs, const sow_position *p)
{
    int P = rs->pits;
    fprintf(f, "     ");
    for (int k = P; k >= 1; k--)
        fprintf(f, "%4d", k);
    fprintf(f, "\n  A  ");
    for (int k = P; k >= 1; k--)
        fprintf(f, "%4d", p->board.h[k - 1]);
    fprintf(f, "   captured %d%s\n  B  ", p->store[0], p->side == SOW_A ? "   <- to move" : "");
    for (int k = 1; k <= P; k++)
        fprintf(f, "%4d", p->board.h[P + k - 1]);
    fprintf(f, "   captured %d%s\n     ", p->store[1], p->side == SOW_B ? "   <- to move" : "");
    for (int k = 1; k <= P; k++)
        fprintf(f, "%4d", k);
    fprintf(f, "\n");
    if (rs->family == SOW_DARRA)
        fprintf(f, "  last capture: %s\n",
                p->state == SOW_STATE_A ? "A" : p->state == SOW_STATE_B ? "B" : "none yet");
    if (rs->family == SOW_JERIN)
        fprintf(f, "  opening double move: %s\n", p->state == SOW_STATE_OPEN ? "due" : "played");
    fprintf(f, "  seeds on board %d, rules %s 2x%d\n", rules_board_seeds(rs, p), rs->name, P);
}
