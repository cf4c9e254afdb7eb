/* sow — the alpha-beta engine: strong play in positions beyond exact reach
 * (docs/engine.md).
 *
 * Negamax alpha-beta with principal-variation search, iterative deepening
 * with aspiration windows, the transposition table of tt.h (engine entries),
 * move ordering (engine_pick.c), a per-rule-set evaluation (eval.c), exact
 * knowledge (terminal positions, endgame tables, small levels solved in
 * memory on demand), repetitions on the path settled by the rule set's
 * repetition rule, and Lazy SMP over the shared table.
 *
 * Scores are centi-seeds from the point of view of the player to move: an
 * estimate of the value of docs/rules.md (net future captures), 100 = one
 * seed.  A *proven* score is an exact value (times 100): it rests only on
 * terminal positions and endgame tables, never on the evaluation or on a
 * repetition (repetition scores depend on the path: never proven, never
 * stored as proven).
 *
 * Thread-safety: an engine is used by one caller at a time, except
 * engine_stop, which any thread (or a signal handler through the stop flag)
 * may call while engine_search runs.  engine_search starts and joins its own
 * helper threads (Lazy SMP).  Engines are independent of each other.
 */
#ifndef SOW_ENGINE_H
#define SOW_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sow/export.h"
#include "sow/rules.h"
#include "sow/status.h"
#include "sow/tables_probe.h"

#define ENGINE_MAX_PLY 128
#define ENGINE_MAX_HISTORY 1024
#define ENGINE_INF 30000
/* Evaluation terms (eval.c, docs/engine.md "Evaluation"), centi-seeds.
 * The classic terms, each a count of the mover's minus the opponent's: */
enum {
    EW_SIDE,      /* seeds in the mover's row minus the opponent's */
    EW_MOBILITY,  /* non-empty holes, mover minus opponent */
    EW_VULN,      /* opponent's vulnerable holes minus the mover's */
    EW_BIG,       /* seeds beyond a full lap in the mover's holes (a kroo) */
    EW_RELAY,     /* relay games: holes whose sowing continues (lands on seeds) */
    EW_REACH,     /* holes whose last seed lands in the opponent's row */
    EW_TEMPO,     /* the side to move */
    EW_COUNT
};
/* The further terms: capture threats, one way each (the mover moves first). */
enum {
    EX_THREAT,     /* the mover's holes whose sowing (less than a lap) ends on a
                      vulnerable hole of the opponent */
    EX_THREATENED, /* the same for the opponent against the mover's row */
    EX_COUNT
};
/* Hole terms: hole[k][c - 1] for c seeds (c >= EVAL_BUCKETS: the last) in
 * the k-th hole of a row (k = 0: the row's first), mover's minus
 * opponent's. */
#define EVAL_BUCKETS 12
/* All weights as one vector (eval_features, eval_weights_vector): w, x,
 * then hole row by row. */
#define EVAL_NFEAT (EW_COUNT + EX_COUNT + SOW_MAX_PITS * EVAL_BUCKETS)

struct eval_weights {
    int w[EW_COUNT];
    int x[EX_COUNT];
    int hole[SOW_MAX_PITS][EVAL_BUCKETS];
};

/* The committed weights of a rule set (docs/engine.md "Evaluation"): the
 * fitted weights file compiled in for it (tables/eval/), else the tuned
 * classic terms of its family. */
SOW_API void eval_default_weights(const struct ruleset *rs, struct eval_weights *w);
/* The tuned classic weights of rs's family (the further terms 0). */
SOW_API void eval_classic_weights(const struct ruleset *rs, struct eval_weights *w);
/* Parse a weights value into w: "a,b,c,..." (EW_COUNT integers: the classic
 * terms, the others 0), or the name of a weights file (docs/engine.md
 * "Weights files").  SOW_OK, or SOW_E_INPUT (SOW_E_IO: an unreadable file)
 * with a one-line reason. */
SOW_API enum sow_status eval_parse_weights(const char *s, struct eval_weights *w,
                                           struct sow_error *e);
