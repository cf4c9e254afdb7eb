/* Opening books: the builder (docs/book.md "Building").
 *
 * Breadth first from the start: every position of ply k in the frontier gets
 * an entry holding every legal move's score, a search of the child to depth
 * - 1 (or the exact value: a finished game, a solution file), best first;
 * the children of the moves scored within the margin of the best that are
 * new and not finished make ply k + 1's frontier.  With one thread the
 * searches, and so the book, are the same on every run (the engine's table
 * is emptied at the start of each ply and kept from one search to the next
 * within it, in this fixed order).  After each
 * ply the book so far is written (a complete book of fewer plies), so a
 * stopped build loses at most the ply it was in; a rerun replays the
 * frontier from the file and goes on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "sow/engine.h"
#include "sow/search.h"
#include "fileio.h"
#include "util.h"

#define BOOK_MAX_ENTRIES 4000000 /* refused past this: lower --plies or --margin */

struct bb {
    const struct ruleset *rs;
    const struct book_build_opts *o;
    struct engine *eng;
    struct sol *sol;
    struct book bk;                /* entries unsorted while building */
    size_t capent, capmov;
    uint64_t *set;                 /* keys met (entries and frontier); 0 = empty slot */
    size_t setcap, setn;
    bool zero_seen;                /* the key 0, which the set cannot hold */
    bool midline;                  /* a progress line waits for its end */
    sow_position *cur, *next;
    size_t ncur, nnext, capcur, capnext;
};

static bool set_grow(struct bb *B)
{
    size_t cap = B->setcap ? B->setcap * 2 : 1 << 12;
    uint64_t *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < B->setcap; i++)
        if (B->set[i]) {
            size_t j = B->set[i] & (cap - 1);
            while (s[j])
                j = (j + 1) & (cap - 1);
            s[j] = B->set[i];
        }
    free(B->set);
    B->set = s;
    B->setcap = cap;
    return true;
}

/* Add k; 1 if new, 0 if met before, -1 out of memory. */
static int set_add(struct bb *B, uint64_t k)
{
    if (!k) {
        bool was = B->zero_seen;
        B->zero_seen = true;
        return !was;
    }
    if ((B->setn + 1) * 2 > B->setcap && !set_grow(B))
        return -1;
    size_t j = k & (B->setcap - 1);
    while (B->set[j]) {
        if (B->set[j] == k)
            return 0;
        j = (j + 1) & (B->setcap - 1);
    }
    B->set[j] = k;
    B->setn++;
    return 1;
}

static bool push_next(struct bb *B, const sow_position *p)
{
    if (B->nnext == B->capnext) {
        size_t cap = B->capnext ? B->capnext * 2 : 256;
        sow_position *n = realloc(B->next, cap * sizeof *n);
        if (!n)
            return false;
        B->next = n;
        B->capnext = cap;
    }
    B->next[B->nnext++] = *p;
    return true;
}

/* The children of t's moves within the margin that are new and not
 * finished, onto the next frontier. */
static enum sow_status follow(struct bb *B, const sow_position *p, const struct book_entry *t,
                              struct sow_error *e)
{
    const struct book_move *m = &B->bk.mov[t->first];
    struct sow_movelist ml, cl;
    B->rs->generate(B->rs, p, &ml, NULL, NULL);
    for (int i = 0; i < t->n && m[i].score >= m[0].score - B->o->margin; i++) {
        int j = rules_find_move(&ml, m[i].move);
        if (j < 0)
            return sow_fail(e, SOW_E_INPUT, "book: a move of the book is not legal where it stands");
        const sow_position *c = &ml.c[j].pos;
        B->rs->generate(B->rs, c, &cl, NULL, NULL);
        if (!cl.n)
            continue;
        int r = set_add(B, book_key(c));
        if (r < 0 || (r > 0 && !push_next(B, c)))
            return sow_fail(e, SOW_E_NOMEM, "book: out of memory at %zu positions", B->setn);
    }
    return SOW_OK;
}

static bool room(struct bb *B, int moves)
{
    if (B->bk.nent == B->capent) {
        size_t cap = B->capent ? B->capent * 2 : 256;
        struct book_entry *n = realloc(B->bk.ent, cap * sizeof *n);
        if (!n)
            return false;
        B->bk.ent = n;
        B->capent = cap;
    }
    while (B->bk.nmov + (size_t)moves > B->capmov) {
        size_t cap = B->capmov ? B->capmov * 2 : 1024;
        struct book_move *n = realloc(B->bk.mov, cap * sizeof *n);
        if (!n)
            return false;
        B->bk.mov = n;
        B->capmov = cap;
    }
    return true;
}

static int16_t clamp16(long v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
}

