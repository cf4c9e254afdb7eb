/* The distributed build (tables/tables_mpi.h tb_build_mpi): levels 0..max,
 * each solved by every rank on its slice (mpi_build.c) and written into one
 * level file by all ranks at their offsets, checksum chained, renamed by
 * rank 0. */
#include <mpi.h>
#include <omp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mpi_level.h"
#include "fileio.h"
#include "tables/tables_mpi.h"
#include "tables/tb_lean.h"
#include "util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

bool tb_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* ---- the level file ---------------------------------------------------------- */

/* XXH3-64 of the level's payload, E bytes in index order spread over the
 * ranks' slices, without moving the slices: the streaming state is handed
 * from rank to rank (rank r hashes its slice after rank r - 1's, a message
 * of sizeof(XXH3_state_t) bytes each), the last rank's digest is broadcast.
 * The streaming API's result does not depend on how the input is cut, so
 * the sum is XXH3_64bits of the whole payload, as tb_file_write computes it.
 * The state is xxhash.h's plain struct; its one pointer, extSecret (the
 * default secret, a static array of each process), is this process's own
 * after the copy.  Sequential, but each rank's share is its slice in
 * memory: about 1/10 s per GB. */
static uint64_t chain_checksum(const struct mpi *M, const int8_t *slice, uint64_t Es)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    if (M->rank > 0) {
        XXH3_state_t in;
        MPI_Request rq;
        MPI_Irecv(&in, (int)sizeof in, MPI_BYTE, M->rank - 1, 7, MPI_COMM_WORLD, &rq);
        tbm_coll_wait(M, &rq);
        const unsigned char *secret = st.extSecret;
        st = in;
        st.extSecret = secret;
    }
    XXH3_64bits_update(&st, slice, (size_t)Es);
    if (M->rank + 1 < M->size)
        MPI_Send(&st, (int)sizeof st, MPI_BYTE, M->rank + 1, 7, MPI_COMM_WORLD);
    uint64_t sum = M->rank + 1 == M->size ? XXH3_64bits_digest(&st) : 0;
    tbm_bcast(M, &sum, 1, MPI_UINT64_T, M->size - 1);
    return sum;
}

#define WRITE_PIECE ((uint64_t)1 << 30) /* bytes per MPI_File_write_at at most */

static enum sow_status mpi_io_fail(int rc, const char *what, const char *path,
                                   struct sow_error *e)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return sow_fail(e, SOW_E_IO, "%s %s: %s", what, path, msg);
}

/* Level n's file, written once, by all ranks (no rank holds the level):
 *
 *   rank 0   PATH.tmp created (fio_out_begin: the fixed name this job owns
 *            under the directory lock, a leftover removed), sized 128 + E
 *   every r  writes its slice at offset 128 + lo(r) (MPI-IO, the file
 *            opened on MPI_COMM_SELF, independent writes: each rank's part
 *            is one contiguous range), MPI_File_sync, close
 *   chain    the payload's XXH3-64 (chain_checksum)
 *   rank 0   the header (tb_header_encode, as tb_file_write), then
 *            fio_out_commit: fsync, rename to PATH, fsync of the directory
 *
 * so the file is byte-identical to tb_file_write's, and appears whole or
 * not at all.  Any rank's failure is agreed on and rank 0 removes the
 * temporary file; a rank killed meanwhile makes mpirun end the job, which
 * may leave PATH.tmp (as a single process killed while writing does): it is
 * never read as a level (`tables info` lists it), and the rerun removes it
 * before writing the level again. */
