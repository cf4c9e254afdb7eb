/* sow — file safety: how every file sow reads or writes is opened.
 *
 * Rules (docs/testing.md "Trust"; each one answers a failure seen in practice):
 *
 *  1. Inputs are regular files.  fio_open_input opens with O_NONBLOCK, so a
 *     FIFO named like a table file cannot hang the reader, checks the opened
 *     file with fstat and refuses a FIFO, device, directory or socket
 *     (SOW_E_INPUT).  Symbolic links are followed when reading: a link to a
 *     regular file is read like the file.
 *
 *  2. Outputs are regular files, replaced whole.  fio_out_begin refuses a
 *     target that exists and is not a regular file: a FIFO, device, directory
 *     or socket, and also a symbolic link (SOW_E_INPUT; sow never follows a
 *     link when writing: name the file itself).  The data go to a temporary
 *     file next to the target, created with O_CREAT|O_EXCL|O_NOFOLLOW (never
 *     an existing path, never through a link), and fio_out_commit publishes it
 *     by fsync + rename + fsync of the directory, after checking the target
 *     again.  A reader sees the old file or the new one, never a part.
 *
 *       target "out.csv"            temporary "out.csv.tmp.4711" (pid)
 *       absent or regular file  ->  written, fsync'd, renamed over out.csv
 *       symlink, FIFO, device,  ->  refused before any work, exit 2;
 *       directory, socket           the target is left as it was
 *
 *  3. One builder per table directory.  fio_lock_dir takes an exclusive
 *     flock(2) on DIR/.sowtb.lock (created if missing, never removed: removing
 *     it would let two processes lock two different files).  A second builder
 *     waits for the first (polling, so that Ctrl-C still stops the wait) and
 *     then sees the levels the first one published.  The lock goes with the
 *     process: a killed builder never leaves a stale lock.
 *
 *  4. A directory that cannot be written is found before any work:
 *     fio_dir_writable creates and removes a probe file in it.
 *
 *  5. A killed writer's temporary file does not stay for good.  sow's
 *     temporary names carry the writer's PID: "TARGET.tmp.PID" (or
 *     "TARGET.tmp.PID.K", K a counter) from fio_out_begin, ".sowtb.probe.PID"
 *     from fio_dir_writable.  fio_sweep_stale removes such a file when no
 *     process has that PID (kill(PID, 0) fails with ESRCH) and no process
 *     holds it (a writer keeps a flock on its temporary file while it is
 *     open; one in another PID namespace is so still seen alive).  Only
 *     regular files are removed.  Swept: the whole directory by whoever
 *     takes its lock (fio_lock_dir: a table or --work directory), and
 *     TARGET's own temporary files when fio_out_begin starts a new write of
 *     TARGET.  Fixed temporary names (a table level's "LEVEL.tmp", owned by
 *     the lock holder) are replaced when that file is written again.
 *
 *       out.csv.tmp.4711    PID 4711 gone, unlocked  ->  removed
 *       out.csv.tmp.4712    PID 4712 running         ->  left alone
 *       out.csv.tmp.x, notes.tmp, a FIFO or link     ->  left alone
 *
 *  6. Logs written as they go (a match's games, the closure's exits waiting
 *     for their level) are appended in place, not replaced whole, so that a
 *     killed run keeps what it wrote: fio_open_log opens with O_APPEND,
 *     O_NOFOLLOW (never through a link) and O_NONBLOCK (a FIFO with no
 *     reader fails at once, never waits), and refuses what is not a regular
 *     file.
 *
 * Statuses: a path the user named that cannot be used as asked (missing,
 * wrong type, no permission, read-only) is SOW_E_INPUT (exit 2); a failure
 * while reading or writing (disk full, I/O error) is SOW_E_IO (exit 1).
 *
 * Thread-safety: every function may be called from any thread; an fio_out or
 * fio_lock belongs to one thread at a time.  Nothing here keeps global state.
 */
#ifndef SOW_FILEIO_H
#define SOW_FILEIO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sow/status.h"

#define FIO_PATH_MAX 4096

/* Open path for reading; *fd is a blocking descriptor of a regular file. */
enum sow_status fio_open_input(const char *path, int *fd, struct sow_error *e);

/* Open path to append to (created if missing; emptied first if truncate)
 * as rule 6 says; NULL with the reason in e (SOW_E_INPUT). */
FILE *fio_open_log(const char *path, bool truncate, struct sow_error *e);

/* Does path name something (lstat)?  For "is this level present". */
bool fio_exists(const char *path);

/* Is path, if it exists, something sow may replace (absent or a regular
 * file, not a link)?  SOW_OK or SOW_E_INPUT with the reason. */
enum sow_status fio_check_target(const char *path, struct sow_error *e);

/* An output file being written. */
struct fio_out {
    int fd;                        /* -1 when closed */
    FILE *f;                       /* fio_out_stream's stream over fd, or NULL */
    char path[FIO_PATH_MAX];       /* the target */
    char tmp[FIO_PATH_MAX + 64];   /* the temporary file next to it */
};

/* Check the target (rule 2) and create its temporary file.  tmp_name NULL:
 * a name unique to this process ("PATH.tmp.PID", a counter added if that is
 * taken), after PATH's stale temporary files are removed (rule 5).  Otherwise that exact name, which the caller must own (a table
 * builder holding the directory lock): a leftover there (file, link, FIFO)
 * is removed first, never opened. */
enum sow_status fio_out_begin(struct fio_out *o, const char *path, const char *tmp_name,
                              struct sow_error *e);

/* Write all n bytes (retrying short writes and EINTR). */
enum sow_status fio_write_all(struct fio_out *o, const void *buf, size_t n, struct sow_error *e);

/* A stdio stream over the temporary file (for fprintf), owned by o; NULL if
 * out of memory.  Commit and abort flush and close it. */
FILE *fio_out_stream(struct fio_out *o);

/* Publish: fsync, close, check the target again, rename, fsync the
 * directory.  On failure the temporary file is removed. */
enum sow_status fio_out_commit(struct fio_out *o, struct sow_error *e);

/* Discard the temporary file (safe to call twice, or after commit). */
void fio_out_abort(struct fio_out *o);

/* mkdir -p; an existing component that is not a directory is SOW_E_INPUT. */
enum sow_status fio_mkdir_p(const char *dir, struct sow_error *e);

/* Rule 4: SOW_OK, or SOW_E_INPUT naming why dir cannot be written. */
enum sow_status fio_dir_writable(const char *dir, struct sow_error *e);

struct fio_lock {
    int fd; /* -1: not held */
};

/* Rule 3: take the directory's build lock.  If another process holds it,
 * call waiting(ctx) once (may be NULL) and wait, polling *stop (may be NULL):
 * SOW_E_INTERRUPTED when it is set.  Once held, the directory is swept
 * (rule 5). */
enum sow_status fio_lock_dir(const char *dir, struct fio_lock *l, volatile sig_atomic_t *stop,
                             void (*waiting)(void *ctx), void *ctx, struct sow_error *e);
void fio_unlock(struct fio_lock *l);

/* Rule 5: remove dir's temporary files of dead writers; target NULL: every
 * name of sow's temporary naming, else only target's ("target.tmp.PID").
 * Returns how many were removed.  Never fails: what cannot be removed stays. */
int fio_sweep_stale(const char *dir, const char *target);

/* The writer's PID in a name of sow's temporary naming (rule 5), 0 if the
 * name is not one; target as for fio_sweep_stale. */
long fio_tmp_pid(const char *name, const char *target);

/* Name of the lock file inside a table directory. */
#define FIO_LOCK_NAME ".sowtb.lock"

#endif
