/* Rule-set registry and the helpers every family shares. */
#include <stdio.h>
#include <string.h>

#include "core.h"

struct family_desc {
    const char *name;
    enum sow_family family;
    bool relay, skip_origin, has_state;
    const core_generate_fn *by_width;
    core_count_fn count;
};

static const struct family_desc families[SOW_FAMILY_COUNT] = {
    {"oware", SOW_OWARE, false, true, false, oware_by_width, oware_count},
    {"awari", SOW_AWARI, false, true, false, oware_by_width, core_count_generic},
    {"jodu", SOW_JODU, true, false, false, jodu_by_width, core_count_generic},
    {"jodu-ibadan", SOW_JODU_IBADAN, true, false, false, jodu_by_width, core_count_generic},
    {"jodu-starve", SOW_JODU_STARVE, true, false, false, jodu_by_width, core_count_generic},
    {"odu", SOW_ODU, true, false, false, odu_by_width, core_count_generic},
    {"jerin", SOW_JERIN, true, false, true, odu_by_width, core_count_generic},
    {"darra", SOW_DARRA, false, false, true, darra_by_width, core_count_generic},
};

const char *const sow_rule_names[] = {"oware", "awari",     "jodu",  "jodu-ibadan", "jodu-starve",
                                      "odu",   "jerin",     "darra", NULL};

static const struct {
    const char *alias, *name;
} aliases[] = {
    {"abapa", "oware"},  {"ayo-eleh", "odu"},          {"ba-awa", "odu"},
    {"kyekyemapuduo", "jodu"}, {"ayoayo", "jodu-ibadan"},
};

int rules_init(struct ruleset *rs, const char *name, int pits, int seeds, char *err, int errlen)
{
    const char *canon = name;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0)
            canon = aliases[i].name;
    const struct family_desc *fd = NULL;
    for (int i = 0; i < SOW_FAMILY_COUNT; i++)
        if (strcmp(canon, families[i].name) == 0)
            fd = &families[i];
    if (!fd) {
        snprintf(err, (size_t)errlen,
                 "unknown rule set '%s' (known: oware awari jodu jodu-ibadan jodu-starve odu jerin "
                 "darra; aliases abapa ayo-eleh ba-awa kyekyemapuduo ayoayo)",
                 name);
        return -1;
    }
    if (pits == 0)
        pits = 6;
    if (seeds < 0)
        seeds = 4;
    if (pits < 1 || pits > SOW_MAX_PITS) {
        snprintf(err, (size_t)errlen, "--pits %d out of range (1..%d holes per side)", pits,
                 SOW_MAX_PITS);
        return -1;
    }
    if (seeds > SOW_MAX_SEEDS / (2 * pits)) {
        snprintf(err, (size_t)errlen,
                 "--seeds %d too large: the start would hold %d seeds, at most %d fit "
                 "(%d per hole on 2x%d)",
                 seeds, 2 * pits * seeds, SOW_MAX_SEEDS, SOW_MAX_SEEDS / (2 * pits), pits);
        return -1;
    }
    memset(rs, 0, sizeof *rs);
    rs->name = fd->name;
    rs->family = fd->family;
    rs->pits = pits;
    rs->holes = 2 * pits;
    rs->nwords = (rs->holes + 7) / 8;
    rs->seeds = seeds;
    rs->relay = fd->relay;
    rs->skip_origin = fd->skip_origin;
    rs->has_state = fd->has_state;
    rs->generate = fd->by_width[rs->nwords];
    rs->count = fd->count;
    return 0;
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

int rules_validate(const struct ruleset *rs, const sow_position *p, char *err, int errlen)
{
    int total = 0;
    for (int i = 0; i < SOW_BOARD_WORDS * 8; i++) {
        if (i >= rs->holes && p->board.h[i]) {
            snprintf(err, (size_t)errlen, "board: lane %d beyond 2x%d holes is not empty", i,
                     rs->pits);
            return -1;
        }
        total += p->board.h[i];
    }
    if (total > SOW_MAX_SEEDS) {
        snprintf(err, (size_t)errlen, "board: %d seeds, at most %d fit", total, SOW_MAX_SEEDS);
        return -1;
    }
    if (p->side > 1) {
        snprintf(err, (size_t)errlen, "side: must be A or B");
        return -1;
    }
    switch (p->state) {
    case SOW_STATE_NONE:
        break;
    case SOW_STATE_A:
    case SOW_STATE_B:
        if (rs->family != SOW_DARRA) {
            snprintf(err, (size_t)errlen, "state: last-capturer state is for darra only, %s takes '-'",
                     rs->name);
            return -1;
        }
        break;
    case SOW_STATE_OPEN:
        if (rs->family != SOW_JERIN) {
            snprintf(err, (size_t)errlen, "state: 'open' is for jerin only, %s takes '-'%s", rs->name,
                     rs->family == SOW_DARRA ? ", 'A' or 'B'" : "");
            return -1;
        }
        break;
    default:
        snprintf(err, (size_t)errlen, "state: unknown value %d", p->state);
        return -1;
    }
    if (p->pad_[0] || p->pad_[1]) {
        snprintf(err, (size_t)errlen, "position: padding bytes not zero");
        return -1;
    }
    return 0;
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
    if (rs->family == SOW_AWARI)
        return 0;
    return rules_side_seeds(rs, p, p->side) - rules_side_seeds(rs, p, !p->side);
}

void rules_repetition_settle2(const struct ruleset *rs, const sow_position *p, int out2[2])
{
    if (rs->family == SOW_AWARI) {
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