/* A weights file's text (len bytes, name for messages) into w: SOW_OK or
 * SOW_E_INPUT with a one-line reason naming the line. */
SOW_API enum sow_status eval_weights_read(const char *text, size_t len, const char *name,
                                          struct eval_weights *w, struct sow_error *e);
/* The weights file of w for rules (name) and pits into buf (at most len
 * bytes with the NUL): its length, or -1 if it does not fit. */
SOW_API int eval_weights_write(const struct eval_weights *w, const char *rules, int pits,
                               const char *comment, char *buf, size_t len);
/* w as one vector of EVAL_NFEAT integers, and back. */
SOW_API void eval_weights_vector(const struct eval_weights *w, int *v);
SOW_API void eval_weights_from_vector(const int *v, struct eval_weights *w);
/* The feature vector of p (EVAL_NFEAT counts, mover's view): eval_position
 * is the dot product with eval_weights_vector, clamped (pure, thread-safe;
 * the slow twin of the evaluation, and the fitter's input). */
SOW_API void eval_features(const struct ruleset *rs, const sow_position *p, int *f);
/* Static evaluation of p for its mover, centi-seeds (pure, thread-safe). */
SOW_API int eval_position(const struct ruleset *rs, const struct eval_weights *w,
                          const sow_position *p);

struct sol;

/* engine_opts.lmr: late-move reductions as the rule set's default, off or on. */
enum engine_lmr { ENGINE_LMR_DEFAULT = 0, ENGINE_LMR_OFF, ENGINE_LMR_ON };

/* Whether late-move reductions are on by default in rs: in oware and awari,
 * where matches showed they pay; off in the others, where they showed no
 * measurable gain (docs/engine.md "Search").  Pure, thread-safe. */
SOW_API bool engine_lmr_default(const struct ruleset *rs);

struct engine_opts {
    int threads;              /* >= 1 */
    unsigned hash_mb;         /* transposition table, MiB (>= 1) */
    const struct tb_set *tb;  /* endgame tables, or NULL (borrowed) */
    /* Solve the lowest levels in memory (the table builder), on demand up
     * to each root's seed count, while they add up to at most this many
     * positions (0: default 1 M, < 0: none); loaded tables count as solved
     * and levels start above them. */
    long long mem_levels;
    const struct eval_weights *weights; /* NULL: the defaults */
    /* Drive each iteration by MTD(f) null-window tests instead of PVS with
     * aspiration windows (measured in docs/engine.md; PVS is the default). */
    bool mtdf;
    /* A solution file (search.h search_solution_open), or
     * NULL (borrowed): its positions are exact knowledge, like tables
     * (docs/engine.md "Solution files"). */
    const struct sol *solution;
    /* Measurement only (sow bench engine --lockstep): the threads take
     * turns of 256 nodes instead of running at once, which simulates T
     * equal cores on a loaded machine; deterministic. */
    bool lockstep;
    /* Late-move reductions (docs/engine.md "Search"): a move that captures
     * no more than the other side's, searched after the first three of a
     * node at least 3 plies from the leaves, is tried one ply shallower
     * (two, past the fifth move 6 plies up) with a null window first, and
     * searched in full only if that fails high.  Proven values stay exact.
     * ENGINE_LMR_DEFAULT (0) is engine_lmr_default's choice for the rule set. */
    enum engine_lmr lmr;
    /* Capture search below the leaves (docs/engine.md "Search"): at most
     * this many plies (0: none, the evaluation at the leaves) of moves that
     * net the mover seeds, each node's evaluation standing for its quiet
     * moves (the mover may always decline to capture). */
    int qdepth;
    /* At a root whose value is proven, of the moves that keep it play the
     * one after which the smallest share of the opponent's replies keep
     * his (docs/engine.md "Swindle"): as good against perfect play, more
     * chances for an imperfect opponent to go wrong.  Costs searches of
     * every move and reply, within the root's limits; none under
     * engine_limits.infinite or no limit at all. */
    bool swindle;
    /* At a root the tables hold, where no exit keeps its value and the
     * levels hold no bounds for its children, the exact solver's closure of
     * the root tells which move keeps it (docs/engine.md "Tables at the
     * root"): at most this many positions (0: ENGINE_ROOT_CLOSURE, < 0:
     * never), at most half of the move's time (500 k positions in a search
     * limited by depth or nodes alone), kept for the next roots. */
    long long root_closure;
};

