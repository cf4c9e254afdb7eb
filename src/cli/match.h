/* sow match, inside: the parts of cmd_match.c's command, shared by its files
 * (docs/engine.md "Matches").
 *
 *   cmd_match.c       options, checks, the run from setup to summary
 *   match_player.c    the players: SPEC text, engines in process, programs
 *                     speaking the engine protocol over pipes
 *   match_openings.c  the openings: chosen and balanced, or read from a file
 *   match_play.c      one game, and the worker threads that play them
 *   match_report.c    --resume's reading of --out, the summary and its Elo
 *
 * Thread-safety: struct mctx is shared by the workers; its `next` is taken
 * atomically, `score`/`text`/`tcleft`/`tcdone` are per game, the rest is
 * written under `lock` or before the workers start. */
#ifndef SOW_CLI_MATCH_H
#define SOW_CLI_MATCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "book/book.h"
#include "sow/engine.h"
#include "sow/search.h"

#define MAXG 4096

enum pkind { P_SOW, P_THRESHOLD, P_GREEDY, P_CMD };

struct pspec {
    enum pkind kind;
    int depth, threads;
    double ms;
    unsigned hash;
    const char *tables;        /* a tables path (tables_path.h); "": none; NULL: the default */
    long table_cache;          /* tablecache=MB: the tables' block cache (0: the default) */
    const char *solution;      /* a solution file (sow solve --save) */
    const char *book;          /* an opening book file, or "builtin" (sow's own) */
    bool have_weights;
    enum engine_lmr lmr;       /* lmr=0|1: late-move reductions off/on; absent: the
                                  rule set's default (engine_lmr_default) */
    int qdepth;                /* qs=N: capture-search plies below the leaves */
    bool swindle;              /* swindle=0|1: engine_opts.swindle */
    long long root_closure;    /* rootclosure=K: engine_opts.root_closure, K thousand
                                  positions (0 given: -1, none; not given: 0) */
    struct eval_weights w;
    char cmd[1024];
    char text[1100];
};

struct mctx {
    struct ruleset rs;
    struct pspec spec[2];
    struct tb_set *tb[2];
    struct sol *sol[2];
    struct book book[2];       /* spec[k].book's, if have_book[k] */
    bool have_book[2];
    int games, oplies, maxplies;
    double defms;
    bool cpu_clock;            /* --clock cpu: times are the thinking thread's CPU time */
    double balance;            /* seeds; < 0: openings not balanced */
    int bdepth;                /* depth of the balancing search */
    sow_position *open;        /* per pair of games: the opening */
    int *omargin;              /* its estimated margin for South, centi-seeds */
    int *omoves;               /* its random moves from the start (0: from --openings) */
    long ncand;                /* candidates tried */
    int maxoplies;             /* the longest opening used */
    bool have_margin;          /* omargin holds the balancing search's estimates */
    /* (engstr) --balance-exact: candidates judged by their exact value */
    struct sol *bsol;          /* a solution file holding the openings, or NULL */
    const char *bsol_path;
    bool *oexact;              /* per opening: omargin is exact (seeds x 100) */
    int nexact;                /* openings judged exactly */
    int next;                  /* next game to play (atomic) */
    /* progress (under lock): games with a result (resumed ones too), a's
     * points in them, games ended in this run and when it began */
    int done, ended;
    double points, t_run;
    FILE *fo;                  /* --out: each game appended as it ends */
    double *score;             /* per game: points of player a */
    char **text;               /* per game: the line for --out */
    double grace;              /* --grace, seconds */
    /* --tc: each player's clock for a game, ms, and what each move adds */
    bool tc;
    double tc_ms, tc_inc;
    double (*tcleft)[2];       /* per game played in this run: the clocks left at its end, ms */
    bool *tcdone;              /* per game: tcleft holds them */
    /* --ponder: the programs (cmd:) that think on the opponent's time, and
     * over this run's games (under lock, as each worker ends) the ponders
     * each began and those the opponent's move hit */
    bool ponder[2];
    long ptries[2], phits[2];
    bool failed;
    int fail_status;           /* the exit status when failed */
    char why[400];
    int opening;               /* workers still opening their players (under lock) */
    pthread_cond_t opened;     /* signalled as each has */
    pthread_mutex_t lock;
};

