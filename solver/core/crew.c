/* A* on several threads: a full bucket's states are expanded in chunks, side
 * by side, in two passes.
 *
 * 1. Expand.  The threads claim blocks of the chunk and expand their states,
 *    reading the table but never writing it: a child already stored as cheaply
 *    is dropped there (most children are), the rest, their bounds sharpened,
 *    are written to the block's own list, as is a state whose sharpened bound
 *    sends it to a later layer.  Each thread overlaps two expansions as the
 *    one-thread loop does (astar.h, Expansion).
 * 2. Admit.  One thread stores and pushes the lists in block order, exactly
 *    as the one-thread loop does for each child.  Meanwhile the other threads
 *    already expand the bucket's next chunk (and this thread joins them when
 *    done): the table has room reserved for every key the lists may add, so
 *    it does not move, and a key being stored meanwhile only decides whether
 *    a child is dropped in pass 1 or by its claim in pass 2.  (No state of the
 *    next chunk can be stored more cheaply by this one: both are at depth g,
 *    their children at g + 1.)  The pipeline stops when the bucket runs low
 *    or the one below it fills, so that the deepest bucket still goes first.
 *    The room is made before pass 2: when the table must grow, the threads
 *    fault in its new pages and move its keys side by side (see table.c).
 *
 * Apart from those moves, the table and the buckets are written by one
 * thread only, and what is pushed, and in which order, depends on the chunks
 * and blocks alone, not on which thread expanded them: the search (its
 * states, nodes and solution) is the same on every run with the same number
 * of threads.  A goal ends the
 * search at the first block holding one; blocks after it may stop early. */
#include "astar.h" /* first: Python.h sets the feature macros */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8
#define BLOCK 64               /* states a thread claims at a time */
#define CHUNK_BLOCKS 64        /* blocks in a chunk: up to 4096 states */
#define MAX_CHILDREN (MAX_ROBOTS * 4)

typedef struct {
    uint64_t key;
    uint8_t f, g;
} Push;

typedef struct {
    Push push[BLOCK * MAX_CHILDREN];
    int npush;
    int goal;                  /* a state of this block has a goal child */
    uint64_t goal_parent;
    int16_t goal_cell;
    uint8_t goal_dir;
    int beyond;
    uint64_t nodes;
} Block;

/* A barrier whose party count may drop before its first use (a thread that
 * could not be started).  A thread waits spinning for a while before it
 * sleeps: the gate opens thousands of times in a deep search, mostly within
 * microseconds, and waking a sleeping thread takes tens of them.  (Not when
 * the parties outnumber the processors: a spinning thread would hold one
 * back from a thread with work to do.) */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int parties, arrived, spins;
    unsigned generation;
} Barrier;

/* A chunk of a bucket: up to CHUNK_BLOCKS blocks of its states. */
typedef struct {
    const uint64_t *keys;
    size_t n;
    int f, g;
    atomic_size_t next;        /* the next block to claim */
    atomic_size_t goal_block;  /* the first block known to hold a goal */
    Block blocks[CHUNK_BLOCKS];
} Chunk;

struct Crew {
    Astar *A;
    int started;               /* helper threads running */
    pthread_t tid[MAX_THREADS];
    Barrier gate;
    int quit;
    Chunk *live;               /* the chunk being expanded */
    Chunk chunk[2];            /* one expanded while the other is admitted */
    int task;                  /* what the helpers do at the gate's next opening (TASK_*) */
    atomic_size_t next_part;   /* the next part of the task's slots */
    Growth *growth;            /* TASK_MOVE: the table's growth ... */
    size_t move_lo, move_hi;   /* ... and its step's old slots */
    int64_t worked_ns, waited_ns; /* this thread's expansion, and its waits for the helpers */
    int phases;
};

/* A crew pays only when its threads run side by side.  When the processors
 * are taken (another busy process), a helper runs in turns with it, and every
 * opening of the gate waits for the helper's next turn: two threads would be
 * slower than one (and use twice the processor time).  So a crew starts only
 * with a processor free for each helper (this process's affinity, less the
 * other threads running now), and a crew whose leader waits at the gate
 * longer than it works, over a number of chunks, hands the rest of the search
 * to one thread (the helpers sleep at the gate until the search ends). */
