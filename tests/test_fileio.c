/* fileio (include/fileio.h): each rule against the file kinds that broke
 * it — FIFOs, symlinks, directories at input, output and temporary paths —
 * and the build lock between two holders. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sow-fileio-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
    util_rmdir_flat(dir);
}

static void path(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%.250s", dir, name);
}

static void put(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void get(const char *p, char *buf, size_t len)
{
    FILE *f = fopen(p, "r");
    cr_assert(f, "%s", p);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = 0;
    fclose(f);
}

TestSuite(fileio, .init = setup, .fini = teardown);

Test(fileio, input_regular_file_and_link_to_it)
{
    char p[512], l[512];
    struct sow_error e;
    int fd;
    path(p, "a.txt");
    path(l, "link");
    put(p, "hello");
    cr_assert_eq(symlink("a.txt", l), 0);
    cr_assert_eq(fio_open_input(p, &fd, &e), SOW_OK);
    cr_assert_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "descriptor left non-blocking");
    close(fd);
    cr_assert_eq(fio_open_input(l, &fd, &e), SOW_OK, "a link to a regular file is read");
    close(fd);
}

Test(fileio, input_fifo_directory_missing_refused_at_once)
{
    char p[512];
    struct sow_error e;
    int fd;
    path(p, "fifo");
    cr_assert_eq(mkfifo(p, 0644), 0);
    double t0 = util_now();
    cr_assert_eq(fio_open_input(p, &fd, &e), SOW_E_INPUT);
    cr_assert(util_now() - t0 < 1.0, "waited on a FIFO");
    cr_assert(strstr(e.msg, "FIFO"), "%s", e.msg);
    cr_assert_eq(fio_open_input(dir, &fd, &e), SOW_E_INPUT);
    path(p, "missing");
    cr_assert_eq(fio_open_input(p, &fd, &e), SOW_E_INPUT);
}

Test(fileio, output_replaces_a_regular_file_whole)
{
    char p[512], buf[64];
    struct sow_error e;
    struct fio_out o;
    path(p, "out.csv");
    put(p, "old contents");
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_OK);
    get(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "old contents", "the target changed before commit");
    cr_assert_eq(fio_write_all(&o, "new", 3, &e), SOW_OK);
    cr_assert_eq(fio_out_commit(&o, &e), SOW_OK);
    get(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "new");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    cr_assert(access(tmp, F_OK) != 0, "temporary file %s left", tmp);
}

Test(fileio, output_link_fifo_directory_refused_and_left_alone)
{
    char p[512], v[512], buf[64];
    struct sow_error e;
    struct fio_out o;
    path(v, "victim");
    put(v, "keep");
    path(p, "link.csv");
    cr_assert_eq(symlink("victim", p), 0);
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_E_INPUT);
    get(v, buf, sizeof buf);
    cr_assert_str_eq(buf, "keep");
    struct stat st;
    cr_assert_eq(lstat(p, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    path(p, "fifo.csv");
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_E_INPUT);
    cr_assert_eq(stat(p, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));
    cr_assert_eq(fio_out_begin(&o, dir, NULL, &e), SOW_E_INPUT);
    path(p, "missing/x.csv");
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_E_INPUT);
}

/* Rule 6: a log is appended to (or emptied first), created if missing;
 * a link, FIFO (no reader: at once, no wait) or directory is refused and
 * left as it was. */
