/* The seed-by-seed reference of every rule set (see ref_rules.h).
 *
 * Written from the project's rule decisions, the rule texts in shared/seeds
 * and the briefing's choices only, without looking at src/rules: plain int arrays, copy-make,
 * one seed dropped at a time, and a relay that never ends is found by
 * remembering every (board, hole about to be lifted) state of the move in a
 * hash set -- sowing is deterministic, so a repeated state means the relay
 * cycles forever, and a relay that ends can never repeat a state.
 */
#include "ref_rules.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---------------------------------------------------- */

static int owner(int pits, int i) { return i < pits ? SOW_A : SOW_B; }
static int facing(int pits, int i) { return 2 * pits - 1 - i; }

static int side_seeds(const struct ref_pos *p, int s)
{
    int t = 0;
    for (int k = 0; k < p->pits; k++)
        t += p->hole[s * p->pits + k];
    return t;
}

static int board_seeds(const struct ref_pos *p) { return side_seeds(p, 0) + side_seeds(p, 1); }

static bool is_relay(enum sow_family f)
{
    return f == SOW_JODU || f == SOW_JODU_IBADAN || f == SOW_JODU_STARVE || f == SOW_ODU ||
           f == SOW_JERIN;
}

static bool is_odu(enum sow_family f) { return f == SOW_ODU || f == SOW_JERIN; }

/* ---- the set of relay states seen during one move --------------------- */

/* A state is the 2N hole counts (each <= 255, as the total is) and the hole
 * about to be lifted, packed into bytes 0..35 and 36 of five words. */
struct state_key {
    uint64_t w[5];
};

struct seen_set {
    size_t cap, n;
    struct state_key *keys;
    uint64_t *hash; /* 0 = empty slot */
    long *when;     /* pick-up number at which the state was first seen */
};

static void seen_alloc(struct seen_set *s, size_t cap)
{
    s->cap = cap;
    s->n = 0;
    s->keys = malloc(cap * sizeof *s->keys);
    s->hash = calloc(cap, sizeof *s->hash);
    s->when = malloc(cap * sizeof *s->when);
    if (!s->keys || !s->hash || !s->when)
        abort();
}

static void seen_init(struct seen_set *s) { seen_alloc(s, 64); }

static void seen_free(struct seen_set *s)
{
    free(s->keys);
    free(s->hash);
    free(s->when);
}

static uint64_t key_hash(const struct state_key *k)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 5; i++) {
        h ^= k->w[i];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    return h | 1; /* never 0, the empty mark */
}

static void seen_put_raw(struct seen_set *s, const struct state_key *k, uint64_t h, long when)
{
    size_t i = (h >> 7) & (s->cap - 1);
    while (s->hash[i])
        i = (i + 1) & (s->cap - 1);
    s->hash[i] = h;
    s->keys[i] = *k;
    s->when[i] = when;
    s->n++;
}

/* Insert the state; returns -1 if it was new, else the pick-up number at
 * which it was seen first. */
static long seen_insert(struct seen_set *s, const int *hole, int holes, int lift, long when)
{
    struct state_key k;
    uint8_t bytes[40];
    memset(bytes, 0, sizeof bytes);
    for (int i = 0; i < holes; i++)
        bytes[i] = (uint8_t)hole[i];
    bytes[SOW_MAX_HOLES] = (uint8_t)lift;
    memcpy(k.w, bytes, sizeof k.w);
    uint64_t h = key_hash(&k);
    size_t i = (h >> 7) & (s->cap - 1);
    while (s->hash[i]) {
        if (s->hash[i] == h && memcmp(&s->keys[i], &k, sizeof k) == 0)
            return s->when[i];
        i = (i + 1) & (s->cap - 1);
    }
    if (2 * (s->n + 1) > s->cap) { /* keep it at most half full */
        struct seen_set g;
        seen_alloc(&g, 2 * s->cap);
        for (size_t j = 0; j < s->cap; j++)
            if (s->hash[j])
                seen_put_raw(&g, &s->keys[j], s->hash[j], s->when[j]);
        seen_free(s);
        *s = g;
    }
    seen_put_raw(s, &k, h, when);
    return -1;
}

/* ---- one move --------------------------------------------------------- */

