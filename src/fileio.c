/* File safety: fileio.h states the rules this implements. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"

/* errno of a failed open/create: is it about the path the user gave (bad
 * input) or about the machine while working? */
static enum sow_status errno_status(int err)
{
    switch (err) {
    case ENOMEM: return SOW_E_NOMEM;
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EMFILE:
    case ENFILE: return SOW_E_IO;
    default: return SOW_E_INPUT; /* ENOENT, EACCES, ENOTDIR, EROFS, ELOOP, EISDIR, ... */
    }
}

static const char *kind_of(mode_t m)
{
    return S_ISREG(m)    ? "a regular file"
           : S_ISDIR(m)  ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISLNK(m)  ? "a symbolic link"
                         : "not a regular file";
}

enum sow_status fio_open_input(const char *path, int *fd, struct sow_error *e)
{
    *fd = -1;
    int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        int err = errno;
        return sow_fail(e, errno_status(err), "%s: cannot open: %s", path, strerror(err));
    }
    struct stat st;
    if (fstat(f, &st) < 0) {
        int err = errno;
        close(f);
        return sow_fail(e, SOW_E_IO, "%s: cannot stat: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return sow_fail(e, SOW_E_INPUT, "%s: %s, not a regular file", path, kind_of(st.st_mode));
    }
    /* Regular files never block; clear the flag anyway so reads are plain. */
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0)
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    return SOW_OK;
}

FILE *fio_open_log(const char *path, bool truncate, struct sow_error *e)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                  O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
    if (fd < 0) {
        int err = errno; /* kept for callers that report it */
        sow_fail(e, SOW_E_INPUT, "%s: %s", path,
                 err == ELOOP ? "a symbolic link (name the file itself)"
                 : err == ENXIO ? "a FIFO or socket, not a regular file"
                                : strerror(err));
        errno = err;
        return NULL;
    }
    struct stat sb;
    int fl = fcntl(fd, F_GETFL);
    FILE *f = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && fl >= 0 &&
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
        f = fdopen(fd, "ab");
    if (!f) {
        sow_fail(e, SOW_E_INPUT, "%s: not a regular file", path);
        close(fd);
    }
    return f;
}

bool fio_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

enum sow_status fio_check_target(const char *path, struct sow_error *e)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return SOW_OK;
        int err = errno;
        return sow_fail(e, errno_status(err), "%s: %s", path, strerror(err));
    }
    if (S_ISLNK(st.st_mode))
        return sow_fail(e, SOW_E_INPUT,
                        "%s: a symbolic link; sow replaces output files and does not follow "
                        "links: name the file itself",
                        path);
    if (!S_ISREG(st.st_mode))
        return sow_fail(e, SOW_E_INPUT, "%s: %s; sow writes only regular files", path,
                        kind_of(st.st_mode));
    return SOW_OK;
}

/* Create o->tmp, which must not exist: 0 or the errno.  Read-write: a
 * writer may read back what it wrote (the compressed levels' checksum).
 * Locked (flock) while open: rule 5's sweep never takes a live writer's
 * file, even one whose PID it cannot see (another PID namespace). */
static int create_excl(struct fio_out *o)
{
    o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return errno;
    flock(o->fd, LOCK_EX | LOCK_NB); /* new file: nobody else holds it */
    return 0;
}

/* ---- rule 5: stale temporary files ---- */

/* The PID in a decimal field "N" or "N.K" (s up to its end), 0 if s is not
 * one: digits only, no sign or leading zero, N in 2..INT_MAX. */
static long pid_field(const char *s, bool counter_allowed)
{
    if (*s < '1' || *s > '9')
        return 0;
    char *end;
    errno = 0;
    long pid = strtol(s, &end, 10);
    if (errno || pid < 2 || pid > INT_MAX || end - s > 10)
        return 0;
    if (*end == '.' && counter_allowed) {
        const char *k = end + 1;
        if (*k < '0' || *k > '9')
            return 0;
        while (*k >= '0' && *k <= '9')
            k++;
        end = (char *)k;
    }
    return *end ? 0 : pid;
}