static enum sow_status write_level(const struct mpi *M, const struct ruleset *rs,
                                   const char *dir, int n, const int8_t *slice, uint64_t E,
                                   struct sow_error *e)
{
    char path[4096], tmp[4200];
    tb_file_name(dir, rs->name, rs->pits, n, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    uint64_t lo = tbm_slice_lo(E, M->size, M->rank),
             Es = tbm_slice_lo(E, M->size, M->rank + 1) - lo;
    struct fio_out o = {.fd = -1};
    enum sow_status st = SOW_OK;
    if (M->rank == 0) {
        st = fio_out_begin(&o, path, tmp, e);
        if (st == SOW_OK && ftruncate(o.fd, (off_t)(TB_HEADER_SIZE + E)) < 0)
            st = sow_fail(e, SOW_E_IO, "writing %s: %s", tmp, strerror(errno));
    }
    st = tbm_agree(M, st, e);
    if (st == SOW_OK) {
        tbm_test_kill(M, n, 'w');
        MPI_File fh;
        int rc = MPI_File_open(MPI_COMM_SELF, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            st = mpi_io_fail(rc, "cannot open", tmp, e);
        } else {
            /* MPI's counts are ints: the slice in pieces of 1 GB at
             * 64-bit offsets */
            for (uint64_t a = 0; a < Es && rc == MPI_SUCCESS; a += WRITE_PIECE) {
                uint64_t k = Es - a < WRITE_PIECE ? Es - a : WRITE_PIECE;
                rc = MPI_File_write_at(fh, (MPI_Offset)(TB_HEADER_SIZE + lo + a), slice + a,
                                       (int)k, MPI_BYTE, MPI_STATUS_IGNORE);
            }
            if (rc == MPI_SUCCESS)
                rc = MPI_File_sync(fh);
            int rc2 = MPI_File_close(&fh);
            rc = rc == MPI_SUCCESS ? rc2 : rc;
            if (rc != MPI_SUCCESS)
                st = mpi_io_fail(rc, "writing", tmp, e);
        }
    }
    st = tbm_agree(M, st, e);
    uint64_t sum = st == SOW_OK ? chain_checksum(M, slice, Es) : 0;
    if (M->rank == 0 && st == SOW_OK) {
        uint8_t h[TB_HEADER_SIZE];
        tb_header_encode(h, rs, n, TB_FORMAT_VERSION, E, sum);
        tb_header_seal(h);
        st = fio_write_all(&o, h, TB_HEADER_SIZE, e); /* at offset 0: nothing written by o yet */
        if (st == SOW_OK)
            st = fio_out_commit(&o, e);
    }
    if (M->rank == 0)
        fio_out_abort(&o); /* the temporary file, if not renamed (safe after commit) */
    return tbm_agree(M, st, e);
}

/* Bytes one rank needs for level n on top of the (mapped) lower levels:
 * 4 bytes of node state per own entry (no rank holds the whole level:
 * write_level) and, fast: an 8-byte list offset and per
 * in-level move (<= N per entry) 8 bytes in the send buffers, 8 received and
 * 4 in the reverse lists; lean: the updates of a batch of seeds (16 bytes
 * for each of SEED_BATCH entries: 6 measured) and of the waves that follow
 * (1 byte per own entry; oware level 20, 1 to 4 ranks: 21-24 MB of
 * buffers in all, 0.25-1 byte per own entry); owned lower levels: 16 bytes per probe in flight, taken as one per
 * entry of a piece (0.37 measured on oware 2x6 at levels <= 12); lean
 * relay: the pend bits (2 per own entry), the edge store's largest phase
 * (lrel_memory: its buffers or its sort) and the edges of a piece in flight
 * (<= N per entry, 8 bytes sent, 8 received, 8 while gathered). */
static double rank_memory(const struct tb_index *ix, int n, int size, bool lean, bool relay,
                          int threads, bool owned, uint64_t base)
{
    uint64_t E = tb_level_entries(ix, n);
    double Es = (double)E / size + 1;
    /* stored edges: 4 more bytes per move in the reverse lists when they
     * hold 8-byte global indices */
    double move = rev_wide(E, base) ? 24.0 : 20.0;
    double piece = Es < (double)PROBE_PIECE ? Es : (double)PROBE_PIECE;
    double rpiece = Es < (double)RELAY_PIECE ? Es : (double)RELAY_PIECE;
    double rel = relay && lean ? 0.25 * Es + lrel_memory((uint64_t)Es, ix->pits, threads) +
                                     24.0 * ix->pits * rpiece
                               : 0.0;
    double batch = Es < (double)SEED_BATCH ? Es : (double)SEED_BATCH;
    return (lean ? Es * (4.0 + 1.0) + 16.0 * batch : Es * (12.0 + move * ix->pits)) +
           (owned ? 16.0 * piece : 0.0) + rel + (1 << 22);
}

/* One distributed build on one rank: what tb_build_mpi's steps share. */
struct mrun {
    struct mpi M;
    struct tb_build_opts o; /* the caller's, progress on rank 0 only */
    const struct ruleset *rs;
    const char *dir;
    int max_level;
    struct tb_set *set;
    double limit;                         /* --memory, or 3/4 of RAM */
    bool lean, relay, owned;              /* the builder and the lower levels' place */
    unsigned char missing[TB_MAX_LEVEL + 1];
    int8_t *own[TB_MAX_LEVEL + 1];        /* owned lower levels: this rank's slices */
    uint64_t stats[3];                    /* words sent to other ranks, supersteps, level bytes */
    uint64_t peak_level;
};

/* MPI started (once per process), this rank's place, the collectives' nap. */
static void mpi_start(struct mpi *M)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int prov;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &M->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &M->size);
    M->nap_ns = 1000 * util_env_long("SOW_MPI_NAP_US", 0, 999999, 20); /* coll_wait */
    /* Test hooks (tests/mpi/run.sh), the same on every rank: global indices
     * from SOW_MPI_TEST_BASE on (mpi_slice.h; 2^32: every global index
     * held or sent past 32 bits), exchanges in rounds of SOW_MPI_TEST_MSG
     * words (tbm_exchange), SOW_MPI_TEST_RBUF=1: received through a round
     * buffer, as past INT_MAX words. */
    const char *rbuf = getenv("SOW_MPI_TEST_RBUF");
    M->base = (uint64_t)util_env_long("SOW_MPI_TEST_BASE", 0, LONG_MAX, 0);
    M->msg = (uint64_t)util_env_long("SOW_MPI_TEST_MSG", 1, EXCH_WORDS, EXCH_WORDS);
    M->inplace = rbuf && strcmp(rbuf, "1") == 0 ? 0 : INT_MAX;
}