struct trace {
    long budget;      /* > 0: give up after this many pick-ups (test selection only) */
    bool over_budget; /* gave up */
    long pickups;     /* holes lifted (the origin counts as one) */
    long cycle_first; /* endless: pick-ups done before the repeated state first occurred */
    long cycle_len;   /* endless: pick-ups in one turn of the cycle */
};

/* Play move `m` of p->side into `c` (captures applied, stores and side
 * updated; state left to the caller).  Returns false if the sowing never ends. */
static bool play(enum sow_family fam, const struct ref_pos *p, int m, struct ref_child *c,
                 struct trace *tr)
{
    const int N = p->pits, H = 2 * N, me = p->side;
    int b[SOW_MAX_HOLES];
    memcpy(b, p->hole, sizeof b);
    int cap[2] = {0, 0};
    int last_capturer = -1; /* darra: chronologically last capture of the move */
    long pickups = 0;

    int origin, n;
    if (m & SOW_MOVE_DOUBLE) { /* jerin's opening: holes k+1 and k+2 together */
        int k = m & ~SOW_MOVE_DOUBLE;
        int h1 = me * N + k, h2 = h1 + 1;
        n = b[h1] + b[h2];
        b[h1] = b[h2] = 0;
        origin = h2;
    } else {
        origin = me * N + m;
        n = 0; /* lifted below, as a relay state */
    }

    bool relay = is_relay(fam);
    struct seen_set seen;
    if (relay)
        seen_init(&seen);

    int i = origin;
    if (!(m & SOW_MOVE_DOUBLE)) {
        if (relay)
            seen_insert(&seen, b, H, i, 0);
        n = b[i];
        b[i] = 0;
        pickups = 1;
    } else {
        pickups = 1;
    }

    for (;;) {
        /* sow n seeds one at a time from the hole after i */
        while (n > 0) {
            i = (i + 1) % H;
            if ((fam == SOW_OWARE || fam == SOW_AWARI) && i == origin)
                continue; /* origin skipped on every lap */
            b[i]++;
            n--;
            if (n > 0 && (is_odu(fam) || fam == SOW_DARRA) && b[i] == 4) {
                /* not the last seed: the hole's owner takes the 4 at once */
                cap[owner(N, i)] += 4;
                b[i] = 0;
                last_capturer = owner(N, i);
            }
        }
        /* the last seed is in hole i */
        if (fam == SOW_OWARE || fam == SOW_AWARI) {
            if (owner(N, i) != me && (b[i] == 2 || b[i] == 3)) {
                int t[SOW_MAX_HOLES];
                memcpy(t, b, sizeof t);
                int got = 0, j = i;
                while (owner(N, j) != me && (t[j] == 2 || t[j] == 3)) {
                    got += t[j];
                    t[j] = 0;
                    j = (j - 1 + H) % H;
                }
                struct ref_pos tp = *p;
                memcpy(tp.hole, t, sizeof t);
                bool grand_slam = side_seeds(&tp, 1 - me) == 0;
                if (!(fam == SOW_OWARE && grand_slam)) {
                    memcpy(b, t, sizeof b);
                    cap[me] += got;
                }
            }
            break;
        }
        if (fam == SOW_DARRA) {
            if (b[i] == 4) {
                cap[me] += 4;
                b[i] = 0;
                last_capturer = me;
            }
            break;
        }
        if (is_odu(fam)) {
            if (b[i] == 4) { /* last seed makes 4 anywhere: the mover's */
                cap[me] += 4;
                b[i] = 0;
                break;
            }
            if (b[i] == 1) /* was empty */
                break;
        } else { /* jodu family */
            if (b[i] == 1) {
                if (owner(N, i) == me) {
                    int f = facing(N, i);
                    if (fam == SOW_JODU && b[f] > 0) {
                        cap[me] += b[f] + 1;
                        b[f] = 0;
                        b[i] = 0;
                    } else if (fam == SOW_JODU_IBADAN && b[f] > 0) {
                        cap[me] += b[f];
                        b[f] = 0;
                    } else if (fam == SOW_JODU_STARVE) {
                        cap[me] += b[f] + 1;
                        b[f] = 0;
                        b[i] = 0;
                    }
                }
                break;
            }
        }
        /* relay: lift hole i (last seed included) and sow on */
        long first = seen_insert(&seen, b, H, i, pickups);
        if (first >= 0) {
            if (tr) {
                tr->pickups = pickups;
                tr->cycle_first = first;
                tr->cycle_len = pickups - first;
            }
            seen_free(&seen);
            return false;
        }
        n = b[i];
        b[i] = 0;
        pickups++;
        if (tr && tr->budget > 0 && pickups > tr->budget) {
            tr->over_budget = true;
            seen_free(&seen);
            return false;
        }
    }
    if (relay)
        seen_free(&seen);
    if (tr) {
        tr->pickups = pickups;
        tr->cycle_first = tr->cycle_len = -1;
    }

