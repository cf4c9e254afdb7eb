/* Values by the definition, level by level: see ref_value.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_value.h"

struct ent {
    bool used;
    struct ref_pos p;
    int v, lo, hi;
};

struct ref_value_ctx {
    enum sow_family fam;
    int pits;
    struct ent *tab;
    size_t cap, n;
};

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        abort();
    return p;
}

static void canon(struct ref_pos *r)
{
    r->store[0] = r->store[1] = 0; /* values are future captures: stores do not matter */
}

static void to_ref(int pits, const sow_position *p, struct ref_pos *r)
{
    memset(r, 0, sizeof *r);
    r->pits = pits;
    for (int i = 0; i < 2 * pits; i++)
        r->hole[i] = p->board.h[i];
    r->side = p->side;
    r->state = p->state;
}

static uint64_t hpos(const struct ref_pos *r)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 2 * r->pits; i++)
        h = (h ^ (uint64_t)r->hole[i]) * 1099511628211ULL;
    h = (h ^ (uint64_t)r->side) * 1099511628211ULL;
    h = (h ^ (uint64_t)r->state) * 1099511628211ULL;
    return h;
}

static bool same(const struct ref_pos *a, const struct ref_pos *b)
{
    if (a->side != b->side || a->state != b->state)
        return false;
    for (int i = 0; i < 2 * a->pits; i++)
        if (a->hole[i] != b->hole[i])
            return false;
    return true;
}

static struct ent *find(struct ref_value_ctx *c, const struct ref_pos *p)
{
    size_t i = hpos(p) % c->cap;
    while (c->tab[i].used) {
        if (same(&c->tab[i].p, p))
            return &c->tab[i];
        i = (i + 1) % c->cap;
    }
    return NULL;
}

static void insert(struct ref_value_ctx *c, const struct ref_pos *p, int v, int lo, int hi)
{
    if (2 * (c->n + 1) > c->cap) {
        struct ent *old = c->tab;
        size_t oc = c->cap;
        c->cap = oc * 2;
        c->tab = xcalloc(c->cap, sizeof *c->tab);
        c->n = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i].used)
                insert(c, &old[i].p, old[i].v, old[i].lo, old[i].hi);
        free(old);
    }
    size_t i = hpos(p) % c->cap;
    while (c->tab[i].used) {
        if (same(&c->tab[i].p, p))
            return;
        i = (i + 1) % c->cap;
    }
    c->tab[i].used = true;
    c->tab[i].p = *p;
    c->tab[i].v = v;
    c->tab[i].lo = lo;
    c->tab[i].hi = hi;
    c->n++;
}

struct ref_value_ctx *ref_value_new(const struct ruleset *rs)
{
    struct ref_value_ctx *c = xcalloc(1, sizeof *c);
    c->fam = rs->family;
    c->pits = rs->pits;
    c->cap = 1024;
    c->tab = xcalloc(c->cap, sizeof *c->tab);
    return c;
}

void ref_value_free(struct ref_value_ctx *c)
{
    if (!c)
        return;
    free(c->tab);
    free(c);
}

long ref_value_known(const struct ref_value_ctx *c)
{
    return (long)c->n;
}

static int seeds(const struct ref_pos *r)
{
    int s = 0;
    for (int i = 0; i < 2 * r->pits; i++)
        s += r->hole[i];
    return s;
}