Test(fileio, log_appended_in_place_link_fifo_directory_refused)
{
    char p[512], v[512], buf[64];
    struct sow_error e;
    path(p, "games.txt");
    FILE *f = fio_open_log(p, false, &e);
    cr_assert(f, "%s", e.msg);
    fputs("one\n", f);
    fclose(f);
    cr_assert((f = fio_open_log(p, false, &e)));
    fputs("two\n", f);
    fclose(f);
    get(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "one\ntwo\n");
    cr_assert((f = fio_open_log(p, true, &e)));
    fputs("three\n", f);
    fclose(f);
    get(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "three\n");
    path(v, "victim");
    put(v, "keep");
    path(p, "link.txt");
    cr_assert_eq(symlink("victim", p), 0);
    cr_assert_null(fio_open_log(p, true, &e));
    cr_assert_eq(e.status, SOW_E_INPUT);
    get(v, buf, sizeof buf);
    cr_assert_str_eq(buf, "keep");
    path(p, "fifo.txt");
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_null(fio_open_log(p, false, &e));
    cr_assert_eq(e.status, SOW_E_INPUT);
    cr_assert_null(fio_open_log(dir, false, &e));
    cr_assert_eq(e.status, SOW_E_INPUT);
}

Test(fileio, target_turned_into_a_fifo_before_commit_is_not_replaced)
{
    char p[512];
    struct sow_error e;
    struct fio_out o;
    path(p, "late.csv");
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_OK);
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_eq(fio_out_commit(&o, &e), SOW_E_INPUT);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));
}

Test(fileio, owned_temporary_name_leftover_link_is_removed_not_followed)
{
    char p[512], t[512], v[512], buf[64];
    struct sow_error e;
    struct fio_out o;
    path(v, "victim");
    put(v, "keep");
    path(p, "level.sowtb");
    path(t, "level.sowtb.tmp");
    cr_assert_eq(symlink("victim", t), 0);
    cr_assert_eq(fio_out_begin(&o, p, t, &e), SOW_OK);
    cr_assert_eq(fio_write_all(&o, "data", 4, &e), SOW_OK);
    cr_assert_eq(fio_out_commit(&o, &e), SOW_OK);
    get(v, buf, sizeof buf);
    cr_assert_str_eq(buf, "keep");
    struct stat st;
    cr_assert_eq(lstat(p, &st), 0);
    cr_assert(S_ISREG(st.st_mode));
    cr_assert_neq(lstat(t, &st), 0);
}

static void note_wait(void *ctx)
{
    ++*(int *)ctx;
}

Test(fileio, lock_second_holder_waits_and_stops_on_the_flag)
{
    struct sow_error e;
    struct fio_lock a, b;
    int waited = 0;
    volatile sig_atomic_t stop = 1;
    cr_assert_eq(fio_lock_dir(dir, &a, NULL, NULL, NULL, &e), SOW_OK);
    /* flock locks belong to the open file: a second open conflicts even in
     * the same process, as a second builder would. */
    cr_assert_eq(fio_lock_dir(dir, &b, &stop, note_wait, &waited, &e), SOW_E_INTERRUPTED);
    cr_assert_eq(waited, 1);
    fio_unlock(&a);
    cr_assert_eq(fio_lock_dir(dir, &b, &stop, note_wait, &waited, &e), SOW_OK);
    cr_assert_eq(waited, 1, "no wait once the lock is free");
    fio_unlock(&b);
}

Test(fileio, writable_and_mkdir)
{
    char p[512];
    struct sow_error e;
    cr_assert_eq(fio_dir_writable(dir, &e), SOW_OK);
    path(p, "a/b/c");
    cr_assert_eq(fio_mkdir_p(p, &e), SOW_OK);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    path(p, "afile");
    put(p, "x");
    path(p, "afile/sub");
    cr_assert_eq(fio_mkdir_p(p, &e), SOW_E_INPUT);
    path(p, "a/b/c");
    rmdir(p);
    path(p, "a/b");
    rmdir(p);
    path(p, "a");
    rmdir(p);
}

/* A PID no process has: a child's, once it has exited and been reaped. */
static long dead_pid(void)
{
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0)
        _exit(0);
    cr_assert_eq(waitpid(p, NULL, 0), p);
    return (long)p;
}

static bool present(const char *name)
{
    char p[512];
    struct stat st;
    path(p, name);
    return lstat(p, &st) == 0;
}