    c->move = m;
    c->captured[0] = cap[0];
    c->captured[1] = cap[1];
    c->pos = *p;
    memcpy(c->pos.hole, b, sizeof b);
    c->pos.store[0] += cap[0];
    c->pos.store[1] += cap[1];
    c->pos.side = 1 - me;
    if (fam == SOW_DARRA && last_capturer >= 0)
        c->pos.state = last_capturer == SOW_A ? SOW_STATE_A : SOW_STATE_B;
    if (fam == SOW_JERIN)
        c->pos.state = SOW_STATE_NONE; /* any sowing move is past the opening */
    return true;
}

static void game_over(struct ref_list *out, int end, int a, int b)
{
    out->n = 0;
    out->end = end;
    out->settle[0] = a;
    out->settle[1] = b;
}

static void add_pass(const struct ref_pos *p, struct ref_list *out)
{
    struct ref_child *c = &out->c[out->n++];
    c->move = SOW_MOVE_PASS;
    c->captured[0] = c->captured[1] = 0;
    c->pos = *p;
    c->pos.side = 1 - p->side;
}

/* ---- all moves -------------------------------------------------------- */

static bool generate(enum sow_family fam, const struct ref_pos *p, struct ref_list *out,
                     long budget)
{
    const int N = p->pits, me = p->side, opp = 1 - me;
    const int mine = side_seeds(p, me), theirs = side_seeds(p, opp), total = mine + theirs;
    memset(out, 0, sizeof *out);
    out->end = SOW_END_NONE;

    /* endings and passes that do not depend on the moves */
    switch (fam) {
    case SOW_OWARE:
    case SOW_AWARI:
        if (mine == 0) { /* the opponent takes what is left */
            int s[2];
            s[me] = 0;
            s[opp] = total;
            game_over(out, SOW_END_NO_SEEDS, s[0], s[1]);
            return true;
        }
        break;
    case SOW_JODU:
    case SOW_JODU_IBADAN:
        if (mine == 0) { /* each takes his own side */
            int s[2];
            s[me] = 0;
            s[opp] = theirs;
            game_over(out, SOW_END_NO_SEEDS, s[0], s[1]);
            return true;
        }
        break;
    case SOW_JODU_STARVE:
        if (total == 0) {
            game_over(out, SOW_END_EMPTY, 0, 0);
            return true;
        }
        if (mine == 0) {
            add_pass(p, out);
            return true;
        }
        break;
    case SOW_ODU:
    case SOW_JERIN:
        if (total <= 4) { /* the last few go to nobody */
            game_over(out, SOW_END_FEW_SEEDS, 0, 0);
            return true;
        }
        if (mine == 0) {
            add_pass(p, out);
            return true;
        }
        break;
    case SOW_DARRA:
        if (total < 5) { /* to the last capturer, if any */
            int s[2] = {0, 0};
            if (p->state == SOW_STATE_A)
                s[0] = total;
            else if (p->state == SOW_STATE_B)
                s[1] = total;
            game_over(out, SOW_END_FEW_SEEDS, s[0], s[1]);
            return true;
        }
        if (mine == 0) {
            add_pass(p, out);
            return true;
        }
        break;
    default:
        abort();
    }

    /* every sowing move that ends, in the engine's order */
    struct ref_list *all = malloc(sizeof *all);
    if (!all)
        abort();
    all->n = 0;
    int endless = 0;
    if (fam == SOW_JERIN && p->state == SOW_STATE_OPEN && N >= 2) {
        for (int k = 0; k + 1 < N; k++) {
            if (p->hole[me * N + k] + p->hole[me * N + k + 1] == 0)
                continue;
            struct trace tr = {.budget = budget};
            if (play(fam, p, SOW_MOVE_DOUBLE | k, &all->c[all->n], &tr))
                all->n++;
            else if (tr.over_budget)
                goto too_long;
            else
                endless++;
        }
    } else {
        for (int k = 0; k < N; k++) {
            if (p->hole[me * N + k] == 0)
                continue;
            struct trace tr = {.budget = budget};
            if (play(fam, p, k, &all->c[all->n], &tr))
                all->n++;
            else if (tr.over_budget)
                goto too_long;
            else
                endless++;
        }
    }
    out->endless = endless;

    /* legality filters */
    bool feed_needed = false, awari_filter = false;
    if ((fam == SOW_OWARE || is_odu(fam)) && theirs == 0)
        feed_needed = true;
    if (fam == SOW_AWARI) /* starving him is illegal unless every move does */
        for (int j = 0; j < all->n; j++)
            if (side_seeds(&all->c[j].pos, opp) > 0)
                awari_filter = true;
    for (int j = 0; j < all->n; j++) {
        bool fed = side_seeds(&all->c[j].pos, opp) > 0;
        if ((feed_needed || awari_filter) && !fed)
            continue;
        out->c[out->n++] = all->c[j];
    }
    int sown = all->n;
    free(all);

    if (out->n > 0)
        return true;
    if (sown == 0 && endless > 0) { /* every move sows forever: own sides */
        int s[2];
        s[me] = mine;
        s[opp] = theirs;
        game_over(out, SOW_END_ENDLESS, s[0], s[1]);
        out->endless = endless;
        return true;
    }
    /* the opponent is empty and no move feeds him: each takes his own side
     * (the mover's is everything) */
    int s[2];
    s[me] = mine;
    s[opp] = theirs;
    game_over(out, SOW_END_NO_FEED, s[0], s[1]);
    out->endless = endless;
    return true;

too_long:
    free(all);
    memset(out, 0, sizeof *out);
    return false;
}

