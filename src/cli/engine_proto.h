/* sow engine, inside: the parts of cmd_engine.c's protocol (docs/engine.md
 * "Protocol"), shared by its files.
 *
 *   cmd_engine.c       the command loop: lines read, commands dispatched,
 *                      the session set up and ended
 *   engine_options.c   uci and setoption (the option table), and the engine
 *                      the options make: rule set, tables, solution file
 *   engine_position.c  position: startpos, pos TOKEN, fen F, the moves
 *                      (also oware hole letters, run together or not)
 *   engine_search.c    search control: go and its limits (a book move
 *                      instead where the book holds the position), the
 *                      search thread, go ponder and ponderhit's clock
 *                      thread, stop
 *   engine_answers.c   what the engine says: every line out, info (score,
 *                      pv), bestmove [ponder], letter mode
 *
 * Letter mode (the oware GUIs' notation, Aualé's): after a `position` that
 * used fen or hole letters, or always with --letters, the answers are what
 * such a GUI parses: moves as letters, the pv as one run of letters, scores
 * as `score cp` (never `score exact`), `bestmove 0000` when the game is over
 * (no legal move, a repeated position, or a player holding more than half
 * of the seeds).  With Ponder true or --letters, `bestmove M ponder R` when
 * the PV has a reply.
 *
 * Thread-safety: struct proto is the session's, on the heap.  proto_say:
 * any thread (every line out goes through it, under `out`).  proto_on_info
 * and proto_bestmove: the search thread (engine_search.c's search_main).
 * Every other function: the main thread, which reads the commands.  While a
 * search runs (searching) the main thread leaves the search's snapshot
 * (infinite .. over) and the engine alone, and refuses every command that
 * would change them (setoption, position, go, ucinewgame); the flags the
 * two threads share are __atomic; the clock thread's cancel is under `tmu`. */
#ifndef SOW_CLI_ENGINE_PROTO_H
#define SOW_CLI_ENGINE_PROTO_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "book/book.h"
#include "sow/engine.h"
#include "sow/search.h"

#define HIST_MAX ENGINE_MAX_HISTORY
/* Swindle's default (docs/engine.md "Swindle") */
#define PROTO_SWINDLE false

struct proto {
    pthread_mutex_t out;
    /* options */
    char rules[32];
    long pits, seeds, hash, threads;
    char tables[1024];          /* a tables path (tables_path.h), or "": none */
    long table_cache;           /* TableCache: the block cache, MiB (0: tb_open's default) */
    char solution[1024];        /* engine-strength: a solution file, or "" */
    bool have_weights;
    struct eval_weights weights;
    bool own_book;              /* OwnBook: play from the opening book (default true) */
    bool swindle;               /* Swindle: engine_opts.swindle (default PROTO_SWINDLE) */
    long root_closure;          /* RootClosure: engine_opts.root_closure, thousands
                                   of positions (0: none) */
    char book_file[1024];       /* Book: a book file, or "" for sow's own (book/builtin.h) */
    long book_margin;           /* BookMargin: choose among moves this close to the best */
    /* state */
    struct ruleset rs;
    struct engine *e;
    struct tb_set *tb;
    struct sol *sol;
    struct book book;           /* the book in use, if have_book */
    bool have_book;
    uint64_t book_rng;          /* book_choose's random state */
    /* Tables without Solution: the position DIR's solution file in use was
     * found for (the last `position` command's, before its moves) */
    sow_position sol_base;
    bool dirty;                 /* options changed: rebuild the engine */
    sow_position start, pos;
    sow_position hist[HIST_MAX];
    int nhist;
    sow_position phist[HIST_MAX]; /* the history a `position` command builds: a
                                   * rejected one leaves hist as it was */
    bool letters;               /* the last `position` used fen or letters */
    bool force_letters;         /* --letters: letter mode whatever `position` used */
    bool ponder_opt;            /* setoption Ponder: bestmove names a ponder move */
    /* the search thread */
    pthread_t th;
    bool searching;
    volatile sig_atomic_t stop_req; /* stop or quit received: the engine's stop flag */
    bool infinite;
    struct engine_limits lim;
    sow_position spos;
    sow_position shist[HIST_MAX];
    int snhist;
    bool sletters;              /* letter mode for this search's answers */
    const char *over;           /* letter mode: why the game is over (no search), or NULL */
    volatile int done;          /* the search thread has printed bestmove */
    /* go ponder: 1 until ponderhit or stop (__atomic; the search thread
     * holds bestmove back while it is set); the go command's time limit,
     * counted from ponderhit (0: none) */
    int pondering;
    double ponder_secs;
    /* the clock ponderhit starts: a thread that sets stop_req at deadline
     * (CLOCK_MONOTONIC) unless cancelled first; tmu guards tcancel */
    pthread_t timer;
    bool timer_on;
    pthread_mutex_t tmu;
    pthread_cond_t tcv;
    bool tcancel;
    struct timespec deadline;
};

static inline bool proto_is_oware(const struct proto *P)
{
    return P->rs.family == SOW_OWARE;
}

/* Letter mode (the header comment): oware only, the notation is oware's. */
static inline bool proto_letter_mode(const struct proto *P)
{
    return (P->letters || P->force_letters) && proto_is_oware(P);
}

/* engine_answers.c */
/* One line out (printf's fmt and a newline), flushed; any thread. */
void proto_say(struct proto *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define ERR(P, ...) proto_say(P, "info string error: " __VA_ARGS__)
/* The engine's info callback (engine_set_info, arg P): one `info` line. */
void proto_on_info(void *arg, const struct engine_info *in);
/* The search's answer r: bestmove, or game over (over: why) and bestmove
 * (none) or 0000. */
void proto_bestmove(struct proto *P, const struct engine_result *r, const char *over);
/* Letter mode: why the game is over at P->pos (the oware GUIs' end of
 * game: no search then), or NULL. */
const char *proto_game_ended(const struct proto *P);

/* engine_options.c */
/* The rule set of the options rules, pits, seeds, its start position
 * (history cleared); the engine is to be rebuilt.  0, or -1 with err. */
int proto_setup_rules(struct proto *P, char *err, int errlen);
/* The engine of the options, (re)built if they changed; 0, or -1 after
 * one error line. */
int proto_ensure_engine(struct proto *P);
/* A `position` command's base p, before its moves (Tables: the solution
 * file that holds it). */
void proto_new_base(struct proto *P, const sow_position *p);
/* A protocol number: decimal digits only, in lo..hi. */
bool proto_parse_dec(const char *s, long long lo, long long hi, long long *out);
void proto_uci(struct proto *P);
void proto_setoption(struct proto *P, char *args);
/* The tables a session starts with: the default tables path where it
 * exists (tables_path.h), else none. */
void proto_default_tables(struct proto *P, bool tell);

/* engine_position.c */
void proto_position(struct proto *P, char *args);

/* engine_search.c */
void proto_go(struct proto *P, char *args);
void proto_ponderhit(struct proto *P);
/* The search thread joined once it has answered (and ponderhit's clock). */
void proto_join_search(struct proto *P);
/* stop: the search stopped, its answer printed, the thread joined. */
void proto_stop(struct proto *P);

#endif