#define PROBE_PHASES 16

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Processors this process may run on, less the threads running elsewhere now. */
static int processors_free(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
#endif
    FILE *f = fopen("/proc/stat", "r");
    long running = 1;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "procs_running %ld", &running) == 1) break;
        fclose(f);
    }
    long others = running - 1; /* this thread is running */
    return (int)(cpus - (others > 0 ? others : 0));
}

enum { TASK_EXPAND, TASK_POPULATE, TASK_MOVE };

#define SPINS 20000 /* about 0.1-0.5 ms of pauses */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

static void barrier_wait(Barrier *b) {
    unsigned generation = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == __atomic_load_n(&b->parties, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
        pthread_mutex_lock(&b->m);
        __atomic_add_fetch(&b->generation, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->m);
        return;
    }
    for (int i = 0, spins = __atomic_load_n(&b->spins, __ATOMIC_RELAXED); i < spins; i++) {
        if (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) != generation) return;
        CPU_RELAX();
    }
    pthread_mutex_lock(&b->m);
    while (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) == generation) pthread_cond_wait(&b->cv, &b->m);
    pthread_mutex_unlock(&b->m);
}

/* The second half of expansion e (see astar.h): its children not stored as
 * cheaply, their bounds sharpened, into the block. */
static void expansion_filter(const Astar *A, Expansion *e, Block *B) {
    e->live = 0;
    for (int c = 0; c < e->nchild; c++) {
        int cf = child_layer(A, e, c, &B->beyond);
        if (cf < 0) continue;
        ptrdiff_t slot = table_find(&A->seen, e->child[c]);
        if (slot >= 0 && get_val(&A->seen, (size_t)slot) <= e->g + 1) continue;
        uint64_t entry = child_entry(A, e, c, &cf, &B->beyond);
        if (cf >= 0) B->push[B->npush++] = (Push){entry, (uint8_t)cf, (uint8_t)(e->g + 1)};
    }
    occupy(A->b, &e->p, e->occ, 0);
}

/* Pass 1 for one block of chunk k, two expansions overlapped as in the
 * one-thread loop (ex: the thread's pair, their occ clear). */
static void expand_block(Crew *c, Chunk *k, size_t index, Expansion *ex) {
    const Astar *A = c->A;
    Block *B = &k->blocks[index];
    B->npush = B->goal = B->beyond = 0;
    B->nodes = 0;
    Expansion *pending = NULL;
    size_t lo = index * BLOCK, hi = lo + BLOCK < k->n ? lo + BLOCK : k->n;
    for (size_t i = lo; i < hi; i++) {
        if (atomic_load_explicit(&k->goal_block, memory_order_relaxed) < index) break; /* moot */
        Expansion *e = pending == ex ? ex + 1 : ex;
        int later;
        int what = astar_pop(A, k->keys[i], k->f, k->g, e, &later);
        if (what == POP_LATER) {
            if (later >= A->open.dim) B->beyond = 1;
            else B->push[B->npush++] = (Push){k->keys[i] | SHARPENED, (uint8_t)later, (uint8_t)k->g};
            continue;
        }
        e->entry = k->keys[i];
        e->f = k->f;
        e->g = k->g;
        int m = expansion_open(A, e);
        B->nodes += (uint64_t)e->nmoves;
        if (m >= 0) { /* pass 2 admits nothing of a block with a goal */
            B->goal = 1;
            B->goal_parent = entry_key(A, e->entry);
            B->goal_cell = e->moves[m].from;
            B->goal_dir = e->moves[m].d;
            size_t seen = atomic_load(&k->goal_block);
            while (index < seen && !atomic_compare_exchange_weak(&k->goal_block, &seen, index)) {}
            break;
        }
        if (pending) expansion_filter(A, pending, B);
        pending = e;
    }
    if (pending && pending->live) {
        if (B->goal) { occupy(A->b, &pending->p, pending->occ, 0); pending->live = 0; }
        else expansion_filter(A, pending, B);
    }
}