long fio_tmp_pid(const char *name, const char *target)
{
    static const char probe[] = ".sowtb.probe.";
    if (!target && strncmp(name, probe, sizeof probe - 1) == 0)
        return pid_field(name + sizeof probe - 1, false);
    size_t tl;
    const char *tail;
    if (target) {
        tl = strlen(target);
        if (strncmp(name, target, tl) != 0 || strncmp(name + tl, ".tmp.", 5) != 0)
            return 0;
        tail = name + tl + 5;
    } else {
        /* the last ".tmp." whose tail is a PID field; a target name of one
         * character at least */
        tail = NULL;
        for (const char *p = strstr(name + 1, ".tmp."); p; p = strstr(p + 1, ".tmp."))
            tail = p + 5;
        if (!tail)
            return 0;
    }
    return pid_field(tail, true);
}

/* Remove dir/name if it is a regular file no process holds (its writer's
 * flock went with it) and still the same file when removed. */
static bool remove_if_unheld(const char *dir, const char *name)
{
    char p[FIO_PATH_MAX + 256];
    if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
        return false;
    int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat a, b;
    bool gone = false;
    if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        lstat(p, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        gone = unlink(p) == 0;
    close(fd);
    return gone;
}

int fio_sweep_stale(const char *dir, const char *target)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        long pid = fio_tmp_pid(de->d_name, target);
        if (pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
            remove_if_unheld(dir, de->d_name))
            removed++;
    }
    closedir(d);
    return removed;
}

/* The directory part of path ("." if none) and the last component. */
static void split_path(const char *path, char *dir, size_t dlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dlen, ".");
        *base = path;
    } else {
        snprintf(dir, dlen, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *base = slash + 1;
    }
}

static enum sow_status create_failed(struct fio_out *o, int err, struct sow_error *e)
{
    enum sow_status st = sow_fail(e, err == EEXIST ? SOW_E_IO : errno_status(err),
                                  "cannot create %s: %s", o->tmp, strerror(err));
    o->tmp[0] = 0;
    return st;
}

enum sow_status fio_out_begin(struct fio_out *o, const char *path, const char *tmp_name,
                              struct sow_error *e)
{
    o->fd = -1;
    o->f = NULL;
    o->tmp[0] = 0;
    if (!*path)
        return sow_fail(e, SOW_E_INPUT, "empty file name");
    if (strlen(path) >= sizeof o->path)
        return sow_fail(e, SOW_E_INPUT, "file name too long");
    snprintf(o->path, sizeof o->path, "%s", path);
    enum sow_status st = fio_check_target(path, e);
    if (st)
        return st;
    if (tmp_name) {
        snprintf(o->tmp, sizeof o->tmp, "%s", tmp_name);
        /* The caller owns this name: whatever is there is a leftover of a
         * killed run (or planted).  unlink removes a link, not its target. */
        if (unlink(o->tmp) < 0 && errno != ENOENT && errno != EISDIR) {
            int err = errno;
            o->tmp[0] = 0;
            return sow_fail(e, errno_status(err), "cannot remove %s: %s", tmp_name,
                            strerror(err));
        }
        int err = create_excl(o);
        return err ? create_failed(o, err, e) : SOW_OK;
    }
    /* a killed writer's PATH.tmp.PID removed first (rule 5) */
    char d[FIO_PATH_MAX];
    const char *base;
    split_path(path, d, sizeof d, &base);
    if (*base)
        fio_sweep_stale(d, base);
    int err = 0;
    for (int k = 0; k < 100; k++) {
        if (k)
            snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%d", path, (long)getpid(), k);
        else
            snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
        if (!(err = create_excl(o)))
            return SOW_OK;
        if (err != EEXIST)
            break;
    }
    return create_failed(o, err, e);
}

enum sow_status fio_write_all(struct fio_out *o, const void *buf, size_t n, struct sow_error *e)
{
    const unsigned char *p = buf;
    size_t off = 0;
    while (off < n) {
        size_t chunk = n - off > (1u << 30) ? (1u << 30) : n - off;
        ssize_t w = write(o->fd, p + off, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return sow_fail(e, SOW_E_IO, "writing %s: %s", o->tmp,
                            w < 0 ? strerror(errno) : "short write");
        off += (size_t)w;
    }
    return SOW_OK;
}

static void fsync_dir_of(const char *path)
{
    char dir[FIO_PATH_MAX];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* make the rename durable; best effort on odd file systems */
        close(dfd);
    }
}

