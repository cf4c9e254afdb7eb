/* Rule-set registry and the helpers every family shares. */
#include <stdio.h>
#include <string.h>

#include "core.h"

/* ---- normalisation hooks for the tables' index (struct ruleset) ---- */

static int rel_state_none(const sow_position *p)
{
    (void)p;
    return 0;
}

static uint8_t state_of_rel_none(int rel, int side)
{
    (void)rel;
    (void)side;
    return SOW_STATE_NONE;
}

/* darra: the last capturer relative to the mover, 0 nobody, 1 mover, 2 opponent. */
static int rel_state_darra(const sow_position *p)
{
    if (p->state == SOW_STATE_NONE)
        return 0;
    int who = p->state == SOW_STATE_A ? SOW_A : SOW_B;
    return who == p->side ? 1 : 2;
}

static uint8_t state_of_rel_darra(int rel, int side)
{
    if (rel == 0)
        return SOW_STATE_NONE;
    int who = rel == 1 ? side : !side;
    return who == SOW_A ? SOW_STATE_A : SOW_STATE_B;
}

/* jerin: positions with the opening double move due are not indexed. */
static int rel_state_jerin(const sow_position *p)
{
    return p->state == SOW_STATE_OPEN ? -1 : 0;
}

/* The registry, indexed by enum sow_family; names in sow_rule_names. */
struct family_desc {
    enum sow_family family;
    bool relay;
    enum sow_cycle cycle;
    int index_states;
    int (*rel_state)(const sow_position *p);
    uint8_t (*state_of_rel)(int rel, int side);
    const core_generate_fn *by_width;
    core_count_fn count;
};

#define OWN SOW_CYCLE_OWN_SIDES
#define NORM1 1, rel_state_none, state_of_rel_none
static const struct family_desc families[SOW_FAMILY_COUNT] = {
    {SOW_OWARE, false, OWN, NORM1, oware_by_width, oware_count},
    {SOW_AWARI, false, SOW_CYCLE_SPLIT, NORM1, oware_by_width, core_count_generic},
    {SOW_JODU, true, OWN, NORM1, jodu_by_width, core_count_generic},
    {SOW_JODU_IBADAN, true, OWN, NORM1, jodu_by_width, core_count_generic},
    {SOW_JODU_STARVE, true, OWN, NORM1, jodu_by_width, core_count_generic},
    {SOW_ODU, true, OWN, NORM1, odu_by_width, core_count_generic},
    {SOW_JERIN, true, OWN, 1, rel_state_jerin, state_of_rel_none, odu_by_width,
     core_count_generic},
    {SOW_DARRA, false, OWN, 3, rel_state_darra, state_of_rel_darra, darra_by_width,
     core_count_generic},
};
#undef OWN
#undef NORM1

const char *const sow_rule_names[] = {"oware", "awari", "jodu",  "jodu-ibadan", "jodu-starve",
                                      "odu",   "jerin", "darra", NULL};
_Static_assert(sizeof sow_rule_names / sizeof sow_rule_names[0] == SOW_FAMILY_COUNT + 1,
               "one name per family");

static const struct {
    const char *alias, *name;
} aliases[] = {
    {"abapa", "oware"},  {"ayo-eleh", "odu"},          {"ba-awa", "odu"},
    {"kyekyemapuduo", "jodu"}, {"ayoayo", "jodu-ibadan"},
};

void rules_names_line(char *buf, size_t len, bool with_aliases)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; sow_rule_names[i] && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " " : "", sow_rule_names[i]);
    for (size_t i = 0; with_aliases && i < sizeof aliases / sizeof aliases[0] && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " " : "; aliases ", aliases[i].alias);
}

enum sow_status rules_init(struct ruleset *rs, const char *name, int pits, int seeds,
                           struct sow_error *e)
{
    const char *canon = name;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0)
            canon = aliases[i].name;
    const struct family_desc *fd = NULL;
    const char *fname = NULL;
    for (int i = 0; i < SOW_FAMILY_COUNT; i++)
        if (strcmp(canon, sow_rule_names[i]) == 0) {
            fd = &families[i];
            fname = sow_rule_names[i];
        }
    if (!fd) {
        char known[256];
        rules_names_line(known, sizeof known, true);
        return sow_fail(e, SOW_E_INPUT, "unknown rule set '%s' (known: %s)", name, known);
    }
    if (pits == 0)
        pits = 6;
    if (seeds < 0)
        seeds = 4;
    if (pits < 1 || pits > SOW_MAX_PITS)
        return sow_fail(e, SOW_E_INPUT, "--pits %d out of range (1..%d holes per side)", pits,
                        SOW_MAX_PITS);
    if (seeds > SOW_MAX_SEEDS / (2 * pits))
        return sow_fail(e, SOW_E_INPUT,
                        "--seeds %d too large: the start would hold %lld seeds, at most %d fit "
                        "(%d per hole on 2x%d)",
                        seeds, 2LL * pits * seeds, SOW_MAX_SEEDS, SOW_MAX_SEEDS / (2 * pits),
                        pits);
    memset(rs, 0, sizeof *rs);
    rs->name = fname;
    rs->family = fd->family;
    rs->pits = pits;
    rs->holes = 2 * pits;
    rs->nwords = (rs->holes + 7) / 8;
    rs->seeds = seeds;
    rs->relay = fd->relay;
    rs->cycle = fd->cycle;
    rs->index_states = fd->index_states;
    rs->rel_state = fd->rel_state;
    rs->state_of_rel = fd->state_of_rel;
    rs->generate = fd->by_width[rs->nwords];
    rs->count = fd->count;
    return SOW_OK;
}

