/* sow — rules: positions, moves and the rule-set API.
 *
 * Search, tables and the CLI see the games only through this header: a
 * `struct ruleset` (parameters plus function pointers, one implementation file
 * per rule family under src/rules/) and the generic helpers below.
 *
 * Position
 * --------
 *   board   absolute board (see board.h): A's holes first, then B's
 *   store   seeds already captured by A (store[0]) and B (store[1])
 *   side    player to move: 0 = A, 1 = B
 *   state   rule-specific: darra: last capturer (SOW_STATE_NONE/A/B);
 *           jerin: SOW_STATE_OPEN while the opening double move is due;
 *           other rule sets: always SOW_STATE_NONE.
 *
 * Move
 * ----
 * One byte: 0..N-1 = hole k+1 of the player to move; SOW_MOVE_PASS; for
 * jerin's opening SOW_MOVE_DOUBLE | k = holes k+1 and k+2 together.
 *
 * Thread-safety: a `struct ruleset` is immutable after rules_init(); every
 * function taking `const struct ruleset *` may be called from many threads at
 * once.  A `struct sow_relay_cache` must be used by one thread at a time.
 */
#ifndef SOW_RULES_H
#define SOW_RULES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sow/board.h"
#include "sow/export.h"
#include "sow/status.h"

enum sow_family {
    SOW_OWARE,
    SOW_AWARI,
    SOW_JODU,
    SOW_JODU_IBADAN,
    SOW_JODU_STARVE,
    SOW_ODU,
    SOW_JERIN,
    SOW_DARRA,
    SOW_FAMILY_COUNT
};

enum { SOW_A = 0, SOW_B = 1 };

enum sow_state {
    SOW_STATE_NONE = 0, /* '-' */
    SOW_STATE_A = 1,    /* darra: A captured last */
    SOW_STATE_B = 2,    /* darra: B captured last */
    SOW_STATE_OPEN = 3, /* jerin: opening double move due */
};

typedef uint8_t sow_move;
#define SOW_MOVE_PASS ((sow_move)0xFF)
#define SOW_MOVE_DOUBLE ((sow_move)0x40)
#define SOW_MOVE_NONE ((sow_move)0xFE)

typedef struct sow_position {
    board_t board;
    uint16_t store[2];
    uint8_t side;
    uint8_t state;
    uint8_t pad_[2]; /* always zero, so positions can be compared and hashed bytewise */
} sow_position;

_Static_assert(sizeof(sow_position) == 48, "position is 48 bytes");

/* Why a game is over (or why it would be, for a repetition). */
enum sow_end {
    SOW_END_NONE = 0,
    SOW_END_NO_SEEDS,     /* mover has no seeds (oware, awari, jodu, jodu-ibadan) */
    SOW_END_NO_FEED,      /* opponent empty and mover cannot feed (oware, awari, odu, jerin) */
    SOW_END_FEW_SEEDS,    /* odu/jerin: <= 4 seeds left; darra: < 5 */
    SOW_END_EMPTY,        /* jodu-starve: board empty */
    SOW_END_ENDLESS,      /* every move of the mover sows forever */
    SOW_END_REPETITION,   /* a position repeated (history-dependent, see play) */
};

/* One legal move with what it does. */
struct sow_child {
    sow_move move;
    uint8_t captured[2]; /* seeds taken by A and by B during the move */
    sow_position pos;    /* the resulting position, stores updated */
};

/* All legal moves of a position, or the settlement if it is over. */
struct sow_movelist {
    int n;                 /* number of legal moves; 0 iff over */
    enum sow_end end;      /* SOW_END_NONE unless over */
    uint8_t settle[2];     /* if over: seeds the board gives A and B */
    int endless;           /* moves rejected because their sowing never ends */
    struct sow_child c[SOW_MAX_PITS + 1];
};

/* Optional memo of relay sowings (what never ends, and where the rest end).
 * Owned by one thread; pass NULL to go without. */
struct sow_relay_cache;
SOW_API struct sow_relay_cache *rules_cache_new(unsigned log2_entries);
SOW_API void rules_cache_free(struct sow_relay_cache *c);
/* Let a long relay sowing (one that may never end: proving it can take
 * minutes) be cut when *stop becomes non-zero (a Ctrl-C handler's flag).
 * A cut relay counts as never ending, so once *stop is set, move lists made
 * with this cache may miss moves: the caller must discard what it computed
 * after the stop.  stop NULL: never cut (the default). */
SOW_API void rules_cache_set_stop(struct sow_relay_cache *c, volatile sig_atomic_t *stop);