/* Every move of p scored into m[0..ml->n-1]; false if the search was stopped. */
static bool score_moves(struct bb *B, const sow_position *p, const struct sow_movelist *ml,
                        struct book_move *m)
{
    int vals[BOOK_MAX_MOVES];
    struct search_result sr;
    if (B->sol && search_solution_answer(B->sol, p, &sr, vals) == ml->n) {
        for (int i = 0; i < ml->n; i++)
            m[i] = (struct book_move){ml->c[i].move, BOOK_EXACT, clamp16(100L * vals[i])};
        return true;
    }
    struct engine_limits lim = {.depth = B->o->depth > 1 ? B->o->depth - 1 : 1};
    for (int i = 0; i < ml->n; i++) {
        const struct sow_child *c = &ml->c[i];
        long gain = 100L * (c->captured[p->side] - c->captured[!p->side]);
        struct sow_movelist cl;
        B->rs->generate(B->rs, &c->pos, &cl, NULL, NULL);
        if (!cl.n) {
            long settle = 100L * (cl.settle[c->pos.side] - cl.settle[!c->pos.side]);
            m[i] = (struct book_move){c->move, BOOK_EXACT, clamp16(gain - settle)};
            continue;
        }
        struct engine_result r;
        engine_search(B->eng, &c->pos, p, 1, &lim, &r);
        if (r.stopped)
            return false;
        /* a proven score is the child's value entered afresh: the move's
         * exact value when the move leaves the level (an exit: nothing
         * before it can repeat), not always for a move that stays in it
         * (docs/rules.md "Value of a position") */
        bool exit = c->captured[0] + c->captured[1] > 0;
        m[i] = (struct book_move){c->move, r.info.proven && exit ? BOOK_EXACT : 0,
                                  clamp16(gain - r.info.score)};
    }
    for (int i = 1; i < ml->n; i++) /* best first, ties in move order */
        for (int j = i; j > 0 && m[j].score > m[j - 1].score; j--) {
            struct book_move t = m[j];
            m[j] = m[j - 1];
            m[j - 1] = t;
        }
    return true;
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const struct book_entry *)a)->key, y = ((const struct book_entry *)b)->key;
    return x < y ? -1 : x > y;
}

/* The book so far, sorted, written to path as a book of `plies` plies. */
static enum sow_status save(struct bb *B, const char *path, int plies, struct sow_error *e)
{
    struct book w = B->bk;
    w.par.plies = plies;
    w.ent = malloc((w.nent ? w.nent : 1) * sizeof *w.ent);
    if (!w.ent)
        return sow_fail(e, SOW_E_NOMEM, "book: out of memory writing %s", path);
    memcpy(w.ent, B->bk.ent, w.nent * sizeof *w.ent);
    qsort(w.ent, w.nent, sizeof *w.ent, cmp_key);
    enum sow_status st = book_write(path, &w, e);
    free(w.ent);
    return st;
}

static void progress(struct bb *B, int ply, size_t done, double t0, bool end)
{
    double el = util_now() - t0;
    B->midline = !end;
    if (end) {
        fprintf(stderr, "\rbook: ply %d: %zu positions in %.1f s, %llu in the book%20s\n", ply,
                B->ncur, el, (unsigned long long)B->bk.nent, "");
        return;
    }
    double eta = done ? el * (double)(B->ncur - done) / (double)done : 0;
    fprintf(stderr, "\rbook: ply %d/%d: %zu/%zu positions, %.0f s, ETA %.0f s   ", ply,
            B->o->plies - 1, done, B->ncur, el, eta);
}

/* Ply `ply`'s frontier (cur) into entries; the next frontier built. */
static enum sow_status build_ply(struct bb *B, int ply, struct sow_error *e)
{
    double t0 = util_now(), last = t0;
    /* each ply from an empty table: what the table holds can change a
     * fixed-depth score, and a resumed build must equal a whole one */
    engine_clear(B->eng);
    for (size_t i = 0; i < B->ncur; i++) {
        const sow_position *p = &B->cur[i];
        struct sow_movelist ml;
        B->rs->generate(B->rs, p, &ml, NULL, NULL);
        if (B->bk.nent >= BOOK_MAX_ENTRIES)
            return sow_fail(e, SOW_E_TOO_BIG,
                            "book: more than %d positions by ply %d: lower --plies or --margin",
                            BOOK_MAX_ENTRIES, ply);
        if (!room(B, ml.n))
            return sow_fail(e, SOW_E_NOMEM, "book: out of memory at %llu entries",
                            (unsigned long long)B->bk.nent);
        struct book_move *m = &B->bk.mov[B->bk.nmov];
        if ((B->o->stop && *B->o->stop) || !score_moves(B, p, &ml, m))
            return sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
        struct book_entry *t = &B->bk.ent[B->bk.nent++];
        *t = (struct book_entry){book_key(p), (uint32_t)B->bk.nmov, (uint8_t)ml.n, (uint8_t)ply, 0};
        B->bk.nmov += (uint64_t)ml.n;
        enum sow_status st = follow(B, p, t, e);
        if (st != SOW_OK)
            return st;
        if (B->o->progress && util_now() - last > 0.5) {
            last = util_now();
            progress(B, ply, i + 1, t0, false);
        }
    }
    if (B->o->progress)
        progress(B, ply, B->ncur, t0, true);
    return SOW_OK;
}