static int cyc(const struct ref_value_ctx *c, const struct ref_pos *r)
{
    if (c->fam == SOW_AWARI)
        return 0;
    int own = 0, opp = 0;
    for (int i = 0; i < r->pits; i++) {
        own += r->hole[r->side * r->pits + i];
        opp += r->hole[(1 - r->side) * r->pits + i];
    }
    return own - opp;
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* One level position's moves: exits already valued, stays as indices. */
struct node {
    struct ref_pos p;
    bool over;
    int settle;
    int nm;
    bool stay[SOW_MAX_PITS + 1];
    int val[SOW_MAX_PITS + 1];  /* exit value, or index of the stay child */
};

static int value_of(struct ref_value_ctx *c, const struct ref_pos *p, int *lo, int *hi);

static void solve_level(struct ref_value_ctx *c, const struct ref_pos *root)
{
    size_t cap = 64, cnt = 0;
    struct node *lv = xcalloc(cap, sizeof *lv);
    /* local index: open addressing over positions of this level */
    size_t icap = 256;
    long *idx = malloc(icap * sizeof *idx);
    if (!idx)
        abort();
    for (size_t i = 0; i < icap; i++)
        idx[i] = -1;
    lv[cnt++].p = *root;
    size_t h = hpos(root) % icap;
    idx[h] = 0;
    struct ref_list *ml = xcalloc(1, sizeof *ml);
    for (size_t i = 0; i < cnt; i++) {
        ref_generate(c->fam, &lv[i].p, ml);
        struct node *x = &lv[i];
        if (ml->n == 0) {
            x->over = true;
            x->settle = ml->settle[x->p.side] - ml->settle[1 - x->p.side];
            continue;
        }
        x->nm = ml->n;
        int side = x->p.side;
        struct ref_pos cp[SOW_MAX_PITS + 1];
        int cap_[SOW_MAX_PITS + 1][2];
        int nm = ml->n;
        for (int k = 0; k < nm; k++) {
            cp[k] = ml->c[k].pos;
            canon(&cp[k]);
            cap_[k][0] = ml->c[k].captured[0];
            cap_[k][1] = ml->c[k].captured[1];
        }
        for (int k = 0; k < nm; k++) {
            if (cap_[k][0] + cap_[k][1]) {
                int l, u;
                int v = value_of(c, &cp[k], &l, &u); /* lower level (may recurse) */
                lv[i].stay[k] = false;
                lv[i].val[k] = cap_[k][side] - cap_[k][1 - side] - v;
                continue;
            }
            /* stays: find or add */
            if (2 * (cnt + 1) > icap) {
                free(idx);
                icap *= 2;
                idx = malloc(icap * sizeof *idx);
                if (!idx)
                    abort();
                for (size_t j = 0; j < icap; j++)
                    idx[j] = -1;
                for (size_t j = 0; j < cnt; j++) {
                    size_t hh = hpos(&lv[j].p) % icap;
                    while (idx[hh] >= 0)
                        hh = (hh + 1) % icap;
                    idx[hh] = (long)j;
                }
            }
            size_t hh = hpos(&cp[k]) % icap;
            while (idx[hh] >= 0 && !same(&lv[idx[hh]].p, &cp[k]))
                hh = (hh + 1) % icap;
            if (idx[hh] < 0) {
                if (cnt == cap) {
                    cap *= 2;
                    lv = realloc(lv, cap * sizeof *lv);
                    if (!lv)
                        abort();
                }
                memset(&lv[cnt], 0, sizeof lv[cnt]);
                lv[cnt].p = cp[k];
                idx[hh] = (long)cnt++;
            }
            lv[i].stay[k] = true;
            lv[i].val[k] = (int)idx[hh];
        }
    }
    free(ml);
    free(idx);

    int n = seeds(root);
    int *lo = xcalloc(cnt, sizeof *lo), *hi = xcalloc(cnt, sizeof *hi);
    bool *W = xcalloc(cnt, 1), *L = xcalloc(cnt, 1);
    for (size_t i = 0; i < cnt; i++) {
        lo[i] = -n; /* max of the empty set, clamped */
        hi[i] = n;
    }
    for (int t = -n; t <= n; t++) {
        /* W_t and L_{-t} together (each refers to the other), from empty. */
        memset(W, 0, cnt);
        memset(L, 0, cnt);
        bool changed = true;
        while (changed) {
            changed = false;
            for (size_t i = 0; i < cnt; i++) {
                struct node *x = &lv[i];
                if (!W[i]) {
                    bool w = false;
                    if (x->over)
                        w = x->settle >= t;
                    for (int k = 0; k < x->nm && !w; k++)
                        w = x->stay[k] ? L[x->val[k]] : x->val[k] >= t;
                    if (w)
                        W[i] = changed = true;
                }
                if (!L[i]) {
                    bool l = true;
                    if (x->over)
                        l = x->settle <= -t;
                    for (int k = 0; k < x->nm && l; k++)
                        l = x->stay[k] ? W[x->val[k]] : x->val[k] <= -t;
                    if (l)
                        L[i] = changed = true;
                }
            }
        }
        for (size_t i = 0; i < cnt; i++) {
            if (W[i] && t > lo[i])
                lo[i] = t;
            if (L[i] && -t < hi[i])
                hi[i] = -t;
        }
    }
    for (size_t i = 0; i < cnt; i++)
        insert(c, &lv[i].p, clampi(cyc(c, &lv[i].p), lo[i], hi[i]), lo[i], hi[i]);
    free(lo);
    free(hi);
    free(W);
    free(L);
    free(lv);
}

static int value_of(struct ref_value_ctx *c, const struct ref_pos *p, int *lo, int *hi)
{
    struct ref_pos r = *p;
    canon(&r);
    struct ent *e = find(c, &r);
    if (!e) {
        solve_level(c, &r);
        e = find(c, &r);
        if (!e)
            abort();
    }
    *lo = e->lo;
    *hi = e->hi;
    return e->v;
}

int ref_value(struct ref_value_ctx *c, const sow_position *p, int *lo, int *hi)
{
    struct ref_pos r;
    int l, h;
    to_ref(c->pits, p, &r);
    int v = value_of(c, &r, &l, &h);
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    return v;
}

int ref_move_values(struct ref_value_ctx *c, const sow_position *p, int *vals)
{
    struct ref_pos r;
    to_ref(c->pits, p, &r);
    struct ref_list *ml = xcalloc(1, sizeof *ml);
    ref_generate(c->fam, &r, ml);
    int nm = ml->n, side = r.side, cy = cyc(c, &r);
    for (int k = 0; k < nm; k++) {
        int a = ml->c[k].captured[0], b = ml->c[k].captured[1], lo, hi;
        struct ref_pos q = ml->c[k].pos;
        int v = value_of(c, &q, &lo, &hi);
        if (a + b)
            vals[k] = (side ? b - a : a - b) - v;
        else
            vals[k] = clampi(cy, -hi, -lo);
    }
    free(ml);
    return nm;
}