/* Which levels are missing (rank 0 decides, every rank learns it), which
 * builder builds them and where the lower levels live. */
static void mrun_plan(struct mrun *R)
{
    if (R->M.rank == 0)
        for (int n = 0; n <= R->max_level; n++) {
            char path[4200];
            tb_file_name(R->dir, R->rs->name, R->rs->pits, n, path, sizeof path);
            R->missing[n] = !fio_exists(path);
        }
    MPI_Bcast(R->missing, TB_MAX_LEVEL + 1, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    R->limit = R->o.memory_bytes > 0 ? R->o.memory_bytes : 0.75 * util_phys_memory();
    /* The builder, as tb_build picks it: lean if asked for, or (auto) if
     * the stored edges do not fit (relay rule sets: lean with the edges on
     * each rank's disk, relay_edges). */
    R->lean = R->o.builder == TB_BUILDER_LEAN;
    R->relay = !tb_unmove_supported(R->rs);
    int rthreads = R->o.threads > 0 ? R->o.threads : omp_get_max_threads();
    if (R->o.builder == TB_BUILDER_AUTO) {
        double lower = 0;
        for (int n = 0; n <= R->max_level; n++) {
            uint64_t E = tb_level_entries(&R->set->ix, n);
            if (!tbm_slices_ok(E, R->M.base, R->M.size))
                break; /* refused (mrun_check) */
            if (R->missing[n] && lower + rank_memory(&R->set->ix, n, R->M.size, false, R->relay,
                                                     rthreads, false, R->M.base) >
                                     R->limit)
                R->lean = true;
            lower += (double)E;
        }
    }
    /* Lower levels: mapped whole on every rank (the page cache holds what
     * is probed), or owned: each rank keeps its slice of each level and the
     * probes go to the owners in batches (probe_owned).  Owned when the
     * lower levels of the top level would take more than half of a rank's
     * budget; SOW_MPI_LOWER=owned|mapped decides instead (tests, bench). */
    double all = 0;
    for (int n = 0; n < R->max_level; n++)
        all += (double)tb_level_entries(&R->set->ix, n);
    const char *how = getenv("SOW_MPI_LOWER");
    R->owned = how && strcmp(how, "owned") == 0    ? true
               : how && strcmp(how, "mapped") == 0 ? false
                                                   : all > R->limit / 2;
}

/* Owned: this rank's slice of level n read from its file and nothing more
 * (tb_file_read_slice); rank 0 also streams the whole payload's checksum,
 * so the level is checked whole without any rank holding it. */
static enum sow_status mrun_read_slice(struct mrun *R, int n, struct sow_error *e)
{
    uint64_t E = tb_level_entries(&R->set->ix, n);
    uint64_t a = tbm_slice_lo(E, R->M.size, R->M.rank),
             b = tbm_slice_lo(E, R->M.size, R->M.rank + 1);
    R->own[n] = malloc(b > a ? b - a : 1);
    if (!R->own[n])
        return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
    char path[4200];
    tb_file_name(R->dir, R->rs->name, R->rs->pits, n, path, sizeof path);
    return tb_file_read_slice(path, R->rs, n, a, b, R->own[n], R->M.rank == 0, e);
}

/* Whether the missing levels can be indexed at all by this job, before
 * anything is loaded or built (the same answer on every rank): every
 * slice under 2^31 entries (mpi_slice.h), and for the lean builder on the
 * relay rule sets levels of at most 2^32 entries (its edge lists on disk
 * hold 32-bit level indices, lean_relay.h).  The first level refused,
 * with the ranks it needs. */
static enum sow_status mrun_indices(const struct mrun *R, struct sow_error *e)
{
    for (int n = 0; n <= R->max_level; n++) {
        uint64_t E = tb_level_entries(&R->set->ix, n);
        if (!R->missing[n])
            continue;
        if (!tbm_slices_ok(E, R->M.base, R->M.size))
            return sow_fail(e, SOW_E_TOO_BIG,
                            "level %d has %llu entries: its slices must stay under 2^31 entries "
                            "each, which needs at least %llu ranks (this job has %d)",
                            n, (unsigned long long)E, (unsigned long long)tbm_ranks_needed(E),
                            R->M.size);
        if (R->lean && R->relay && E > (uint64_t)UINT32_MAX + 1)
            return sow_fail(e, SOW_E_TOO_BIG,
                            "level %d has %llu entries: the lean builder's edge lists for %s "
                            "hold 32-bit indices (levels up to 2^32 entries; --builder fast "
                            "has no such limit)",
                            n, (unsigned long long)E, R->rs->name);
    }
    return SOW_OK;
}

/* The levels present loaded and checked (owned: this rank's slice kept),
 * each missing one's memory checked against the budget, before any is
 * built. */
static enum sow_status mrun_check(struct mrun *R, struct sow_error *e)
{
    enum sow_status st = mrun_indices(R, e);
    int rthreads = R->o.threads > 0 ? R->o.threads : omp_get_max_threads();
    double lower = 0;
    for (int n = 0; n <= R->max_level && st == SOW_OK; n++) {
        uint64_t E = tb_level_entries(&R->set->ix, n);
        if (!R->missing[n]) {
            st = tb_rebuild_hint(R->owned ? mrun_read_slice(R, n, e)
                                          : tb_set_load_level(R->set, n, e), e);
        } else {
            double need = (R->owned ? lower / R->M.size : lower) +
                          rank_memory(&R->set->ix, n, R->M.size, R->lean, R->relay, rthreads,
                                      R->owned, R->M.base);
            if (need > R->limit)
                st = sow_fail(e, SOW_E_TOO_BIG,
                              "level %d needs about %.3g GB per rank (%s) but the memory limit "
                              "is %.3g GB (--memory); levels up to %d fit",
                              n, need / 1e9, R->lean ? "lean" : "stored edges", R->limit / 1e9,
                              n - 1);
        }
        lower += (double)E;
    }
    return tbm_agree(&R->M, st, e);
}

/* Missing level n built by every rank on its slice and written into its
 * file; then a lower level (owned: the slice kept; mapped: the file mapped
 * and checked by every rank). */
static enum sow_status mrun_level(struct mrun *R, int n, struct sow_error *e)
{
    struct tb_build_opts *o = &R->o;
    uint64_t E = tb_level_entries(&R->set->ix, n);
    double t0 = util_now();
    int8_t *vals = NULL; /* this rank's slice of the level being written */
    enum sow_status st = tbm_level(&R->M, R->rs, R->set, n, R->lean, R->owned ? R->own : NULL,
                                   &vals, o, R->stats, e);
    if (st != SOW_OK) {
        free(vals);
        return st;
    }
    /* every rank writes its slice into the one file (write_level) */
    st = write_level(&R->M, R->rs, R->dir, n, vals, E, e);
    if (R->owned) { /* the slice is this rank's part of the lower level now */
        R->own[n] = vals;
        vals = NULL;
    }
    free(vals);
    /* mapped: every rank maps the new level from the shared directory
     * (and checks it): the levels above probe it there */
    if (st == SOW_OK && !R->owned)
        st = tbm_agree(&R->M, tb_set_load_level(R->set, n, e), e);
    if (st != SOW_OK)
        return st;
    uint64_t lb = R->stats[2], mb = 0;
    tbm_allreduce(&R->M, &lb, &mb, 1, MPI_UINT64_T, MPI_MAX);
    if (mb > R->peak_level)
        R->peak_level = mb;
    if (o->level_info) /* the largest rank's bytes for the level */
        o->level_info(o->ctx, n, E,
                      R->owned ? (R->lean ? "mpi lean/owned" : "mpi fast/owned")
                               : (R->lean ? "mpi lean" : "mpi fast"),
                      (double)mb);
    if (o->level_done)
        o->level_done(o->ctx, n, E, util_now() - t0, true);
    int s = o->stop && *o->stop, g = 0;
    tbm_allreduce(&R->M, &s, &g, 1, MPI_INT, MPI_MAX);
    return g ? sow_fail(e, SOW_E_INTERRUPTED, "interrupted") : SOW_OK;
}

/* sow bench tables --mpi, bench/mpi-tables.sh (SOW_MPI_STATS): bytes
 * between ranks, supersteps, peak memory, on rank 0's stderr. */
static void mrun_stats(const struct mrun *R)
{
    uint64_t all = 0, pos = 0, rss, maxrss = 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    rss = (uint64_t)ru.ru_maxrss * 1024;
    for (int n = 0; n <= R->max_level; n++)
        pos += R->missing[n] ? tb_level_entries(&R->set->ix, n) : 0;
    MPI_Reduce(&R->stats[0], &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss, &maxrss, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (R->M.rank == 0)
        fprintf(stderr,
                "mpi: %d ranks, %s, %llu positions built, %llu bytes sent between ranks "
                "(%.2f per position), %llu supersteps, peak memory per rank %.1f MB "
                "(rss), %.1f MB (level arrays and buffers)\n",
                R->M.size,
                R->owned ? (R->lean ? "lean-owned" : "fast-owned") : (R->lean ? "lean" : "fast"),
                (unsigned long long)pos, (unsigned long long)(4 * all),
                pos ? 4.0 * (double)all / (double)pos : 0.0, (unsigned long long)R->stats[1],
                (double)maxrss / 1e6, (double)R->peak_level / 1e6);
}

enum sow_status tb_build_mpi(const struct ruleset *rs, const char *dir, int max_level,
                             const struct tb_build_opts *opt, int *rankp, struct sow_error *e)
{
    struct mrun *R = calloc(1, sizeof *R);
    if (!R)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    mpi_start(&R->M);
    *rankp = R->M.rank;
    R->rs = rs;
    R->dir = dir;
    R->max_level = max_level;
    /* progress and level lines on rank 0 only */
    R->o = opt ? *opt : (struct tb_build_opts){0};
    if (R->M.rank != 0) {
        R->o.progress = NULL;
        R->o.level_done = NULL;
        R->o.level_info = NULL;
    }
    enum sow_status st = SOW_OK;
    struct fio_lock lock = {-1};
    if (max_level < 0 || max_level > TB_MAX_LEVEL)
        st = sow_fail(e, SOW_E_INPUT, "--seeds %d: levels go up to %d", max_level, TB_MAX_LEVEL);
    else if (!(R->set = tb_set_new(rs, dir)))
        st = sow_fail(e, SOW_E_NOMEM, "out of memory");
    /* As tb_build (fileio.h rules 3 and 4), on rank 0 for the job: the
     * directory exists, this job alone builds in it, it can be written. */
    if (st == SOW_OK && R->M.rank == 0 &&
        ((st = fio_mkdir_p(dir, e)) || (st = fio_lock_dir(dir, &lock, R->o.stop, NULL, NULL, e)) ||
         (st = fio_dir_writable(dir, e))))
        fio_unlock(&lock);
    st = tbm_agree(&R->M, st, e);
    if (st == SOW_OK) {
        mrun_plan(R);
        st = mrun_check(R, e);
    }
    for (int n = 0; n <= max_level && st == SOW_OK; n++) {
        if (R->missing[n])
            st = mrun_level(R, n, e);
        else if (R->o.level_done)
            R->o.level_done(R->o.ctx, n, tb_level_entries(&R->set->ix, n), 0, false);
    }
    if (st == SOW_OK && getenv("SOW_MPI_STATS"))
        mrun_stats(R);
    tb_close(R->set);
    fio_unlock(&lock);
    for (int n = 0; n <= TB_MAX_LEVEL; n++)
        free(R->own[n]);
    free(R);
    return st;
}

void tb_mpi_finish(void)
{
    int inited = 0, done = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&done);
    if (inited && !done)
        MPI_Finalize();
}