static size_t blocks_in(const Chunk *k) { return (k->n + BLOCK - 1) / BLOCK; }

static void expand_blocks(Crew *c, Chunk *k, Expansion *ex) {
    for (size_t i; (i = atomic_fetch_add(&k->next, 1)) < blocks_in(k);) expand_block(c, k, i, ex);
}

#define POPULATE_PARTS 64
#define MOVE_PART ((size_t)1 << 16) /* old slots a thread moves at a time */

static void populate_parts(Crew *c) {
    for (size_t i; (i = atomic_fetch_add(&c->next_part, 1)) < POPULATE_PARTS;)
        table_populate(&c->A->seen, i, POPULATE_PARTS);
}

static void move_parts(Crew *c) {
    for (size_t lo; (lo = c->move_lo + atomic_fetch_add(&c->next_part, 1) * MOVE_PART) < c->move_hi;)
        table_growth_move(&c->A->seen, c->growth, lo, lo + MOVE_PART < c->move_hi ? lo + MOVE_PART : c->move_hi, 1);
}

/* Let the helpers through the gate to do `task` (not TASK_EXPAND) with this
 * thread, and wait for them. */
static void crew_task(Crew *c, int task) {
    c->task = task;
    atomic_store(&c->next_part, 0);
    barrier_wait(&c->gate);
    if (task == TASK_POPULATE) populate_parts(c);
    else move_parts(c);
    barrier_wait(&c->gate);
    c->task = TASK_EXPAND;
}

static void *helper(void *arg) {
    Crew *c = arg;
    Expansion ex[2];
    memset(ex, 0, sizeof ex);
    ex[0].memo = ex[1].memo = relaxed_memo_new(c->A->b->stops, ASTAR_MEMO_BITS);
    for (;;) {
        barrier_wait(&c->gate);
        if (c->quit) {
            free(ex[0].memo);
            return NULL;
        }
        if (c->task == TASK_POPULATE) populate_parts(c);
        else if (c->task == TASK_MOVE) move_parts(c);
        else expand_blocks(c, c->live, ex);
        barrier_wait(&c->gate);
    }
}

Crew *crew_start(Astar *A, int threads) {
    if (A->lim->crew_yields) {
        int free_now = processors_free();
        if (threads > free_now) threads = free_now;
    }
    Crew *c = threads > 1 ? calloc(1, sizeof(Crew)) : NULL;
    if (!c) { A->lim->threads = 1; return NULL; }
    c->A = A;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_mutex_init(&c->gate.m, NULL);
    pthread_cond_init(&c->gate.cv, NULL);
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&c->tid[c->started], NULL, helper, c) != 0) break;
        c->started++;
    }
    /* Helpers may already wait at the gate; none passes it before this thread arrives. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    __atomic_store_n(&c->gate.spins, 1 + c->started <= cpus ? SPINS : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->gate.parties, 1 + c->started, __ATOMIC_RELEASE);
    return c;
}

void crew_stop(Crew *c) {
    c->quit = 1;
    barrier_wait(&c->gate);
    for (int t = 0; t < c->started; t++) pthread_join(c->tid[t], NULL);
    pthread_cond_destroy(&c->gate.cv);
    pthread_mutex_destroy(&c->gate.m);
    free(c);
}

/* Pass 2: chunk k's pushes in block order, up to a goal. */
static void admit_blocks(Crew *c, Chunk *k, Result *res) {
    Astar *A = c->A;
    for (size_t i = 0; i < blocks_in(k) && res->status < 0; i++) {
        Block *B = &k->blocks[i];
        res->nodes += B->nodes;
        A->beyond |= B->beyond;
        if (B->goal) {
            A->goal_parent = B->goal_parent;
            A->goal_cell = B->goal_cell;
            A->goal_dir = B->goal_dir;
            res->status = ST_OPTIMAL;
            res->length = res->lower_bound = k->g + 1;
            return;
        }
        for (int j = 0; j < B->npush && res->status < 0; j++) {
            Push *q = &B->push[j];
            if (j + 8 < B->npush) table_prefetch(&A->seen, entry_key(A, B->push[j + 8].key));
            if (q->g == k->g) { /* a state sent on to a later layer by its sharpened bound */
                if (astar_push(A, q->f, q->g, q->key, res) != 0) res->lower_bound = k->f;
            } else {
                astar_admit(A, q->key, q->f, q->g, k->f, res);
            }
        }
    }
}