static void swap_frontiers(struct bb *B)
{
    sow_position *t = B->cur;
    size_t c = B->capcur;
    B->cur = B->next;
    B->capcur = B->capnext;
    B->ncur = B->nnext;
    B->next = t;
    B->capnext = c;
    B->nnext = 0;
}

/* A book on path of the same build: its entries taken, its frontier
 * replayed from the start; *plies = its plies complete (0: none there). */
static enum sow_status resume(struct bb *B, const char *path, int *plies, struct sow_error *e)
{
    *plies = 0;
    if (!fio_exists(path))
        return SOW_OK;
    struct book old;
    enum sow_status st = book_open(path, B->rs, &old, e);
    if (st != SOW_OK)
        return st;
    if (old.par.depth != B->o->depth || old.par.margin != B->o->margin) {
        st = sow_fail(e, SOW_E_INPUT,
                      "%s holds a book of depth %d and margin %d, not %d and %d: remove it or give "
                      "the same --depth and --margin",
                      path, old.par.depth, old.par.margin, B->o->depth, B->o->margin);
        book_free(&old);
        return st;
    }
    B->bk.ent = old.ent;
    B->bk.mov = old.mov;
    B->bk.nent = B->capent = old.nent;
    B->bk.nmov = B->capmov = old.nmov;
    *plies = old.par.plies;
    for (int k = 0; k < *plies; k++) {
        for (size_t i = 0; i < B->ncur; i++) {
            const struct book_entry *t = book_find(&B->bk, B->rs, &B->cur[i]);
            if (!t)
                return sow_fail(e, SOW_E_INPUT, "%s: damaged book: a position of ply %d missing",
                                path, k);
            if ((st = follow(B, &B->cur[i], t, e)) != SOW_OK)
                return st;
        }
        swap_frontiers(B);
    }
    /* entries appended from here on: the look-ups above needed them sorted */
    return SOW_OK;
}

static void bb_free(struct bb *B)
{
    if (B->eng)
        engine_free(B->eng);
    if (B->sol)
        search_solution_close(B->sol);
    book_free(&B->bk);
    free(B->set);
    free(B->cur);
    free(B->next);
}

static enum sow_status bb_start(struct bb *B, const char *path, int *done, struct sow_error *e)
{
    const struct ruleset *rs = B->rs;
    snprintf(B->bk.par.rules, sizeof B->bk.par.rules, "%s", rs->name);
    B->bk.par.pits = rs->pits;
    B->bk.par.seeds = rs->seeds;
    B->bk.par.depth = B->o->depth;
    B->bk.par.margin = B->o->margin;
    sow_position s = rules_start(rs);
    if (set_add(B, book_key(&s)) < 0 || !push_next(B, &s))
        return sow_fail(e, SOW_E_NOMEM, "book: out of memory");
    swap_frontiers(B);
    enum sow_status st;
    if (B->o->solution &&
        (st = search_solution_open(rs, B->o->solution, &B->sol, e)) != SOW_OK)
        return st;
    struct engine_opts eo = {.threads = B->o->threads > 0 ? B->o->threads : 1,
                             .hash_mb = B->o->hash_mb ? B->o->hash_mb : 64,
                             .solution = B->sol};
    if ((st = engine_new(rs, &eo, &B->eng, e)) != SOW_OK)
        return st;
    engine_set_stop_flag(B->eng, B->o->stop);
    return resume(B, path, done, e);
}

enum sow_status book_build(const struct ruleset *rs, const char *path,
                           const struct book_build_opts *o, struct sow_error *e)
{
    struct bb B = {.rs = rs, .o = o};
    int done = 0;
    /* a target that cannot be written is refused before any work */
    enum sow_status st = fio_check_target(path, e);
    if (st != SOW_OK)
        return st;
    st = bb_start(&B, path, &done, e);
    if (st == SOW_OK && done >= o->plies && o->progress)
        fprintf(stderr, "book: %s already holds %d plies\n", path, done);
    for (int k = done; st == SOW_OK && k < o->plies; k++) {
        if ((st = build_ply(&B, k, e)) != SOW_OK)
            break;
        if ((st = save(&B, path, k + 1, e)) != SOW_OK)
            break;
        swap_frontiers(&B);
    }
    if (B.midline)
        fputc('\n', stderr);
    bb_free(&B);
    return st;
}
