/* The set of a solution file written from a closure on disk (solution.h
 * sol_disk_set), built a window of cells at a time.
 *
 * The file's set is the table that inserting node 0, 1, .. N-1 (level by
 * level, each level's sorted keys in order) into S cells by linear probing
 * leaves: node g goes to the first free cell from cell_of(hash, S) on,
 * wrapping from S-1 to 0.  Its cells are 4 bytes (file format 1) or 8
 * (format 2, for 2^32 - 3 positions or more); held whole the set takes 4
 * or 8 S bytes, 6.7 or 13.3 bytes a position: more than a rank's share of
 * the closure, so here the cells are built W at a time (8 bytes each
 * while built), in order, each window written as it is done.
 *
 *   cells   0 ........ W-1 | W ........ 2W-1 | ... | (k-1)W ........ S-1
 *           window 0        window 1               window k-1
 *                     carry ->           carry ->         carry -> (wrap to 0)
 *
 * Inside a window the nodes homed there go in by g, as globally.  A node
 * that probes past a window's last cell is its carry into the next window:
 * there it probes from the first cell, at its own g among that window's
 * nodes.  This is exact: a window's cells at "time" g depend only on the
 * nodes homed in it and the carries into it up to g, and a carry enters
 * exactly when the node is inserted, having found every cell before full.
 * Carries out of the last window wrap into window 0, which then may carry
 * more into window 1, and so on: the carries are iterated until the wrap
 * into window 0 is the one it was built with (a window whose carry out is
 * unchanged leaves every later one unchanged), then the windows are built
 * once more, in order, and written.  At a load of at most 3/5 the carries
 * are a few nodes each.
 *
 * Cost: each window pass reads every level's keys (mapped, pages dropped
 * after each level so that the reads do not stay resident) and hashes
 * them: about 2 passes a window.  The nodes come from a source of home
 * cells (struct sol_homes), so that the tests can also feed cells that
 * wrap at will.  solution.c's whole set is the one-window
 * case, built directly; the tests compare the two byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "solution.h"
#include "util.h"

#define EMPTY UINT64_MAX /* cells are built 8 bytes wide, written 4 or 8 */

struct glist {
    uint64_t *g;
    size_t n, cap;
};

static bool gl_push(struct glist *l, uint64_t g)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        uint64_t *p = realloc(l->g, cap * sizeof *p);
        if (!p)
            return false;
        l->g = p;
        l->cap = cap;
    }
    l->g[l->n++] = g;
    return true;
}

static bool gl_same(const struct glist *a, const struct glist *b)
{
    return a->n == b->n && (!a->n || !memcmp(a->g, b->g, a->n * sizeof *a->g));
}

static bool gl_copy(struct glist *to, const struct glist *from)
{
    to->n = 0;
    for (size_t i = 0; i < from->n; i++)
        if (!gl_push(to, from->g[i]))
            return false;
    return true;
}

/* The closure's nodes' home cells, in node order (level by level, each
 * level's sorted keys), a chunk at a time. */
struct clos_homes {
    const struct clos *c;
    int K, l;
    uint64_t S, i;
};

static size_t clos_homes_next(void *src, uint64_t *home, size_t max)
{
    struct clos_homes *h = src;
    size_t got = 0;
    while (got < max && h->l <= SOW_MAX_SEEDS) {
        const uint64_t *k;
        const int8_t *lo, *hi, *v;
        uint64_t m = clos_disk_level(h->c, h->l, &k, &lo, &hi, &v);
        for (; got < max && h->i < m; h->i++)
            home[got++] = (uint64_t)(((unsigned __int128)clos_hash(&k[h->i * (uint64_t)h->K], h->K) *
                                      h->S) >> 64);
        if (h->i == m) {
            if (m) /* read once a pass: not kept resident */
                util_drop_pages(k, (size_t)(m * 8 * (uint64_t)h->K));
            h->l++;
            h->i = 0;
        }
    }
    return got;
}

static void clos_homes_rewind(void *src)
{
    struct clos_homes *h = src;
    h->l = 0;
    h->i = 0;
}

/* One node into window cells w[0 .. n): from cell j on; false if it runs
 * past the last cell (a carry). */
static inline bool place(uint64_t *w, uint64_t n, uint64_t j, uint64_t g)
{
    while (j < n && w[j] != EMPTY)
        j++;
    if (j == n)
        return false;
    w[j] = g;
    return true;
}

#define CHUNK 4096

/* Window [a, a + n) built into w from the carries in (ascending g) and the
 * nodes homed there; its carries out into out.  False: out of memory. */
static bool window(const struct sol_homes *src, uint64_t a, uint64_t n, uint64_t *w,
                   const struct glist *in, struct glist *out, uint64_t *home)
{
    memset(w, 0xFF, 8 * (size_t)n);
    out->n = 0;
    size_t ci = 0;
    uint64_t g = 0;
    src->rewind(src->ctx);
    for (size_t got; (got = src->next(src->ctx, home, CHUNK)) > 0;)
        for (size_t i = 0; i < got; i++, g++) {
            for (; ci < in->n && in->g[ci] < g; ci++)
                if (!place(w, n, 0, in->g[ci]) && !gl_push(out, in->g[ci]))
                    return false;
            uint64_t h = home[i];
            if (h >= a && h < a + n && !place(w, n, h - a, g) && !gl_push(out, g))
                return false;
        }
    for (; ci < in->n; ci++)
        if (!place(w, n, 0, in->g[ci]) && !gl_push(out, in->g[ci]))
            return false;
    return true;
}