void ref_generate(enum sow_family fam, const struct ref_pos *p, struct ref_list *out)
{
    generate(fam, p, out, 0);
}

bool ref_generate_bounded(enum sow_family fam, const struct ref_pos *p, struct ref_list *out,
                          long limit)
{
    return generate(fam, p, out, limit);
}

bool ref_move_endless(enum sow_family fam, const struct ref_pos *p, int move, long *pickups,
                      long *cycle_first, long *cycle_len)
{
    struct ref_child c;
    struct trace tr = {0};
    bool ends = play(fam, p, move, &c, &tr);
    if (pickups)
        *pickups = tr.pickups;
    if (cycle_first)
        *cycle_first = tr.cycle_first;
    if (cycle_len)
        *cycle_len = tr.cycle_len;
    return !ends;
}

uint64_t ref_perft(enum sow_family fam, const struct ref_pos *p, int depth)
{
    if (depth == 0)
        return 1;
    struct ref_list *l = malloc(sizeof *l);
    if (!l)
        abort();
    ref_generate(fam, p, l);
    uint64_t t = 0;
    if (depth == 1)
        t = (uint64_t)l->n;
    else
        for (int j = 0; j < l->n; j++)
            t += ref_perft(fam, &l->c[j].pos, depth - 1);
    free(l);
    return t;
}

int ref_cycle_value(enum sow_family fam, const struct ref_pos *p)
{
    if (fam == SOW_AWARI)
        return 0;
    return side_seeds(p, p->side) - side_seeds(p, 1 - p->side);
}

int ref_board_seeds(const struct ref_pos *p) { return board_seeds(p); }

/* ---- conversions ------------------------------------------------------ */

void ref_from_sow(const struct ruleset *rs, const sow_position *p, struct ref_pos *out)
{
    memset(out, 0, sizeof *out);
    out->pits = rs->pits;
    for (int i = 0; i < 2 * rs->pits; i++)
        out->hole[i] = p->board.h[i];
    out->store[0] = p->store[0];
    out->store[1] = p->store[1];
    out->side = p->side;
    out->state = p->state;
}

void ref_to_sow(const struct ref_pos *p, sow_position *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 2 * p->pits; i++)
        out->board.h[i] = (uint8_t)p->hole[i];
    out->store[0] = (uint16_t)p->store[0];
    out->store[1] = (uint16_t)p->store[1];
    out->side = (uint8_t)p->side;
    out->state = (uint8_t)p->state;
}