Test(fileio, temporary_names_parsed_strictly)
{
    cr_assert_eq(fio_tmp_pid("out.csv.tmp.4711", NULL), 4711);
    cr_assert_eq(fio_tmp_pid("out.csv.tmp.4711.3", NULL), 4711);
    cr_assert_eq(fio_tmp_pid("out.csv.tmp.4711", "out.csv"), 4711);
    cr_assert_eq(fio_tmp_pid(".sowtb.probe.4711", NULL), 4711);
    cr_assert_eq(fio_tmp_pid("a.tmp.1.tmp.4711", NULL), 4711);
    const char *not_ours[] = {"out.csv.tmp", "out.csv.tmp.", "out.csv.tmp.x", "out.csv.tmp.0",
                              "out.csv.tmp.1", "out.csv.tmp.04711", "out.csv.tmp.-4711",
                              "out.csv.tmp.4711x", "out.csv.tmp.4711.", "out.csv.tmp.4711.3.1",
                              "out.csv.tmp.99999999999", ".tmp.4711", "out.csv",
                              ".sowtb.probe.4711.1", "level.sowtb.tmp"};
    for (size_t k = 0; k < sizeof not_ours / sizeof *not_ours; k++)
        cr_assert_eq(fio_tmp_pid(not_ours[k], NULL), 0, "%s", not_ours[k]);
    cr_assert_eq(fio_tmp_pid("other.csv.tmp.4711", "out.csv"), 0);
    cr_assert_eq(fio_tmp_pid("out.csv.tmp.4711", "out"), 0);
}

/* Rule 5: a dead writer's PATH.tmp.PID is removed when PATH is written
 * again (its own only) and by the directory's lock holder (all of them);
 * a live writer's, one still held open, a FIFO and other names stay. */
Test(fileio, stale_temporary_files_of_dead_writers_swept)
{
    long dead = dead_pid(), live = (long)getppid();
    char n[16][96], p[512];
    snprintf(n[0], 96, "out.csv.tmp.%ld", dead);
    snprintf(n[1], 96, "out.csv.tmp.%ld.2", dead);
    snprintf(n[2], 96, "out.csv.tmp.%ld", live);
    snprintf(n[3], 96, "other.csv.tmp.%ld", dead);
    snprintf(n[4], 96, ".sowtb.probe.%ld", dead);
    snprintf(n[5], 96, "notes.tmp");
    snprintf(n[6], 96, "held.csv.tmp.%ld", dead);
    snprintf(n[7], 96, "fifo.csv.tmp.%ld", dead);
    for (int k = 0; k < 7; k++) {
        path(p, n[k]);
        put(p, "partial");
    }
    path(p, n[7]);
    cr_assert_eq(mkfifo(p, 0644), 0);
    /* held open and locked, as a writer in another PID namespace would */
    path(p, n[6]);
    int held = open(p, O_RDONLY);
    cr_assert(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0);
    struct sow_error e;
    struct fio_out o;
    path(p, "out.csv");
    cr_assert_eq(fio_out_begin(&o, p, NULL, &e), SOW_OK);
    cr_assert(!present(n[0]) && !present(n[1]), "out.csv's dead temporary files left");
    cr_assert(present(n[2]), "a live writer's temporary file removed");
    cr_assert(present(n[3]) && present(n[4]), "another target's files swept by out.csv's write");
    fio_out_abort(&o);
    struct fio_lock l;
    cr_assert_eq(fio_lock_dir(dir, &l, NULL, NULL, NULL, &e), SOW_OK);
    cr_assert(!present(n[3]) && !present(n[4]), "the lock holder left dead writers' files");
    cr_assert(present(n[2]) && present(n[5]) && present(n[6]) && present(n[7]),
              "the lock holder removed a live, foreign, held or non-regular file");
    fio_unlock(&l);
    close(held);
    cr_assert_eq(fio_sweep_stale(dir, NULL), 1, "the file no longer held goes next time");
    cr_assert(!present(n[6]));
}
