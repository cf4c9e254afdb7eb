/* The closure on disk across MPI ranks: the job (closure_mpi.h,
 * closure_mpi_internal.h; docs/distributed.md "The exact solver across
 * ranks").  Messages and agreement, the build (both passes over the levels,
 * closure_mpi_levels.c), the merge of the ranks' shares onto rank 0, the
 * start and end of the job.
 *
 * The merge: once every level is solved, rank 0 writes WORK/disk-LLL.keys
 * and disk-LLL.values for every level, exactly the files one process
 * writes (the same header, payload and checksum), by merging the ranks'
 * sorted shares as they stream in (each rank sends its share in blocks of
 * CM_BLOCK positions, rank 0 takes the least key of the blocks' heads), and
 * WORK/disk.state of a solve that is done.  Rank 0's closure then answers
 * from those files as one process's does (clos_find, the solution file),
 * and a one-process rerun in WORK answers at once.  No rank holds more
 * than its share of a level and a block of each other rank's.
 *
 * Resuming: each rank's disk.state is saved after each level of either
 * pass (closure_disk.c's format and rules, in its own directory); a rerun
 * with the same number of ranks goes on from them when every rank has this
 * solve's state with the same levels expanded (the levels solved: those
 * solved on every rank, their files checked), else every rank starts over;
 * with no state of this rank count on any rank, an earlier job's of another
 * is dealt out to these ranks first (closure_mpi_reshard.c).
 * A level stopped or killed mid-way is done again: its appends to the
 * incoming files are dropped (truncated to the bytes the state records).
 *
 * Thread-safety: the calling thread of each rank; the ranks' builds one at
 * a time (the other ranks wait in clos_mpi_build for rank 0's next build
 * or its end once their first is done). */
#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include "closure_mpi.h"
#include "closure_mpi_internal.h"
#include "container.h"
#include "fileio.h"

#define CM_GO (-1)                    /* rank 0's word at a build's start (else an exit status) */
#define CM_BLOCK ((uint64_t)1 << 16)  /* positions of a share sent at once in the merge */
/* own positions per batch of the up pass's moves: its messages (a look-up
 * or an edge per move, 2 or 3 words of 8 bytes each with K = 1) stay
 * within a few MB */
#define CM_PIECE ((uint64_t)1 << 16)

/* The process's MPI: its rank and the collectives' nap (MPI itself is
 * once per process: MPI_Init, one world, MPI_Finalize). */
static struct {
    struct mpi M;
    int errfd; /* the rank's own stderr (a worker's stderr is /dev/null): cm_abort's */
} cm_job = {.errfd = 2};

/* ---- messages ---- */

