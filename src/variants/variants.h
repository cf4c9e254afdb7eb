/* sow — rule-variant studies: the solved-start atlas and play statistics.
 *
 * Atlas: for one rule set and size (holes per side N, starting seeds per hole
 * S) the exact value of the start position for the first player, every first
 * move that achieves it, the length of the solver's principal variation, and
 * the work it took; within a time budget, else the bounds proven so far.
 *
 * Play statistics: G games from the start between two random players, or
 * between two depth-limited alpha-beta engines maximising net captures (after
 * a few random opening plies, so the games differ), with counts per outcome and ending rule and move-generator
 * statistics (struct sow_stats).  Each game's random stream is derived from
 * (seed, rule-set name, player kind, game index) only, so the numbers do not
 * depend on the thread count or the order the games run in.
 *
 * Game record in play (what a "move" is): one ply; a game ends when the mover
 * has no legal move (enum sow_end of the generator), when a position repeats
 * (board, side and state equal to an earlier one of the game: settled by
 * rules_repetition_settle2), or after VAR_MOVE_CAP plies (settled the same way
 * as a repetition).  Winner: more seeds in store plus settlement.
 *
 * Thread-safety: every function is reentrant; var_atlas_solve and var_play
 * run their own OpenMP threads inside (var_play: games in parallel).
 */
#ifndef SOW_VARIANTS_H
#define SOW_VARIANTS_H

#include <stdbool.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"

/* ---- atlas -------------------------------------------------------------- */

struct var_atlas_opts {
    int threads;              /* solver threads (>= 1) */
    unsigned hash_mb;         /* solver transposition table, MiB */
    double budget;            /* seconds per instance (<= 0: none) */
    /* Endgame tables: directory (NULL: none).  Levels whose entry count is
     * at most tb_build_entries are built there first when missing (0: only
     * use what is present). */
    const char *tables_dir;
    uint64_t tb_build_entries;
    volatile int *stop;       /* user interrupt (Ctrl-C); may be NULL */
    /* One-line progress notes (may be NULL). */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
};

#define VAR_BEST_LEN 64

struct var_atlas_result {
    bool exact;               /* value is exact; else [lower, upper] proven */
    bool over;                /* the start has no legal move */
    bool interrupted;         /* the user stopped it: nothing valid */
    int value, lower, upper;
    int nbest;
    sow_move best[SOW_MAX_PITS + 1]; /* every first move achieving value */
    char best_str[VAR_BEST_LEN];     /* their names joined by ' ' ("-" if none) */
    int pv_len;               /* moves in the principal variation (exact only) */
    bool pv_repeats;          /* the PV ends at a repeated position */
    int tb_level;             /* highest table level used, -1 none */
    uint64_t nodes, tb_hits;
    double seconds;           /* everything, table building included */
    double tb_seconds;        /* of which building tables */
};

/* Solve the start of rs.  SOW_OK: done (exact or open, r->exact says);
 * SOW_E_INTERRUPTED: the user stopped it (r->interrupted); else the solver's
 * failure (SOW_E_NOMEM: no memory for the solver or its watchdog thread;
 * SOW_E_IO: the solver contradicted itself) with the reason in *e (e may be
 * NULL). */
enum sow_status var_atlas_solve(const struct ruleset *rs, const struct var_atlas_opts *o,
                                struct var_atlas_result *r, struct sow_error *e);

/* ---- play statistics ------------------------------------------------------ */

#define VAR_MOVE_CAP 2000     /* plies before a game is stopped (VAR_END_CAP) */
#define VAR_LEN_BINS 64       /* game-length histogram bins of VAR_LEN_BIN plies */
#define VAR_LEN_BIN 10

/* Why a game ended: enum sow_end values 1..6 as the generator reports them,
 * SOW_END_REPETITION when play repeated a position, and the move cap. */
enum { VAR_END_CAP = SOW_END_REPETITION + 1, VAR_END_COUNT };

enum var_player { VAR_RANDOM, VAR_ENGINE };

struct var_play_opts {
    enum var_player player;
    int games;
    uint64_t seed;
    int engine_depth;         /* VAR_ENGINE: alpha-beta depth (plies), 1..64 */
    int random_plies;         /* VAR_ENGINE: random opening plies (default 2) */
    int threads;              /* games in parallel */
    volatile int *stop;
    /* Called with the number of games finished (from one thread at a time). */
    void (*progress)(void *arg, int done, int games);
    void *progress_arg;
    /* Optional per-game records, length opts.games: plies, result for the
     * first player (+1 win, 0 draw, -1 loss), ending (VAR_END_* / sow_end). */
    int *game_len;
    int8_t *game_result;
    uint8_t *game_end;
};

struct var_play_stats {
    int games;
    int wins, draws, losses;          /* for the first player */
    uint64_t plies;                   /* moves played in all games */
    double len_mean, len_sd;          /* game length in plies (population sd) */
    int len_min, len_max;
    uint64_t positions;               /* positions met (final ones included) */
    uint64_t live_positions;          /* of which with >= 1 legal move */
    uint64_t moves_generated;         /* legal moves of the live positions */
    uint64_t pickups, endless;        /* struct sow_stats totals */
    uint64_t captured;                /* seeds captured during moves */
    int ends[VAR_END_COUNT];          /* games per ending */
    uint64_t len_hist[VAR_LEN_BINS];  /* last bin: everything longer */
    double seconds;
};

/* Play opts->games games of rs from its start.  SOW_OK, or with a reason in
 * *e (e may be NULL): SOW_E_INPUT (bad options: no games, engine depth < 1),
 * SOW_E_NOMEM, SOW_E_INTERRUPTED (*opts->stop set). */
enum sow_status var_play(const struct ruleset *rs, const struct var_play_opts *o,
                         struct var_play_stats *st, struct sow_error *e);

/* Short name of an ending for tables and CSV ("no-seeds", ..., "cap"). */
const char *var_end_name(int end);

/* The per-game random stream seed (exposed for the tests). */
uint64_t var_game_seed(uint64_t seed, const char *rules, enum var_player pl, int game);

#endif