/* The next chunk of bucket (f, g) into k, published to the helpers. */
static Chunk *take_chunk(Crew *c, Chunk *k, KeyList *bucket, int f, int g) {
    size_t n = bucket->len < (size_t)BLOCK * CHUNK_BLOCKS ? bucket->len : (size_t)BLOCK * CHUNK_BLOCKS;
    bucket->len -= n; /* the chunk stays in place: pass 2 pushes into other buckets only */
    k->keys = bucket->keys + bucket->len;
    k->n = n;
    k->f = f;
    k->g = g;
    atomic_store(&k->next, 0);
    atomic_store(&k->goal_block, SIZE_MAX);
    c->live = k;
    return k;
}

/* Room in the table for every key chunk k's pass 2 may store, so that the
 * table does not move while the next chunk is expanded; 0 when there is. */
static int reserve(Crew *c, const Chunk *k) {
    Astar *A = c->A;
    size_t keys = 0;
    for (size_t i = 0; i < blocks_in(k); i++) keys += (size_t)k->blocks[i].npush;
    while (A->seen.count + keys > A->seen.limit) {
        size_t before = table_bytes(&A->seen), max_bytes = A->budget - A->bytes + before;
        Growth *growth = NULL;
        if (table_grows_in_place(&A->seen, max_bytes)) {
            /* The helpers wait at the gate: they share the new pages' clearing,
             * then the large steps of the keys' move. */
            crew_task(c, TASK_POPULATE);
            growth = table_growth_begin(&A->seen);
        }
        if (growth) {
            c->growth = growth;
            while (table_growth_step(growth, &c->move_lo, &c->move_hi)) {
                if (c->move_hi - c->move_lo > MOVE_PART) crew_task(c, TASK_MOVE);
                else table_growth_move(&A->seen, growth, c->move_lo, c->move_hi, 0);
            }
            table_growth_end(&A->seen, growth);
        } else if (table_grow(&A->seen, max_bytes) != 0) {
            return -1;
        }
        A->bytes += table_bytes(&A->seen) - before;
    }
    return 0;
}

void crew_chunk(Crew *c, KeyList *bucket, int f, int g, Result *res) {
    Astar *A = c->A;
    Expansion ex[2];
    memset(ex, 0, sizeof ex);
    ex[0].memo = ex[1].memo = A->memo;
    Chunk *k = take_chunk(c, &c->chunk[0], bucket, f, g);
    barrier_wait(&c->gate);
    expand_blocks(c, k, ex);
    barrier_wait(&c->gate);
    for (;;) {
        Chunk *next = NULL;
        /* Room first, while no helper reads the table (without room in the
         * budget, pass 2's claims stop the search where it runs out). */
        int room = atomic_load(&k->goal_block) != SIZE_MAX || reserve(c, k) == 0;
        if (room && A->lim->threads > 1 && atomic_load(&k->goal_block) == SIZE_MAX &&
            bucket->len >= A->lim->crew_from &&
            (g + 1 >= A->open.dim || BUCKET(&A->open, f, g + 1)->len == 0) && !limits_reached(A->lim)) {
            next = take_chunk(c, k == &c->chunk[0] ? &c->chunk[1] : &c->chunk[0], bucket, f, g);
            barrier_wait(&c->gate); /* the helpers start on it */
        }
        admit_blocks(c, k, res);
        if (!next) return;
        int64_t t0 = now_ns();
        expand_blocks(c, next, ex);
        int64_t t1 = now_ns();
        barrier_wait(&c->gate);
        c->worked_ns += t1 - t0;
        c->waited_ns += now_ns() - t1;
        if (A->lim->crew_yields && ++c->phases >= PROBE_PHASES && c->waited_ns > c->worked_ns)
            A->lim->threads = 1; /* see above */
        if (res->status >= 0) return; /* the search ended in k: next is moot */
        k = next;
    }
}