/* Every node into all S cells at once, wrapping at the end. */
static void whole(const struct sol_homes *src, uint64_t S, uint64_t *set, uint64_t *home)
{
    memset(set, 0xFF, 8 * (size_t)S);
    uint64_t g = 0;
    src->rewind(src->ctx);
    for (size_t got; (got = src->next(src->ctx, home, CHUNK)) > 0;)
        for (size_t i = 0; i < got; i++, g++) {
            uint64_t j = home[i];
            while (set[j] != EMPTY)
                j = j + 1 == S ? 0 : j + 1;
            set[j] = g;
        }
}

/* Cells w[0 .. n) handed to put as cw-byte cells: 8 as they are, 4 packed
 * in place (cell i's 4 bytes go where cells 0 .. i/2 were, all read). */
static void put_cells(void (*put)(void *ctx, const void *p, size_t n), void *ctx, uint64_t *w,
                      uint64_t n, int cw)
{
    if (cw == 4) {
        unsigned char *b = (unsigned char *)w; /* (bytes: no aliasing of the two widths) */
        for (uint64_t i = 0; i < n; i++) {
            uint64_t x;
            memcpy(&x, b + 8 * i, 8);
            uint32_t y = x == EMPTY ? UINT32_MAX : (uint32_t)x;
            memcpy(b + 4 * i, &y, 4);
        }
    }
    put(ctx, w, (size_t)cw * (size_t)n);
}

enum sow_status sol_set_build(const struct sol_homes *src, uint64_t S, uint64_t win, int cw,
                              void (*put)(void *ctx, const void *p, size_t n), void *ctx,
                              const char *path, struct sow_error *e)
{
    if (win == 0 || win > S)
        win = S;
    uint64_t W = (S + win - 1) / win;
    uint64_t *w = malloc(8 * (size_t)win);
    uint64_t *home = malloc(CHUNK * sizeof *home);
    struct glist *bound = calloc(W, sizeof *bound); /* carry out of each window */
    struct glist wrap = {0}, in = {0}, out = {0};
    bool ok = w && home && bound, agree = true;
    if (ok && W == 1) {
        whole(src, S, w, home);
        put_cells(put, ctx, w, S, cw);
    } else if (ok) {
        /* the carries, until the wrap into window 0 is stable: in practice
         * after the second round, since what the wrap adds to window 0 runs
         * on only until a free cell, and at a load of 3/5 a run never
         * reaches around to the last window again (the check stays, cheap) */
        bool have = false, stable = false;
        for (int iter = 0; ok && !stable && iter < 64; iter++) {
            ok = gl_copy(&in, &wrap);
            for (uint64_t k = 0; ok && k < W; k++) {
                uint64_t a = k * win, n = S - a < win ? S - a : win;
                ok = window(src, a, n, w, &in, &out, home);
                if (ok && have && gl_same(&out, &bound[k]))
                    break; /* every later window as before */
                ok = ok && gl_copy(&bound[k], &out) && gl_copy(&in, &out);
            }
            have = true;
            stable = ok && gl_same(&bound[W - 1], &wrap);
            ok = ok && (stable || gl_copy(&wrap, &bound[W - 1]));
        }
        /* then the windows once more, in order, written */
        agree = stable;
        ok = ok && agree && gl_copy(&in, &wrap);
        for (uint64_t k = 0; ok && k < W; k++) {
            uint64_t a = k * win, n = S - a < win ? S - a : win;
            ok = window(src, a, n, w, &in, &out, home);
            if (ok)
                put_cells(put, ctx, w, n, cw);
            ok = ok && gl_copy(&in, &out);
        }
        agree = agree && (!ok || gl_same(&out, &wrap));
    }
    /* (windows that disagree cannot happen: the carries were stable) */
    enum sow_status st = SOW_OK;
    if (!agree)
        st = sow_fail(e, SOW_E_INPUT, "%s: the set's windows do not agree", path);
    else if (!ok)
        st = sow_fail(e, SOW_E_NOMEM, "%s: out of memory for its set (%.3g GB a window)", path,
                      8.0 * (double)win / 1e9);
    for (uint64_t k = 0; bound && k < W; k++)
        free(bound[k].g);
    free(bound);
    free(wrap.g);
    free(in.g);
    free(out.g);
    free(home);
    free(w);
    return st;
}

enum sow_status sol_disk_set(const struct clos *c, int K, uint64_t S, uint64_t win, int cw,
                             void (*put)(void *ctx, const void *p, size_t n), void *ctx,
                             const char *path, struct sow_error *e)
{
    struct clos_homes h = {.c = c, .K = K, .S = S};
    const struct sol_homes src = {clos_homes_next, clos_homes_rewind, &h};
    return sol_set_build(&src, S, win, cw, put, ctx, path, e);
}
