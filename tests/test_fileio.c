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
    snprintf(buf, 512, "%s/%s", dir, name);
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
