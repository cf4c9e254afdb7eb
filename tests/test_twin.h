/* What the engine's tests share (test_engine.c, test_swindle.c): an
 * xorshift generator for their random positions, each file starting it at
 * its own TWIN_SEED, and the slow twin of a move's value: docs/rules.md
 * "Value of a position" read from tables that hold the position's level
 * with its bounds. */
#ifndef SOW_TEST_TWIN_H
#define SOW_TEST_TWIN_H

#include <criterion/criterion.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/tables_probe.h"

#ifndef TWIN_SEED
#error "define TWIN_SEED (the file's generator seed) before including test_twin.h"
#endif

static uint64_t twin_rng = TWIN_SEED;

static uint64_t rnd(void)
{
    twin_rng ^= twin_rng << 13;
    twin_rng ^= twin_rng >> 7;
    twin_rng ^= twin_rng << 17;
    return twin_rng;
}

/* The value of move i of p (ml) for p's mover, from tables that hold p's
 * level with bounds: an exit is its net capture minus the child's value
 * (or the settlement where the game ends), a move within the level
 * clamp(cyc(p), -hi, -lo) of the child's bounds; *exits: whether the move
 * leaves the level. */
static inline int twin_move_value(const struct ruleset *rs, const struct tb_set *tb,
                                  const sow_position *p, const struct sow_movelist *ml, int i,
                                  bool *exits)
{
    const struct sow_child *ch = &ml->c[i];
    int net = ch->captured[p->side] - ch->captured[!p->side], v, lo, hi;
    struct sow_movelist cm;
    rules_generate(rs, &ch->pos, &cm);
    *exits = cm.n == 0 || rules_board_seeds(rs, &ch->pos) != rules_board_seeds(rs, p);
    if (cm.n == 0)
        return net - (cm.settle[ch->pos.side] - cm.settle[!ch->pos.side]);
    if (*exits) {
        cr_assert(tb_probe(tb, &ch->pos, &v));
        return net - v;
    }
    cr_assert(tb_probe_bounds(tb, &ch->pos, &lo, &hi, &v));
    int cyc = rules_cycle_value(rs, p);
    return cyc < -hi ? -hi : cyc > -lo ? -lo : cyc;
}

#endif
