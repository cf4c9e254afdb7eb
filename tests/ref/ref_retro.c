/* Reference retrograde analysis: threshold iteration to fixed points.
 * Deliberately plain; see ref_retro.h. */
#include <stdlib.h>
#include <string.h>

#include "ref_retro.h"

#define NO_EXIT (-1000)
#define MAXK (SOW_MAX_HOLES + 1)

struct rlevel {
    int count;
    unsigned char *keys;  /* count * keylen: state, then the holes (normalised) */
    int *best;            /* best exit value, NO_EXIT if none */
    int *nkid, **kid;     /* in-level children */
    int *lo, *hi, *value;
};

struct ref_retro {
    enum sow_family fam;
    int pits, holes, max, keylen;
    struct rlevel *lv;
};

/* Normalise: the mover's row first, darra's state relative (A = the mover). */
static void normalise(const struct ref_retro *r, const struct ref_pos *p, unsigned char *key)
{
    int N = r->pits, st = p->state;
    if (p->side == 1 && (st == SOW_STATE_A || st == SOW_STATE_B))
        st = st == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
    key[0] = (unsigned char)st;
    for (int i = 0; i < 2 * N; i++)
        key[1 + i] = (unsigned char)p->hole[p->side == 0 ? i : (i + N) % (2 * N)];
}

static int find(const struct ref_retro *r, int n, const unsigned char *key)
{
    const struct rlevel *L = &r->lv[n];
    int a = 0, b = L->count - 1;
    while (a <= b) {
        int m = (a + b) / 2;
        int c = memcmp(L->keys + (size_t)m * r->keylen, key, (size_t)r->keylen);
        if (c == 0)
            return m;
        if (c < 0)
            a = m + 1;
        else
            b = m - 1;
    }
    return -1;
}

static void key_pos(const struct ref_retro *r, const unsigned char *key, struct ref_pos *p)
{
    memset(p, 0, sizeof *p);
    p->pits = r->pits;
    p->side = 0;
    p->state = key[0];
    for (int i = 0; i < r->holes; i++)
        p->hole[i] = key[1 + i];
}

/* All boards of n seeds, in increasing key order (recursion, small first). */
static void enumerate(struct ref_retro *r, struct rlevel *L, unsigned char *key, int i, int left)
{
    if (i == r->holes - 1) {
        key[1 + i] = (unsigned char)left;
        memcpy(L->keys + (size_t)L->count * r->keylen, key, (size_t)r->keylen);
        L->count++;
        return;
    }
    for (int v = 0; v <= left; v++) {
        key[1 + i] = (unsigned char)v;
        enumerate(r, L, key, i + 1, left - v);
    }
}

static long choose(int a, int b)
{
    long c = 1;
    for (int i = 1; i <= b; i++)
        c = c * (a - b + i) / i;
    return c;
}

static int cycle_value(const struct ref_retro *r, const struct ref_pos *p)
{
    if (r->fam == SOW_AWARI)
        return 0;
    int own = 0, other = 0;
    for (int i = 0; i < r->pits; i++) {
        own += p->hole[p->side * r->pits + i];
        other += p->hole[(1 - p->side) * r->pits + i];
    }
    return own - other;
}