_Noreturn void cm_abort(const struct cm *J, const char *why)
{
    dprintf(cm_job.errfd, "sow solve: rank %d: %s\n", J->M.rank, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

bool cm_push(struct cm_buf *b, const uint64_t *w, size_t k)
{
    if (!k)
        return true; /* (w may be NULL then: an empty buffer's) */
    if (b->n + k > b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 1024;
        while (nc < b->n + k)
            nc *= 2;
        uint64_t *nv = realloc(b->v, nc * sizeof *nv);
        if (!nv)
            return false;
        b->v = nv;
        b->cap = nc;
    }
    memcpy(b->v + b->n, w, k * sizeof *w);
    b->n += k;
    return true;
}

void cm_exchange(struct cm *J, uint64_t **recv, size_t *nrecv, int *rcnt)
{
    /* a rank that cannot hold its messages ends the job (MPI_Abort): its
     * peers are inside the collective already */
    const int R = J->M.size;
    int *sc = calloc(4 * (size_t)R, sizeof *sc);
    if (!sc)
        cm_abort(J, "out of memory in a message exchange");
    int *rc = sc + R, *sd = sc + 2 * R, *rd = sc + 3 * R;
    uint64_t tot = 0, rt = 0;
    for (int r = 0; r < R; r++) {
        if (tot + J->send[r].n > INT32_MAX)
            cm_abort(J, "a message exchange past 2^31 words");
        sc[r] = (int)J->send[r].n;
        sd[r] = (int)tot;
        tot += J->send[r].n;
    }
    MPI_Request rq;
    MPI_Ialltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD, &rq);
    tbm_coll_wait(&J->M, &rq);
    for (int r = 0; r < R; r++) {
        rd[r] = (int)rt;
        rt += (uint64_t)rc[r];
    }
    uint64_t *sb = malloc((tot ? tot : 1) * sizeof *sb), *rb = malloc((rt ? rt : 1) * sizeof *rb);
    if (!sb || !rb || rt > INT32_MAX)
        cm_abort(J, "out of memory in a message exchange");
    for (int r = 0; r < R; r++) {
        if (J->send[r].n)
            memcpy(sb + sd[r], J->send[r].v, J->send[r].n * sizeof *sb);
        J->send[r].n = 0;
    }
    MPI_Ialltoallv(sb, sc, sd, MPI_UINT64_T, rb, rc, rd, MPI_UINT64_T, MPI_COMM_WORLD, &rq);
    tbm_coll_wait(&J->M, &rq);
    if (rcnt)
        memcpy(rcnt, rc, (size_t)R * sizeof *rcnt);
    free(sb);
    free(sc);
    *recv = rb;
    *nrecv = rt;
}

void cm_release(struct cm *J)
{
    for (int r = 0; r < J->M.size; r++) {
        free(J->send[r].v);
        J->send[r] = (struct cm_buf){0};
    }
}

void cm_reduce(struct cm *J, uint64_t *x, int n, MPI_Op op)
{
    tbm_allreduce(&J->M, MPI_IN_PLACE, x, n, MPI_UINT64_T, op);
}

enum clos_err cm_agree(struct cm *J, enum clos_err e)
{
    int mine = e != CLOS_OK ? J->M.rank : J->M.size, first;
    tbm_allreduce(&J->M, &mine, &first, 1, MPI_INT, MPI_MIN);
    if (first == J->M.size)
        return CLOS_OK;
    struct {
        int32_t code, by_memory;
        double need;
        char why[sizeof J->info->why];
    } x;
    memset(&x, 0, sizeof x);
    if (J->M.rank == first) {
        x.code = (int32_t)e;
        x.by_memory = J->info->by_memory;
        x.need = J->info->need;
        memcpy(x.why, J->info->why, sizeof x.why);
    }
    tbm_bcast(&J->M, &x, (int)sizeof x, MPI_BYTE, first);
    J->info->by_memory = x.by_memory;
    J->info->need = x.need;
    memcpy(J->info->why, x.why, sizeof x.why);
    return (enum clos_err)x.code;
}

/* ---- the merge onto rank 0 ---- */

/* Rank r's share of a level on rank 0: the block in hand and what is left. */
struct cm_cur {
    const uint64_t *k;
    const int8_t *lo, *hi, *v;
    uint64_t at, len, left;
    uint64_t *kb;
    int8_t *vb;
};

/* A worker's share of level l, sent to rank 0 block by block. */
static void cm_send_share(struct cm *J, int l)
{
    struct clos *c = J->c;
    const uint64_t n = c->dk->st.cnt[l];
    const int K = c->K;
    const uint64_t *k = dk_payload(c->dk, 0, l);
    const int8_t *x = dk_payload(c->dk, 1, l);
    int8_t *vb = malloc(3 * CM_BLOCK);
    if (!vb)
        cm_abort(J, "out of memory sending its share to rank 0");
    for (uint64_t a = 0; a < n; a += CM_BLOCK) {
        const uint64_t cnt = n - a < CM_BLOCK ? n - a : CM_BLOCK;
        memcpy(vb, x + a, cnt);
        memcpy(vb + cnt, x + n + a, cnt);
        memcpy(vb + 2 * cnt, x + 2 * n + a, cnt);
        MPI_Send(k + a * (uint64_t)K, (int)(cnt * (uint64_t)K), MPI_UINT64_T, 0, 2 * l,
                 MPI_COMM_WORLD);
        MPI_Send(vb, (int)(3 * cnt), MPI_INT8_T, 0, 2 * l + 1, MPI_COMM_WORLD);
    }
    free(vb);
}

static void cm_refill(struct cm_cur *u, int r, int l, int K)
{
    const uint64_t cnt = u->left < CM_BLOCK ? u->left : CM_BLOCK;
    MPI_Recv(u->kb, (int)(cnt * (uint64_t)K), MPI_UINT64_T, r, 2 * l, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Recv(u->vb, (int)(3 * cnt), MPI_INT8_T, r, 2 * l + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    u->k = u->kb;
    u->lo = u->vb;
    u->hi = u->vb + cnt;
    u->v = u->vb + 2 * cnt;
    u->at = 0;
    u->len = cnt;
    u->left -= cnt;
}

/* A level file's 64-byte header (clos_ck_write's) for a payload of total
 * bytes with checksum sum, written over the placeholder at its start. */
static bool cm_header(struct fio_out *o, const char *magic, uint64_t total, uint64_t sum,
                      struct sow_error *e)
{
    uint8_t h[CK_HEAD] = {0};
    memcpy(h, magic, 8);
    ct_put64(h + 8, total);
    ct_put64(h + 16, sum);
    ct_seal(h, 24);
    if (pwrite(o->fd, h, CK_HEAD, 0) != CK_HEAD) {
        sow_fail(e, SOW_E_IO, "writing %s: %s", o->path, strerror(errno));
        return false;
    }
    return true;
}

static bool cm_pwrite(struct fio_out *o, const void *b, size_t n, uint64_t off, struct sow_error *e)
{
    const uint8_t *p = b;
    while (n) {
        ssize_t k = pwrite(o->fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            sow_fail(e, SOW_E_IO, "writing %s: %s", o->path, k < 0 ? strerror(errno) : "short write");
            return false;
        }
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return true;
}

/* Rank 0: level l's files in the work directory (g: the whole closure's
 * meta), merged from the ranks' shares (cnt[r] positions each). */
static bool cm_merge_level(struct cm *J, struct clos_disk *g, int l, const uint64_t *cnt,
                           struct sow_error *e)
{
    struct clos *c = J->c;
    const int K = c->K, R = J->M.size;
    const uint64_t N = J->gcnt[l], kb = 8 * (uint64_t)K;
    struct cm_cur *cur = calloc((size_t)R, sizeof *cur);
    uint64_t *ok_ = malloc(kb * CM_BLOCK);
    int8_t *ov = malloc(3 * CM_BLOCK);
    bool ok = cur && ok_ && ov;
    for (int r = 1; ok && r < R; r++) {
        cur[r].left = cnt[r];
        cur[r].kb = malloc(kb * CM_BLOCK);
        cur[r].vb = malloc(3 * CM_BLOCK);
        ok = cur[r].kb && cur[r].vb;
    }
    if (!ok) /* the workers are sending already */
        cm_abort(J, "out of memory merging the ranks' shares");
    const uint64_t n0 = c->dk->st.cnt[l];
    const int8_t *x0 = dk_payload(c->dk, 1, l);
    cur[0] = (struct cm_cur){dk_payload(c->dk, 0, l), x0, x0 + n0, x0 + 2 * n0, 0, n0, 0, NULL, NULL};
    struct dk_lvl hd;
    struct clos_disk *own = c->dk;
    c->dk = g;
    dk_lvl_of(c, l, 0, &hd);
    c->dk = own;
    char kp[4200], vp[4200], kt[4300], vt[4300];
    dk_path(kp, sizeof kp, g, dk_fmt[0], l);
    dk_path(vp, sizeof vp, g, dk_fmt[1], l);
    snprintf(kt, sizeof kt, "%s.tmp", kp);
    snprintf(vt, sizeof vt, "%s.tmp", vp);
    struct fio_out ko = {.fd = -1}, vo = {.fd = -1};
    uint8_t zero[CK_HEAD] = {0};
    XXH3_state_t *xs = XXH3_createState();
    ok = xs && fio_out_begin(&ko, kp, kt, e) == SOW_OK && fio_out_begin(&vo, vp, vt, e) == SOW_OK &&
         fio_write_all(&ko, zero, CK_HEAD, e) == SOW_OK &&
         fio_write_all(&ko, &hd, sizeof hd, e) == SOW_OK;
    hd.kind = 1;
    const uint64_t off = CK_HEAD + sizeof hd;
    ok = ok && cm_pwrite(&vo, zero, CK_HEAD, 0, e) && cm_pwrite(&vo, &hd, sizeof hd, CK_HEAD, e);
    if (ok) {
        hd.kind = 0;
        XXH3_64bits_reset(xs);
        XXH3_64bits_update(xs, &hd, sizeof hd);
    }
    uint64_t nb = 0, i0 = 0;
    for (uint64_t i = 0; i < N; i++) {
        int best = -1;
        for (int r = 0; r < R; r++) {
            struct cm_cur *u = &cur[r];
            if (u->at == u->len && u->left)
                cm_refill(u, r, l, K);
            if (u->at < u->len &&
                (best < 0 || cm_cmp(&u->k[u->at * K], &cur[best].k[cur[best].at * K], K) < 0))
                best = r;
        }
        if (best < 0) /* the shares hold fewer than their counts: cannot happen */
            cm_abort(J, "the ranks' shares ended early in the merge");
        struct cm_cur *u = &cur[best];
        memcpy(&ok_[nb * K], &u->k[u->at * K], kb);
        ov[nb] = u->lo[u->at];
        ov[CM_BLOCK + nb] = u->hi[u->at];
        ov[2 * CM_BLOCK + nb] = u->v[u->at];
        u->at++;
        if (++nb == CM_BLOCK || i + 1 == N) {
            if (ok) {
                XXH3_64bits_update(xs, ok_, kb * nb);
                ok = fio_write_all(&ko, ok_, kb * nb, e) == SOW_OK &&
                     cm_pwrite(&vo, ov, nb, off + i0, e) &&
                     cm_pwrite(&vo, ov + CM_BLOCK, nb, off + N + i0, e) &&
                     cm_pwrite(&vo, ov + 2 * CM_BLOCK, nb, off + 2 * N + i0, e);
            }
            i0 += nb;
            nb = 0;
        }
    }
    ok = ok && cm_header(&ko, dk_magic[0], sizeof hd + N * kb, XXH3_64bits_digest(xs), e);
    if (ok) { /* the values' checksum: their file read back in order */
        hd.kind = 1;
        XXH3_64bits_reset(xs);
        XXH3_64bits_update(xs, &hd, sizeof hd);
        for (uint64_t a = 0; ok && a < 3 * N; a += 3 * CM_BLOCK) {
            size_t want = 3 * N - a < 3 * CM_BLOCK ? (size_t)(3 * N - a) : 3 * CM_BLOCK;
            ok = pread(vo.fd, ov, want, (off_t)(off + a)) == (ssize_t)want;
            if (ok)
                XXH3_64bits_update(xs, ov, want);
            else
                sow_fail(e, SOW_E_IO, "reading back %s: %s", vo.path, strerror(errno ? errno : EIO));
        }
        ok = ok && cm_header(&vo, dk_magic[1], sizeof hd + 3 * N, XXH3_64bits_digest(xs), e);
    }
    ok = ok && fio_out_commit(&ko, e) == SOW_OK && fio_out_commit(&vo, e) == SOW_OK;
    if (!ok) {
        fio_out_abort(&ko);
        fio_out_abort(&vo);
    }
    XXH3_freeState(xs);
    for (int r = 1; r < R; r++) {
        free(cur[r].kb);
        free(cur[r].vb);
    }
    free(cur);
    free(ok_);
    free(ov);
    return ok;
}

/* Every level merged onto rank 0 (its closure then the merged files,
 * mapped and marked solved); G: the build's counters over all ranks. */
static enum clos_err cm_merge(struct cm *J, const uint64_t *G)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    const int R = J->M.size, me = J->M.rank;
    struct clos_disk *g = NULL;
    struct sow_error err = {0};
    enum clos_err e = CLOS_OK;
    if (me == 0) {
        g = calloc(1, sizeof *g);
        if (!g)
            e = CLOS_OOM;
        else {
            snprintf(g->dir, sizeof g->dir, "%s", env->work);
            g->st = c->dk->st;
            memcpy(g->st.cnt, J->gcnt, sizeof g->st.cnt);
            memset(g->st.inlen, 0, sizeof g->st.inlen);
            g->st.solved_to = J->top;
            g->st.expanded_to = J->top;
            for (int l = 0; l <= J->top; l++)
                if (J->gcnt[l] && l < g->st.expanded_to)
                    g->st.expanded_to = l;
            g->st.nodes = G[0];
            g->st.visits = G[1];
            g->st.tb_hits = G[2];
        }
    }
    e = cm_agree(J, e);
    uint64_t *cnt = calloc((size_t)R, sizeof *cnt);
    if (!cnt)
        cm_abort(J, "out of memory");
    for (int l = 0; e == CLOS_OK && l <= J->top; l++) {
        if (!J->gcnt[l])
            continue;
        MPI_Gather(&c->dk->st.cnt[l], 1, MPI_UINT64_T, cnt, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        enum clos_err le = CLOS_OK;
        if (me != 0)
            cm_send_share(J, l);
        else if (!cm_merge_level(J, g, l, cnt, &err)) {
            snprintf(J->info->why, sizeof J->info->why, "the closure on disk: %.200s", err.msg);
            le = CLOS_OOM;
        }
        e = cm_agree(J, le);
    }
    free(cnt);
    if (me != 0 || e != CLOS_OK) {
        free(g);
        return e;
    }
    /* rank 0: the merged files are its closure now, as one process's */
    const void *parts[1] = {&g->st};
    uint64_t sizes[1] = {sizeof g->st};
    bool ok = clos_ck_write_e(g->dir, "disk.state", "SOWDKS01", parts, sizes, 1, &err);
    dk_close_in(c->dk, false);
    dk_unmap(c->dk);
    free(c->dk);
    c->dk = g;
    for (int l = 0; ok && l <= J->top; l++)
        if (J->gcnt[l])
            ok = dk_map(c, l, 0, false) && dk_map(c, l, 1, false);
    if (!ok) {
        snprintf(J->info->why, sizeof J->info->why, "the closure on disk: %.200s",
                 err.msg[0] ? err.msg : "cannot map the merged level files");
        return CLOS_OOM;
    }
    g->solved = true;
    g->ranks = R;
    return CLOS_OK;
}

/* ---- the build ---- */

/* This rank's state in its directory, if it is this solve's (fresh: a
 * new one's): its incoming files truncated to the bytes it records (the
 * appends of a level stopped mid-way dropped), as closure_disk.c resumes. */
bool cm_state_matches(const struct dk_meta *st, const struct dk_meta *fresh)
{
    return strnlen(st->rules, sizeof st->rules) < sizeof st->rules &&
           strcmp(st->rules, fresh->rules) == 0 && st->pits == fresh->pits && st->K == fresh->K &&
           st->tbmax == fresh->tbmax && st->top == fresh->top &&
           memcmp(st->root, fresh->root, sizeof st->root) == 0 && st->expanded_to >= 0 &&
           st->expanded_to <= fresh->top + 1 && st->solved_to >= -1 && st->solved_to <= fresh->top;
}

static bool cm_load_state(struct cm *J, const struct dk_meta *fresh)
{
    struct clos_disk *dk = J->c->dk;
    struct dk_meta *st = &dk->st;
    void *sp[1] = {st};
    uint64_t ss[1] = {sizeof *st};
    bool ok = clos_ck_read(dk->dir, "disk.state", "SOWDKS01", sp, ss, 1) &&
              cm_state_matches(st, fresh);
    for (int l = 0; ok && l < st->expanded_to; l++) {
        char path[4200];
        struct stat sb;
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        if (!st->inlen[l])
            unlink(path);
        else if (stat(path, &sb) < 0 || (uint64_t)sb.st_size < st->inlen[l] ||
                 truncate(path, (off_t)st->inlen[l]) < 0)
            ok = false;
    }
    return ok;
}

/* This rank's directory WORK/rank-r-of-R and its state: the ranks' states
 * resumed if every rank has this solve's with the same levels expanded
 * (the levels solved: those every rank has solved), else a fresh one on
 * every rank, written at once.  Collective. */
static enum clos_err cm_open(struct cm *J)
{
    struct clos *c = J->c;
    const struct clos_env *env = J->env;
    struct clos_disk *dk = c->dk;
    struct sow_error err;
    if (J->M.rank == 0)
        clos_mpi_work(env->work, dk->dir, sizeof dk->dir);
    else /* the worker's --work is its share's directory already (cmd_solve) */
        snprintf(dk->dir, sizeof dk->dir, "%s", env->work);
    enum clos_err e = CLOS_OK;
    if (fio_mkdir_p(dk->dir, &err) != SOW_OK || clos_work_check(dk->dir, &err) != SOW_OK) {
        snprintf(J->info->why, sizeof J->info->why, "%.250s", err.msg);
        e = CLOS_OOM;
    }
    if ((e = cm_agree(J, e)) != CLOS_OK)
        return e;
    struct dk_meta fresh;
    memset(&fresh, 0, sizeof fresh);
    snprintf(fresh.rules, sizeof fresh.rules, "%s", c->rs->name);
    fresh.pits = (uint32_t)c->pits;
    fresh.K = (uint32_t)c->K;
    fresh.tbmax = J->tbmax;
    fresh.top = J->top;
    fresh.expanded_to = J->top + 1;
    fresh.solved_to = -1;
    memcpy(fresh.root, J->rootw, 8 * (size_t)c->K);
    char path[4200];
    snprintf(path, sizeof path, "%s/disk.state", dk->dir);
    uint64_t lo[3], hi[2];
    for (int tries = 0;; tries++) {
        const bool had = access(path, F_OK) == 0, ok = cm_load_state(J, &fresh);
        lo[0] = ok;
        lo[1] = ok ? (uint64_t)dk->st.expanded_to : 0;
        lo[2] = ok ? (uint64_t)(dk->st.solved_to + 1) : 0;
        hi[0] = ok ? (uint64_t)dk->st.expanded_to : UINT64_MAX;
        hi[1] = had;
        cm_reduce(J, lo, 3, MPI_MIN);
        cm_reduce(J, hi, 2, MPI_MAX);
        /* no rank has a state of this rank count: an earlier job's of
         * another, dealt out to these ranks (closure_mpi_reshard.c) */
        if (tries || hi[1] || !cm_reshard(J, &fresh))
            break;
    }
    if (lo[0] && lo[1] == hi[0]) { /* resumed */
        dk->st.solved_to = (int32_t)lo[2] - 1;
        env->nodes[0] += dk->st.nodes;
        env->visits[0] += dk->st.visits;
        env->tb_hits[0] += dk->st.tb_hits;
        memcpy(J->gcnt, dk->st.cnt, sizeof J->gcnt);
        cm_reduce(J, J->gcnt, SOW_MAX_SEEDS + 1, MPI_SUM);
        uint64_t total = 0;
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            total += J->gcnt[l];
        char sw[48];
        clos_say(env, &J->last, true, "closure on disk across %d ranks resumed from %s/rank-*-of-%d: "
                 "levels %d..%d expanded (%llu positions), %s", J->M.size, env->work,
                 J->M.size, dk->st.expanded_to, J->top, (unsigned long long)total,
                 cm_solved_words(dk->st.solved_to, sw, sizeof sw));
        return CLOS_OK;
    }
    if (hi[1])
        clos_say(env, &J->last, true, "note: the ranks' states in %s/rank-*-of-%d are damaged, "
                 "another solve's or not at the same level: the closure on disk starts over",
                 env->work, J->M.size);
    for (int l = 0; l <= SOW_MAX_SEEDS; l++) {
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        unlink(path);
    }
    dk->st = fresh;
    memset(J->gcnt, 0, sizeof J->gcnt);
    if (!dk_save_state(c, env)) {
        snprintf(J->info->why, sizeof J->info->why, "the closure on disk: %.200s", dk->err.msg);
        e = CLOS_OOM;
    }
    return cm_agree(J, e);
}

/* Resumed: the levels solved before, mapped and checked on every rank; from
 * the lowest one that fails its check on some rank, the levels are solved
 * again. */
static void cm_map_solved(struct cm *J)
{
    struct clos *c = J->c;
    struct clos_disk *dk = c->dk;
    uint64_t bad = (uint64_t)dk->st.solved_to + 1;
    for (int m = 0; m <= dk->st.solved_to; m++)
        if (J->gcnt[m] && (!dk_map(c, m, 0, true) || !dk_map(c, m, 1, true))) {
            bad = (uint64_t)m;
            break;
        }
    cm_reduce(J, &bad, 1, MPI_MIN);
    if ((int)bad <= dk->st.solved_to) {
        clos_say(J->env, &J->last, true, "note: level %d's files on some rank are damaged: levels "
                 "%d..%d are solved again", (int)bad, (int)bad, J->top);
        dk->st.solved_to = (int32_t)bad - 1;
    }
}

/* What rank 0 tells the workers at a build's start: the root's level and
 * key, the levels answered by tables (the workers have the same ones: the
 * same options, the same levels built in memory). */
struct cm_params {
    int32_t top, tbmax, K, pad;
    uint64_t rootw[MAX_KEY_WORDS];
};

static enum clos_err cm_build(struct clos *c, const struct clos_env *env,
                              const struct cm_params *P, struct clos_info *info);

/* The start of a build: rank 0's word (CM_GO, or its exit status: it
 * ended, the worker ends with it) and the build's parameters. */
static void cm_start(struct cm_params *P)
{
    int go = CM_GO;
    tbm_bcast(&cm_job.M, &go, 1, MPI_INT, 0);
    if (go != CM_GO) {
        MPI_Finalize();
        fflush(NULL);
        _exit(go);
    }
    tbm_bcast(&cm_job.M, P, (int)sizeof *P, MPI_BYTE, 0);
}

enum clos_err clos_mpi_build(struct clos *c, const struct clos_env *env, int top, int tbmax,
                             const uint64_t *rootw, struct clos_info *info, bool *took)
{
    int on = 0, fin = 0;
    MPI_Initialized(&on);
    if (on)
        MPI_Finalized(&fin);
    *took = on && !fin;
    if (!*took)
        return CLOS_OK;
    struct cm_params P = {.top = top, .tbmax = tbmax, .K = c->K};
    memcpy(P.rootw, rootw, 8 * (size_t)c->K);
    cm_start(&P);
    enum clos_err e = cm_build(c, env, &P, info);
    if (cm_job.M.rank == 0 || e != CLOS_OK)
        return e;
    /* A worker, its first build done: rank 0 alone goes on (the answer,
     * the PV, the move values, --save), and when its search needs the
     * closure of another position (one the first did not hold), that
     * build is shared again; the worker waits here for each, then for
     * rank 0's exit status (cm_start). */
    for (;;) {
        dk_free(c);
        cm_start(&P);
        clos_reset(c);
        c->peak = c->refused = 0;
        if (P.K != c->K) {
            clos_free_arrays(c);
            c->K = P.K;
        }
        memset(info, 0, sizeof *info);
        cm_build(c, env, &P, info);
    }
}

static enum clos_err cm_build(struct clos *c, const struct clos_env *env,
                              const struct cm_params *P, struct clos_info *info)
{
    const int top = P->top, tbmax = P->tbmax;
    const uint64_t *rootw = P->rootw;
    struct clos_env lenv = *env;
    if (cm_job.M.rank != 0)
        lenv.progress = NULL; /* rank 0 alone says how far it is */
    struct cm J;
    memset(&J, 0, sizeof J);
    J.M = cm_job.M;
    J.c = c;
    J.env = &lenv;
    J.info = info;
    J.top = top;
    J.tbmax = tbmax;
    J.rootw = rootw;
    J.t0 = util_now();
    J.piece = (uint64_t)util_env_long("SOW_MPI_TEST_PIECE", 1, LONG_MAX, CM_PIECE);
    /* (tests) the retrograde threaded on shares this small and up */
    lenv.par_min =
        (uint64_t)util_env_long("SOW_MPI_TEST_PAR_MIN", 1, LONG_MAX, (long)lenv.par_min);
    J.send = calloc((size_t)J.M.size, sizeof *J.send);
    c->dk = calloc(1, sizeof *c->dk);
    c->um = false;
    enum clos_err e = J.send && c->dk ? CLOS_OK : CLOS_OOM;
    if (e == CLOS_OK && (env->tb ? tb_max_level(env->tb) : -1) != tbmax) {
        snprintf(info->why, sizeof info->why, "rank %d's endgame levels are not rank 0's",
                 J.M.rank);
        e = CLOS_OOM;
    }
    if (e == CLOS_OK)
        dk_sums(env, c->dk->base);
    e = cm_agree(&J, e);
    if (e == CLOS_OK)
        e = cm_open(&J);
    /* pass 1: down from the root's level (or the first level not expanded
     * on every rank), each level reached by some rank */
    for (int m = top; e == CLOS_OK && m >= 0; m--) {
        if (m >= c->dk->st.expanded_to)
            continue;
        uint64_t reached = m == top || c->dk->st.inlen[m];
        cm_reduce(&J, &reached, 1, MPI_MAX);
        if (reached)
            e = cm_down(&J, m);
    }
    info->expand_s = util_now() - J.t0;
    double t1 = util_now();
    /* pass 2: up from the lowest level not solved on every rank */
    if (e == CLOS_OK)
        cm_map_solved(&J);
    for (int m = 0; e == CLOS_OK && m <= top; m++)
        if (J.gcnt[m] && m > c->dk->st.solved_to)
            e = cm_up(&J, m);
    info->solve_s = util_now() - t1;
    /* the counters over every rank: rank 0's are the job's */
    uint64_t x[3], G[3];
    dk_sums(env, x);
    for (int k = 0; k < 3; k++)
        G[k] = x[k] - (c->dk ? c->dk->base[k] : 0);
    uint64_t mine[3] = {G[0], G[1], G[2]};
    cm_reduce(&J, G, 3, MPI_SUM);
    if (J.M.rank == 0) {
        env->nodes[0] += G[0] - mine[0];
        env->visits[0] += G[1] - mine[1];
        env->tb_hits[0] += G[2] - mine[2];
    }
    if (e == CLOS_OK)
        e = cm_merge(&J, G);
    for (int l = 0; l <= SOW_MAX_SEEDS; l++)
        free(J.et.buf[l]);
    for (int r = 0; J.send && r < J.M.size; r++)
        free(J.send[r].v);
    free(J.send);
    info->layers = 0;
    if (e == CLOS_OK) {
        info->positions = 0;
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            info->positions += J.gcnt[l];
        memcpy(info->level_count, J.gcnt, sizeof info->level_count);
        c->n = 0;
    }
    return e;
}

/* ---- the job ---- */

int clos_mpi_start(void)
{
    int on = 0, prov;
    MPI_Initialized(&on);
    if (!on)
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &cm_job.M.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cm_job.M.size);
    cm_job.M.nap_ns = 1000 * util_env_long("SOW_MPI_NAP_US", 0, 999999, 20);
    if (cm_job.M.rank != 0) { /* rank 0 alone prints (a worker's abort still says why) */
        cm_job.errfd = fcntl(2, F_DUPFD_CLOEXEC, 3);
        if (cm_job.errfd < 0)
            cm_job.errfd = 2;
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return cm_job.M.rank;
}

const char *clos_mpi_work(const char *work, char *buf, size_t len)
{
    snprintf(buf, len, "%s/rank-%d-of-%d", work, cm_job.M.rank, cm_job.M.size);
    return buf;
}

int clos_mpi_end(int rc)
{
    int x = rc;
    tbm_bcast(&cm_job.M, &x, 1, MPI_INT, 0);
    if (x == CM_GO) /* rank 0 is in a build this rank never reached: cannot happen */
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    return x;
}