#define ENGINE_ROOT_CLOSURE 4000000

/* Limits of one search; zero fields are "none". */
struct engine_limits {
    int depth;                /* plies */
    double seconds;           /* wall time for the whole search (hard: the
                                 iteration running then is given up) */
    double soft;              /* a game clock's share (timeman): after each
                                 completed iteration, stop once this much
                                 time has passed times a factor of the best
                                 move's stability, 0.7 while it stays, up
                                 to 2.8 after changes; at once after the
                                 first with one legal move.  0: none */
    bool cpu_clock;           /* seconds are the calling thread's CPU time
                                 (util_cpu_now: the main thread's; for one
                                 thread on a shared machine) */
    uint64_t nodes;           /* stop after about this many nodes */
    bool infinite;            /* until engine_stop (depth cap ENGINE_MAX_PLY) */
};

/* One iteration's report (also the final result). */
struct engine_info {
    int depth, seldepth;
    int score;                /* centi-seeds */
    bool proven;              /* score is exact (score / 100 is the value) */
    bool bound_lower, bound_upper; /* aspiration fail (info ... lowerbound) */
    uint64_t nodes, tb_hits;
    double seconds;
    int hashfull;             /* per mille */
    int pv_len;
    sow_move pv[ENGINE_MAX_PLY];
};

struct engine_result {
    struct engine_info info;  /* the last completed iteration */
    sow_move best;            /* SOW_MOVE_NONE if the game is over */
    bool over;                /* no legal move: score is the settlement */
    bool stopped;             /* ended by engine_stop / the stop flag */
    uint64_t main_nodes;      /* nodes of the main thread alone (Lazy SMP) */
    uint64_t deferred;        /* moves put last because another thread was in
                                 them (ABDADA, threads > 1; all threads) */
    /* engine_opts.swindle: after best, swindle_keep of the opponent's
     * swindle_replies replies keep his value (those whose value is not
     * known exactly counted as keeping it); both 0 where no swindle was
     * tried, or best ends the game. */
    int swindle_keep, swindle_replies;
};

struct engine;

/* A new engine in *out: SOW_OK, or SOW_E_NOMEM (table, threads' state or
 * levels) with a one-line reason and *out NULL.  rs must outlive it. */
SOW_API enum sow_status engine_new(const struct ruleset *rs, const struct engine_opts *o,
                           struct engine **out, struct sow_error *e);
SOW_API void engine_free(struct engine *e);
/* Forget the table, killers and history (a new game; reproducible counts). */
SOW_API void engine_clear(struct engine *e);
/* Called after each completed iteration from the searching thread. */
SOW_API void engine_set_info(struct engine *e, void (*cb)(void *arg, const struct engine_info *i),
                     void *arg);
/* Optional external stop flag (e.g. set by a SIGINT handler). */
SOW_API void engine_set_stop_flag(struct engine *e, volatile sig_atomic_t *flag);

/* Solve in memory the small levels a search of p may use (see
 * engine_opts.mem_levels) now rather than at the start of engine_search:
 * a protocol calls it when the position is set, so that `go` ... `stop`
 * answers at once.  Optional. */
SOW_API void engine_prepare(struct engine *e, const sow_position *p);

/* Search p, reached after the positions hist[0..nhist-1] (oldest first,
 * for repetitions; may be 0).  Always returns a legal best move unless the
 * game is over, even when stopped at once. */
SOW_API void engine_search(struct engine *e, const sow_position *p, const sow_position *hist,
                           int nhist, const struct engine_limits *lim, struct engine_result *r);
/* Ask a running search to stop soon (any thread). */
SOW_API void engine_stop(struct engine *e);
/* Total nodes (children made by a move and searched) since engine_new. */
SOW_API uint64_t engine_nodes(const struct engine *e);

#endif