FILE *fio_out_stream(struct fio_out *o)
{
    if (!o->f && o->fd >= 0)
        o->f = fdopen(o->fd, "w");
    return o->f;
}

enum sow_status fio_out_commit(struct fio_out *o, struct sow_error *e)
{
    if (o->fd < 0)
        return sow_fail(e, SOW_E_IO, "%s: not open for writing", o->path);
    int bad = 0;
    errno = 0;
    if (o->f && (fflush(o->f) != 0 || ferror(o->f)))
        bad = errno ? errno : EIO;
    if (fsync(o->fd) < 0 && !bad)
        bad = errno;
    if ((o->f ? fclose(o->f) : close(o->fd)) != 0 && !bad)
        bad = errno;
    o->f = NULL;
    o->fd = -1;
    if (bad) {
        fio_out_abort(o);
        return sow_fail(e, SOW_E_IO, "writing %s: %s", o->path, strerror(bad));
    }
    /* Checked again: something may have been put at the target meanwhile. */
    enum sow_status st = fio_check_target(o->path, e);
    if (st) {
        fio_out_abort(o);
        return st;
    }
    if (rename(o->tmp, o->path) < 0) {
        int err = errno;
        fio_out_abort(o);
        return sow_fail(e, errno_status(err), "cannot rename to %s: %s", o->path, strerror(err));
    }
    o->tmp[0] = 0;
    fsync_dir_of(o->path);
    return SOW_OK;
}

void fio_out_abort(struct fio_out *o)
{
    if (o->f)
        fclose(o->f);
    else if (o->fd >= 0)
        close(o->fd);
    o->f = NULL;
    o->fd = -1;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = 0;
}

enum sow_status fio_mkdir_p(const char *dir, struct sow_error *e)
{
    char tmp[FIO_PATH_MAX];
    if (!*dir)
        return sow_fail(e, SOW_E_INPUT, "empty directory name");
    if (strlen(dir) >= sizeof tmp)
        return sow_fail(e, SOW_E_INPUT, "directory name too long");
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1;; p++) {
        if (*p && *p != '/')
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
            int err = errno;
            return sow_fail(e, errno_status(err), "cannot create directory %s: %s", tmp,
                            strerror(err));
        }
        struct stat st;
        if (stat(tmp, &st) == 0 && !S_ISDIR(st.st_mode))
            return sow_fail(e, SOW_E_INPUT, "%s: %s, not a directory", tmp, kind_of(st.st_mode));
        if (!c)
            break;
        *p = c;
    }
    return SOW_OK;
}

enum sow_status fio_dir_writable(const char *dir, struct sow_error *e)
{
    char probe[FIO_PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/.sowtb.probe.%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) { /* a leftover of a killed process with our pid */
        unlink(probe);
        fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        int err = errno;
        return sow_fail(e, errno_status(err), "%s: cannot write in this directory: %s", dir,
                        strerror(err));
    }
    close(fd);
    unlink(probe);
    return SOW_OK;
}

enum sow_status fio_lock_dir(const char *dir, struct fio_lock *l, volatile sig_atomic_t *stop,
                             void (*waiting)(void *ctx), void *ctx, struct sow_error *e)
{
    char path[FIO_PATH_MAX + 64];
    l->fd = -1;
    snprintf(path, sizeof path, "%s/" FIO_LOCK_NAME, dir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        return sow_fail(e, errno_status(err), "cannot create the lock file %s: %s", path,
                        strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sow_fail(e, SOW_E_INPUT, "%s: the lock file is not a regular file", path);
    }
    bool told = false;
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int err = errno;
        if (err == EINTR)
            continue;
        if (err != EWOULDBLOCK) {
            close(fd);
            return sow_fail(e, SOW_E_IO, "cannot lock %s: %s", path, strerror(err));
        }
        if (!told && waiting)
            waiting(ctx);
        told = true;
        if (stop && *stop) {
            close(fd);
            return sow_fail(e, SOW_E_INTERRUPTED, "interrupted while waiting for %s", path);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    l->fd = fd;
    fio_sweep_stale(dir, NULL); /* rule 5: the lock holder's turn to tidy */
    return SOW_OK;
}

void fio_unlock(struct fio_lock *l)
{
    if (l->fd >= 0)
        close(l->fd); /* closing the last descriptor releases the flock */
    l->fd = -1;
}