static int solve_level(struct ref_retro *r, int n)
{
    struct rlevel *L = &r->lv[n];
    int states[3], ns = 0;
    states[ns++] = SOW_STATE_NONE;
    if (r->fam == SOW_DARRA) {
        states[ns++] = SOW_STATE_A;
        states[ns++] = SOW_STATE_B;
    }
    long boards = choose(n + r->holes - 1, r->holes - 1);
    L->keys = malloc((size_t)(boards * ns) * (size_t)r->keylen);
    if (!L->keys)
        return -1;
    unsigned char key[MAXK];
    for (int s = 0; s < ns; s++) {
        key[0] = (unsigned char)states[s];
        enumerate(r, L, key, 0, n);
    }
    int C = L->count;
    L->best = malloc(sizeof(int) * (size_t)C);
    L->nkid = calloc((size_t)C, sizeof(int));
    L->kid = calloc((size_t)C, sizeof(int *));
    L->lo = malloc(sizeof(int) * (size_t)C);
    L->hi = malloc(sizeof(int) * (size_t)C);
    L->value = malloc(sizeof(int) * (size_t)C);
    if (!L->best || !L->nkid || !L->kid || !L->lo || !L->hi || !L->value)
        return -1;
    struct ref_list *ml = malloc(sizeof *ml);
    for (int i = 0; i < C; i++) {
        struct ref_pos p;
        key_pos(r, L->keys + (size_t)i * r->keylen, &p);
        ref_generate(r->fam, &p, ml);
        L->best[i] = NO_EXIT;
        if (ml->n == 0)
            L->best[i] = ml->settle[0] - ml->settle[1];
        L->kid[i] = malloc(sizeof(int) * (size_t)(ml->n ? ml->n : 1));
        for (int k = 0; k < ml->n; k++) {
            struct ref_child *c = &ml->c[k];
            int cap = c->captured[0] + c->captured[1];
            unsigned char ck[MAXK];
            normalise(r, &c->pos, ck);
            if (cap == 0) {
                int q = find(r, n, ck);
                if (q < 0)
                    abort();
                L->kid[i][L->nkid[i]++] = q;
            } else {
                int q = find(r, n - cap, ck);
                if (q < 0)
                    abort();
                int e = c->captured[0] - c->captured[1] - r->lv[n - cap].value[q];
                if (e > L->best[i])
                    L->best[i] = e;
            }
        }
    }
    free(ml);
    /* For every t: Att = "mover forces an exit >= t", Dn = "mover is forced
     * to <= -t", least fixed points by passes until nothing changes. */
    char *att = malloc((size_t)C), *dn = malloc((size_t)C);
    for (int i = 0; i < C; i++) {
        L->lo[i] = -n;
        L->hi[i] = n;
    }
    for (int t = -n; t <= n; t++) {
        memset(att, 0, (size_t)C);
        memset(dn, 0, (size_t)C);
        for (int changed = 1; changed;) {
            changed = 0;
            for (int i = 0; i < C; i++) {
                if (!att[i]) {
                    int ok = L->best[i] != NO_EXIT && L->best[i] >= t;
                    for (int k = 0; k < L->nkid[i] && !ok; k++)
                        ok = dn[L->kid[i][k]];
                    if (ok)
                        att[i] = 1, changed = 1;
                }
                if (!dn[i]) {
                    int ok = L->best[i] == NO_EXIT || L->best[i] <= -t;
                    for (int k = 0; k < L->nkid[i] && ok; k++)
                        ok = att[L->kid[i][k]];
                    if (ok)
                        dn[i] = 1, changed = 1;
                }
            }
        }
        for (int i = 0; i < C; i++) {
            if (att[i] && t > L->lo[i])
                L->lo[i] = t;      /* lo = max{t : in W_t} */
            if (dn[i] && -t < L->hi[i])
                L->hi[i] = -t;     /* hi = min{u : in L_u}, u = -t */
        }
    }
    free(att);
    free(dn);
    for (int i = 0; i < C; i++) {
        struct ref_pos p;
        key_pos(r, L->keys + (size_t)i * r->keylen, &p);
        int c = cycle_value(r, &p);
        L->value[i] = c < L->lo[i] ? L->lo[i] : c > L->hi[i] ? L->hi[i] : c;
    }
    return 0;
}

struct ref_retro *ref_retro_solve(enum sow_family fam, int pits, int max_level)
{
    struct ref_retro *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fam = fam;
    r->pits = pits;
    r->holes = 2 * pits;
    r->max = max_level;
    r->keylen = 1 + r->holes;
    r->lv = calloc((size_t)max_level + 1, sizeof *r->lv);
    if (!r->lv) {
        free(r);
        return NULL;
    }
    for (int n = 0; n <= max_level; n++)
        if (solve_level(r, n) < 0) {
            r->max = n;
            ref_retro_free(r);
            return NULL;
        }
    return r;
}

void ref_retro_free(struct ref_retro *r)
{
    if (!r)
        return;
    for (int n = 0; n <= r->max; n++) {
        struct rlevel *L = &r->lv[n];
        for (int i = 0; L->kid && i < L->count; i++)
            free(L->kid[i]);
        free(L->kid);
        free(L->keys);
        free(L->best);
        free(L->nkid);
        free(L->lo);
        free(L->hi);
        free(L->value);
    }
    free(r->lv);
    free(r);
}

int ref_retro_count(const struct ref_retro *r, int n)
{
    return n < 0 || n > r->max ? 0 : r->lv[n].count;
}

void ref_retro_get(const struct ref_retro *r, int n, int i, struct ref_pos *p, int *value, int *lo,
                   int *hi)
{
    const struct rlevel *L = &r->lv[n];
    key_pos(r, L->keys + (size_t)i * r->keylen, p);
    *value = L->value[i];
    *lo = L->lo[i];
    *hi = L->hi[i];
}

int ref_retro_value(const struct ref_retro *r, const struct ref_pos *p)
{
    int n = 0;
    for (int i = 0; i < r->holes; i++)
        n += p->hole[i];
    if (n > r->max || (r->fam == SOW_JERIN && p->state == SOW_STATE_OPEN))
        return -1000;
    unsigned char key[MAXK];
    normalise(r, p, key);
    int i = find(r, n, key);
    return i < 0 ? -1000 : r->lv[n].value[i];
}