/* Counters a move generator may bump (for benchmarks and statistics). */
struct sow_stats {
    uint64_t pickups;      /* holes picked up (relay laps) */
    uint64_t endless;      /* sowings found never to end */
    uint64_t endless_pickups; /* pick-ups spent proving them (without memo hits) */
    uint64_t cache_hits;
};

/* How the repetition rule settles an endless cycle (docs/rules.md). */
enum sow_cycle {
    SOW_CYCLE_OWN_SIDES = 0, /* each player takes the seeds on his own side */
    SOW_CYCLE_SPLIT,         /* the board is split evenly (awari): net 0 */
};

struct ruleset {
    const char *name;      /* canonical name, e.g. "oware" */
    enum sow_family family;
    int pits;              /* holes per side, 1..18 */
    int holes;             /* 2 * pits */
    int nwords;            /* words of the board in use */
    int seeds;             /* starting seeds per hole */
    bool relay;            /* relay (multi-lap) sowing */
    enum sow_cycle cycle;  /* repetition settlement (rules_cycle_net) */
    /* Normalisation for the endgame tables' index: index_states rule-specific
     * states are indexed (darra 3: nobody / the mover / the opponent captured
     * last; else 1); rel_state gives p's state relative to its mover in
     * 0..index_states-1, or -1 if p is not indexed (jerin's opening);
     * state_of_rel is its inverse for a position with `side` to move. */
    int index_states;
    int (*rel_state)(const sow_position *p);
    uint8_t (*state_of_rel)(int rel, int side);
    /* Fill `out` with every legal move of `p` and its result. */
    void (*generate)(const struct ruleset *rs, const sow_position *p, struct sow_movelist *out,
                     struct sow_relay_cache *cache, struct sow_stats *st);
    /* Number of legal moves of `p` (what generate's n would be), without
     * making them where the rules allow a shortcut (perft's bulk count). */
    int (*count)(const struct ruleset *rs, const sow_position *p, struct sow_relay_cache *cache);
};

/* Look a rule set up by name or alias and fill `rs` for the given size.
 * pits = 0 or seeds < 0 take the defaults (6 and 4).  Returns SOW_OK, or
 * SOW_E_INPUT (unknown name, size out of range) with a one-line reason in *e
 * (e may be NULL); rs is untouched then.
 * Example: "chess" gives "unknown rule set 'chess' (known: oware awari ...)". */
SOW_API enum sow_status rules_init(struct ruleset *rs, const char *name, int pits, int seeds,
                                   struct sow_error *e);

/* Canonical names of all rule sets, NULL-terminated, in enum sow_family
 * order (the registry, rules.c, is indexed by it). */
SOW_API extern const char *const sow_rule_names[];

/* The start position. */
SOW_API sow_position rules_start(const struct ruleset *rs);

/* Check that p is a position this rule set can hold (sizes, totals, state).
 * Returns SOW_OK, or SOW_E_INPUT with a reason in *e (e may be NULL). */
SOW_API enum sow_status rules_validate(const struct ruleset *rs, const sow_position *p,
                                       struct sow_error *e);

static inline void rules_generate(const struct ruleset *rs, const sow_position *p,
                                  struct sow_movelist *out)
{
    rs->generate(rs, p, out, 0, 0);
}

/* Apply one move by name: returns index into `ml` of the move, or -1. */
SOW_API int rules_find_move(const struct sow_movelist *ml, sow_move m);

/* Seeds on the board, on one side. */
SOW_API int rules_board_seeds(const struct ruleset *rs, const sow_position *p);
SOW_API int rules_side_seeds(const struct ruleset *rs, const sow_position *p, int side);

/* The repetition settlement as net seeds for the player to move, from the
 * seeds on his side (own) and on the opponent's (other): the one place it is
 * computed (rules.c, the table builder and the closure solver all call it).
 * Example: own 3, other 1: oware +2, awari 0. */
static inline int rules_cycle_net(const struct ruleset *rs, int own, int other)
{
    return rs->cycle == SOW_CYCLE_SPLIT ? 0 : own - other;
}

/* Endless-cycle (repetition) settlement of p, as net seeds for the player to
 * move: rules_cycle_net of p's sides. */
SOW_API int rules_cycle_value(const struct ruleset *rs, const sow_position *p);

/* Seeds the repetition settlement gives each player, times two (awari may
 * split an odd count into halves). */
SOW_API void rules_repetition_settle2(const struct ruleset *rs, const sow_position *p, int out2[2]);

/* "oware awari ... darra" (and, if aliases, "; aliases abapa ...") into buf,
 * from the registry. */
SOW_API void rules_names_line(char *buf, size_t len, bool aliases);

/* Human-readable name of an ending. */
SOW_API const char *rules_end_name(enum sow_end e);

SOW_API bool rules_same_position(const sow_position *x, const sow_position *y);

#endif
