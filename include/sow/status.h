/* sow — errors are values.
 *
 * Every library function that can fail for a reason the user should hear
 * returns an enum sow_status and writes one line (no trailing newline, no
 * "sow CMD:" prefix) into a struct sow_error beside it.  The command line maps
 * the status to its exit code in one place (cli_exit_code, src/cli/common.c),
 * never by reading the message.
 *
 *   status            meaning                                  exit code
 *   SOW_OK            success                                  0
 *   SOW_E_INPUT       bad input: usage, rule set, position,    2
 *                     move, damaged or foreign file
 *   SOW_E_TOO_BIG     refused up front: needs more than the    2
 *                     --memory budget or a format limit allows
 *   SOW_E_IO          failure while working: read, write       1
 *   SOW_E_NOMEM       an allocation failed while working, or   1
 *                     a solve passed the solver's in-memory
 *                     limits (search_solve)
 *   SOW_E_INTERRUPTED stopped by Ctrl-C (SIGINT) or SIGTERM    130
 *
 * Example: tb_open for oware 2x6 on a directory whose oware-2x6-012.sowtb
 * holds an awari table returns SOW_E_INPUT with msg
 * "tables/oware-2x6-012.sowtb: foreign table: holds awari 2x6 level 12,
 * expected oware 2x6 level 12".
 *
 * sow_fail replaces control characters in the message by '?': one line,
 * whatever the quoted paths hold.
 *
 * Thread-safety: sow_fail writes only the struct it is given.
 */
#ifndef SOW_STATUS_H
#define SOW_STATUS_H

#include "sow/export.h"

enum sow_status {
    SOW_OK = 0,
    SOW_E_INPUT,
    SOW_E_TOO_BIG,
    SOW_E_IO,
    SOW_E_NOMEM,
    SOW_E_INTERRUPTED,
};

#define SOW_ERROR_MSG 320

struct sow_error {
    enum sow_status status;
    char msg[SOW_ERROR_MSG];
};

/* Record st with a printf-style message in *e (if e is not NULL); returns st,
 * so that a failing path reads `return sow_fail(e, SOW_E_IO, "...", ...);`. */
SOW_API enum sow_status sow_fail(struct sow_error *e, enum sow_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Replace control characters in s by '?' in place: messages quote paths,
 * names and arguments, and must stay one printable line. */
SOW_API void sow_scrub(char *s);

/* A short name of the status ("bad input", "I/O error", ...). */
SOW_API const char *sow_status_name(enum sow_status st);

#endif