sow_position rules_start(const struct ruleset *rs)
{
    sow_position p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < rs->holes; i++)
        p.board.h[i] = (uint8_t)rs->seeds;
    p.side = SOW_A;
    p.state = rs->family == SOW_JERIN ? SOW_STATE_OPEN : SOW_STATE_NONE;
    return p;
}

enum sow_status rules_validate(const struct ruleset *rs, const sow_position *p,
                               struct sow_error *e)
{
    int total = 0;
    for (int i = 0; i < SOW_BOARD_WORDS * 8; i++) {
        if (i >= rs->holes && p->board.h[i])
            return sow_fail(e, SOW_E_INPUT, "board: lane %d beyond 2x%d holes is not empty", i,
                            rs->pits);
        total += p->board.h[i];
    }
    if (total > SOW_MAX_SEEDS)
        return sow_fail(e, SOW_E_INPUT, "board: %d seeds, at most %d fit", total, SOW_MAX_SEEDS);
    if (p->side > 1)
        return sow_fail(e, SOW_E_INPUT, "side: must be A or B");
    switch (p->state) {
    case SOW_STATE_NONE:
        break;
    case SOW_STATE_A:
    case SOW_STATE_B:
        if (rs->family != SOW_DARRA)
            return sow_fail(e, SOW_E_INPUT,
                            "state: last-capturer state is for darra only, %s takes '-'", rs->name);
        break;
    case SOW_STATE_OPEN:
        if (rs->family != SOW_JERIN)
            return sow_fail(e, SOW_E_INPUT, "state: 'open' is for jerin only, %s takes '-'%s",
                            rs->name, rs->family == SOW_DARRA ? ", 'A' or 'B'" : "");
        break;
    default:
        return sow_fail(e, SOW_E_INPUT, "state: unknown value %d", p->state);
    }
    if (p->pad_[0] || p->pad_[1])
        return sow_fail(e, SOW_E_INPUT, "position: padding bytes not zero");
    return SOW_OK;
}

int rules_find_move(const struct sow_movelist *ml, sow_move m)
{
    for (int i = 0; i < ml->n; i++)
        if (ml->c[i].move == m)
            return i;
    return -1;
}

int rules_board_seeds(const struct ruleset *rs, const sow_position *p)
{
    return board_sum_range(&p->board, 0, rs->holes);
}

int rules_side_seeds(const struct ruleset *rs, const sow_position *p, int side)
{
    return core_side_seeds(rs, &p->board, side);
}

int rules_cycle_value(const struct ruleset *rs, const sow_position *p)
{
    return rules_cycle_net(rs, rules_side_seeds(rs, p, p->side), rules_side_seeds(rs, p, !p->side));
}

void rules_repetition_settle2(const struct ruleset *rs, const sow_position *p, int out2[2])
{
    if (rs->cycle == SOW_CYCLE_SPLIT) {
        int n = rules_board_seeds(rs, p);
        out2[0] = out2[1] = n;
        return;
    }
    out2[0] = 2 * rules_side_seeds(rs, p, 0);
    out2[1] = 2 * rules_side_seeds(rs, p, 1);
}

const char *rules_end_name(enum sow_end e)
{
    switch (e) {
    case SOW_END_NONE: return "not over";
    case SOW_END_NO_SEEDS: return "player to move has no seeds";
    case SOW_END_NO_FEED: return "opponent has no seeds and cannot be fed";
    case SOW_END_FEW_SEEDS: return "too few seeds left";
    case SOW_END_EMPTY: return "board empty";
    case SOW_END_ENDLESS: return "every move sows forever";
    case SOW_END_REPETITION: return "position repeated";
    }
    return "?";
}

bool rules_same_position(const sow_position *x, const sow_position *y)
{
    return memcmp(x, y, sizeof *x) == 0;
}

void core_settle_own_sides(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                           enum sow_end why)
{
    ml->n = 0;
    ml->end = why;
    ml->settle[0] = (uint8_t)core_side_seeds(rs, &p->board, 0);
    ml->settle[1] = (uint8_t)core_side_seeds(rs, &p->board, 1);
}

int core_count_generic(const struct ruleset *rs, const sow_position *p,
                       struct sow_relay_cache *cache)
{
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, cache, NULL);
    return ml.n;
}