/* Set to the signal's number by SIGINT or SIGTERM (match_on_sigint) while
 * a match runs: the workers stop their games at once (the engines' and
 * searches' stop flag, the programs' waits), the openings' search stops. */
extern volatile sig_atomic_t match_stop;

/* How long a program (cmd:) may take to answer isready when it starts;
 * --grace is added to it, to a move's time, and to MATCH_STOP_WAIT, how
 * long it may take to answer stop after a ponder. */
#define MATCH_START_WAIT 10.0
#define MATCH_STOP_WAIT 1.0

struct player {
    const struct pspec *sp;
    struct engine *e;
    struct search_ctx *s;
    /* cmd: a program in its own process group (pid: its leader), read
     * through rfd with a deadline (a FILE would block for good); its
     * stderr goes to errf, an unlinked temporary file, so that one line
     * of it can be quoted when it fails and none interleaves with ours */
    pid_t pid;
    FILE *to;
    int rfd;
    FILE *errf;
    char rbuf[16384];
    size_t rlen;
    bool gone; /* killed or exited: reopened before the next game */
    /* --ponder: after its move it searches, by `go ponder`, the position
     * after the reply its bestmove named (ptok), until the opponent moves:
     * `ponderhit` if that was the reply, else `stop` and its answer
     * discarded */
    char ptok[16];
    bool pondering;
    sow_move pmove;
    long ptries, phits;
};

/* match_player.c */
int match_parse_spec(const char *s, struct pspec *sp, char *err, int errlen);
int player_open(struct mctx *M, int who, struct player *pl, char *err, int errlen);
void player_close(struct player *pl);
void player_newgame(struct player *pl);
/* The move of the player at position p (history hist[0..nh-1], the game
 * from its opening position `open` by moves mv[0..nm-1]).  With --tc,
 * left[k] is the time player k (0: a) has left on its clock, ms, and the
 * move's time comes from it (timeman.h).  SOW_MOVE_NONE if the player
 * failed, with why it forfeits in why (a program that did not answer in
 * time is killed, its process group with it), or if match_stop was set. */
sow_move player_move(struct mctx *M, struct player *pl, const sow_position *p,
                     const sow_position *hist, int nh, const sow_position *open,
                     const sow_move *mv, int nm, const double left[2], char *why, size_t wlen);
/* --ponder: player pl, having just made move mv[nm-1] (p: the position
 * after it; hist[0..nm-1] as for player_move; the clocks left[] updated),
 * starts `go ponder` on the reply it named, where that reply is legal and
 * the game goes on after it. */
void player_ponder(struct mctx *M, struct player *pl, const sow_position *p,
                   const sow_position *hist, const sow_position *open, const sow_move *mv,
                   int nm, const double left[2]);
/* The end of pl's pondering, if any (the game ended): `stop`, and its
 * answer read; a program that does not give it within --grace plus a
 * second is killed (started again for the next game). */
void player_unponder(struct mctx *M, struct player *pl);

/* An input file (--openings, --resume's --out) through fileio: a regular
 * file, or NULL with the reason in why (a FIFO, device or directory is
 * refused, never waited on). */
FILE *match_open_input(const char *path, char *why, int whylen);

/* match_openings.c: M->open[0..games/2-1] and their margins; 0, or -1 with
 * a message in err (match_stop set: interrupted). */
int match_choose_openings(struct mctx *M, char *err, int errlen);
int match_read_openings(struct mctx *M, const char *path, char *err, int errlen);

/* match_play.c */
void match_on_sigint(int sig);
void *match_worker(void *arg); /* arg: the struct mctx */

/* The results of the games played (cmd_match.c counts, match_report.c
 * prints). */
struct match_tally {
    int played, w, d, l; /* games, and a's wins, draws, losses */
    double sum, sum2;    /* a's points, and the sum of their squares */
    int pair[5];         /* the openings with both games played, by a's points
                          * in the two: 0, 0.5, 1, 1.5, 2 */
};

/* match_report.c */
double match_elo(double s);
void match_print_report(const struct mctx *M, const struct match_tally *t, const char *openings,
                        double secs);
int match_resume_read(struct mctx *M, const char *path, const char *head, char **heads,
                      char *err, int errlen);

#endif
