/* The optimal search for Ricochet Robots: table-driven, no global mutable state.
 *
 * Python hands over a compiled puzzle (step tables, barriers, robots, target);
 * the search runs with the GIL released.  Two strategies share one move
 * generator: iterative-deepening A* with a transposition table (most puzzles:
 * the lone-robot lower bound prunes hard, little memory) and A* over a hash
 * set with bucketed open lists (deep puzzles, where re-deepening costs).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <pthread.h>

#define MAX_CELLS 1024
#define MAX_ROBOTS 5
#define MAX_DEPTH 255
#define NO_CELL (-1)

/* Ricochet status of a robot (see solver/rules.py). */
enum { UNMOVED = 0, LAST_VERTICAL = 1, LAST_HORIZONTAL = 2, TURNED = 3 };

/* How a search ended. */
enum { ST_OPTIMAL = 0, ST_UNSOLVABLE, ST_DEPTH, ST_TIME, ST_STATES, ST_CANCELLED };
static const char *STATUS_NAMES[] = {"optimal", "unsolvable", "depth_limit", "timeout",
                                     "state_limit", "cancelled"};

/* DEFLECT[orientation][direction], orientation 0 = '/', 1 = '\'; N E S W = 0 1 2 3. */
static const int8_t DEFLECT[2][4] = {{1, 0, 3, 2}, {3, 2, 1, 0}};

typedef struct {
    int ncells, nrobots, width;
    int straight;                 /* no barriers, no openings: every slide is a straight line */
    int cell_bits;
    int key_bits;                 /* bits a key uses (statuses only for tracked robots) */
    const int16_t (*step)[MAX_CELLS]; /* [direction][cell]: next cell, or -1 (wall, edge, blocked) */
    const uint8_t *barrier;       /* per cell: 0 none; else (colour + 1) | (orientation << 3) */
    int has_barriers, loops_possible;
    uint8_t colour[MAX_ROBOTS];   /* colour index of each robot (0 red .. 4 black) */
    int target;
    uint8_t eligible;             /* robots that may finish (bit r) */
    int ricochet;                 /* 1: the finishing robot must have turned */
    uint8_t tracked;              /* robots whose ricochet status is part of the state */
    int group[MAX_ROBOTS];        /* interchangeable robots share a group id */
    uint8_t order[MAX_ROBOTS];    /* move order in deepening: robots that may finish first */
    const uint8_t *lb[MAX_ROBOTS]; /* moves a lone robot needs if it could stop anywhere */
    int single_finisher;          /* the one robot that may finish, or -1 */
    const uint8_t *exact;         /* an analysis: the plain-rule length of every position, or NULL */
    uint64_t exact_stride[MAX_ROBOTS]; /* index of robot r's cell in that table */
    int exact_sym;                /* robots the table keeps in sorted order (interchangeable helpers) */
    uint64_t exact_sym_stride[MAX_ROBOTS]; /* their slots' strides, ascending */
} Board;

/* Limits, shared by every strategy. */
typedef struct {
    int max_depth;
    double deadline;              /* monotonic seconds; 0 = none */
    size_t state_budget;          /* bytes for tables */
    volatile const uint8_t *cancel; /* polled; nonzero = stop */
    int stopped;                  /* ST_TIME / ST_STATES / ST_CANCELLED once a limit hit */
    uint64_t polls;
} Limits;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Cheap to call often: looks at the clock and the cancel flag every 4096 calls. */
static inline int out_of_time(Limits *lim) {
    if (lim->stopped) return 1;
    if ((++lim->polls & 4095) != 0) return 0;
    if (lim->cancel && *lim->cancel) { lim->stopped = ST_CANCELLED; return 1; }
    if (lim->deadline > 0 && now_seconds() > lim->deadline) { lim->stopped = ST_TIME; return 1; }
    return 0;
}

/* ------------------------------------------------------------------ moves */

/* Where robot `r` stops moving in direction d; -1 if the move is not allowed.
 * occ marks occupied cells (the mover's own cell must be clear). */
static inline int slide(const Board *b, const uint8_t *occ, int r, int start, int d, int *deflected) {
    int cell = start;
    *deflected = 0;
    if (!b->has_barriers && !b->loops_possible) {
        for (;;) {
            int n = b->step[d][cell];
            if (n < 0 || occ[n]) break;
            cell = n;
        }
        return cell == start ? -1 : cell;
    }
    /* Barriers bend the slide; openings wrap it.  A slide that visits more
     * (cell, direction) pairs than exist has entered a loop: it never ends. */
    int limit = 4 * b->ncells, steps = 0;
    int colour1 = b->colour[r] + 1;
    for (;;) {
        int n = b->step[d][cell];
        if (n < 0 || occ[n]) break;
        cell = n;
        uint8_t bar = b->barrier[cell];
        if (bar && (bar & 7) != colour1) {
            d = DEFLECT[bar >> 3][d];
            *deflected = 1;
        }
        if (++steps > limit) return -1;
    }
    if (cell == start || b->barrier[cell]) return -1;
    return cell;
}

static inline int adjacent(const Board *b, int a, int c) {
    int dx = a % b->width - c % b->width, dy = a / b->width - c / b->width;
    return dx * dx + dy * dy == 1;
}

static inline int next_status(int status, int d, int deflected) {
    if (status == TURNED || deflected) return TURNED;
    int moved = (d & 1) ? LAST_HORIZONTAL : LAST_VERTICAL;
    if (status == UNMOVED || status == moved) return moved;
    return TURNED;
}

/* A position in the search: robot cells and ricochet statuses. */
typedef struct {
    int16_t pos[MAX_ROBOTS];
    uint8_t status[MAX_ROBOTS];
} Pos;

static inline int is_goal(const Board *b, const Pos *p, int r) {
    return p->pos[r] == b->target && ((b->eligible >> r) & 1) &&
           (!b->ricochet || p->status[r] == TURNED);
}

/* The lone-robot bound of robot r alone (a robot on the target that has not
 * turned yet must leave and come back). */
static inline int robot_bound(const Board *b, const Pos *p, int r) {
    int h = b->lb[r][p->pos[r]];
    return h == 0 && b->ricochet && p->status[r] != TURNED ? 2 : h;
}

/* Lower bound on the moves still needed from p: the best lone-robot bound,
 * or, with an analysis of the board and goal at hand, the position's exact
 * plain-rule length where that is larger (the ricochet rule only takes
 * finishing moves away, so it is a lower bound under either rule, and a
 * consistent one: a move changes it by at most one). */
static inline int heuristic(const Board *b, const Pos *p) {
    int best = 255;
    for (int r = 0; r < b->nrobots; r++) {
        if (!((b->eligible >> r) & 1)) continue;
        int h = robot_bound(b, p, r);
        if (h < best) best = h;
    }
    if (b->exact && best != 255) {
        uint64_t idx = 0;
        int g[MAX_ROBOTS], k = 0;
        for (int r = 0; r < b->nrobots; r++) {
            if ((b->exact_sym >> r) & 1) g[k++] = p->pos[r];
            else idx += (uint64_t)p->pos[r] * b->exact_stride[r];
        }
        for (int i = 1; i < k; i++) {
            int x = g[i], j = i - 1;
            while (j >= 0 && g[j] > x) { g[j + 1] = g[j]; j--; }
            g[j + 1] = x;
        }
        for (int i = 0; i < k; i++) idx += (uint64_t)g[i] * b->exact_sym_stride[i];
        int v = b->exact[idx];
        if (v > best) best = v; /* 255: unreachable under any rule */
    }
    return best;
}

/* Whether a helper's move may still fit in `rem` moves from a position whose
 * bound is h: the lone-robot bound does not move when a helper moves, an
 * exact table's length drops by at most one. */
static inline int helper_fits(const Board *b, int h, int rem) {
    return b->exact ? h - 1 <= rem : h <= rem;
}

/* The state as one integer: robots' cells (and the ricochet status of tracked
 * robots), interchangeable robots sorted so that equivalent positions share a key. */
static inline uint64_t make_key(const Board *b, const Pos *p) {
    uint32_t v[MAX_ROBOTS];
    int n = b->nrobots;
    for (int r = 0; r < n; r++)
        v[r] = ((b->tracked >> r) & 1) ? ((uint32_t)p->pos[r] << 2) | p->status[r] : (uint32_t)p->pos[r];
    /* Robots of one group are contiguous (arranged by setup_search); sort each run. */
    for (int i = 1; i < n; i++) {
        if (b->group[i] != b->group[i - 1]) continue;
        uint32_t x = v[i];
        int j = i - 1;
        while (j >= 0 && b->group[j] == b->group[i] && v[j] > x) { v[j + 1] = v[j]; j--; }
        v[j + 1] = x;
    }
    uint64_t key = 0;
    for (int r = 0; r < n; r++) key = (key << (b->cell_bits + (((b->tracked >> r) & 1) ? 2 : 0))) | v[r];
    return key + 1; /* 0 marks an empty slot */
}

static inline void decode_key(const Board *b, uint64_t key, Pos *p) {
    key -= 1;
    for (int r = b->nrobots - 1; r >= 0; r--) {
        int tracked = (b->tracked >> r) & 1;
        int width = b->cell_bits + (tracked ? 2 : 0);
        uint32_t v = (uint32_t)(key & (((uint64_t)1 << width) - 1));
        key >>= width;
        p->pos[r] = (int16_t)(tracked ? v >> 2 : v);
        p->status[r] = (uint8_t)(tracked ? v & 3 : 0);
    }
}

/* ------------------------------------------------------------ hash tables */

/* Open addressing, linear probing; key 0 = empty.  Each slot holds a one-byte
 * value: in the key's top 8 bits when keys are short enough (one cache line
 * touched per probe), else in a separate array. */
#define KEY_MASK 0x00FFFFFFFFFFFFFFULL
typedef struct {
    uint64_t *keys;
    uint8_t *vals;          /* NULL when values are embedded */
    size_t mask, count, limit;
    int embedded;
} Table;

static inline uint64_t slot_key(const Table *t, size_t i) {
    return t->embedded ? t->keys[i] & KEY_MASK : t->keys[i];
}
static inline int get_val(const Table *t, size_t i) {
    return t->embedded ? (int)(t->keys[i] >> 56) : t->vals[i];
}
static inline void set_val(Table *t, size_t i, int v) {
    if (t->embedded) t->keys[i] = (t->keys[i] & KEY_MASK) | ((uint64_t)v << 56);
    else t->vals[i] = (uint8_t)v;
}
static inline size_t slot_bytes(const Table *t) { return t->embedded ? 8 : 9; }

/* Zeroed memory for a table.  Large tables are mapped on their own and asked
 * for huge pages: a search touches them at random, and with 4 KiB pages most
 * probes would also miss the TLB. */
#define BIG_TABLE ((size_t)4 << 20)
static void *table_alloc(size_t bytes) {
    if (bytes < BIG_TABLE) return calloc(1, bytes);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

static void table_release(void *p, size_t bytes) {
    if (!p) return;
    if (bytes < BIG_TABLE) free(p);
    else munmap(p, bytes);
}

static int table_init(Table *t, size_t min_slots, size_t max_bytes, int key_bits) {
    size_t slots = 1024;
    t->embedded = key_bits <= 55;
    while (slots < min_slots) slots <<= 1;
    while (slots > 1024 && slots * slot_bytes(t) > max_bytes) slots >>= 1;
    t->keys = table_alloc(slots * sizeof(uint64_t));
    t->vals = t->embedded ? NULL : table_alloc(slots);
    if (!t->keys || (!t->embedded && !t->vals)) {
        table_release(t->keys, slots * sizeof(uint64_t)); table_release(t->vals, slots);
        t->keys = NULL; t->vals = NULL;
        return -1;
    }
    t->mask = slots - 1;
    t->count = 0;
    t->limit = slots / 10 * 7;
    return 0;
}

static void table_free(Table *t) {
    table_release(t->keys, (t->mask + 1) * sizeof(uint64_t));
    table_release(t->vals, t->mask + 1);
    t->keys = NULL;
    t->vals = NULL;
}

static inline size_t hash64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k;
}

/* Grow to twice the slots if the budget allows; returns 0 on success. */
static int table_grow(Table *t, size_t max_bytes) {
    size_t slots = (t->mask + 1) * 2;
    if (slots * slot_bytes(t) > max_bytes) return -1;
    uint64_t *keys = table_alloc(slots * sizeof(uint64_t));
    uint8_t *vals = t->embedded ? NULL : table_alloc(slots);
    if (!keys || (!t->embedded && !vals)) {
        table_release(keys, slots * sizeof(uint64_t)); table_release(vals, slots);
        return -1;
    }
    size_t mask = slots - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        uint64_t k = slot_key(t, i);
        if (!k) continue;
        size_t j = hash64(k) & mask;
        while (keys[j]) j = (j + 1) & mask;
        keys[j] = t->keys[i];
        if (vals) vals[j] = t->vals[i];
    }
    table_release(t->keys, (t->mask + 1) * sizeof(uint64_t));
    table_release(t->vals, t->mask + 1);
    t->keys = keys;
    t->vals = vals;
    t->mask = mask;
    t->limit = slots / 10 * 7;
    return 0;
}

static inline void table_prefetch(const Table *t, uint64_t key) {
    __builtin_prefetch(&t->keys[hash64(key) & t->mask], 1, 0);
}

/* Slot of key, inserting it (value 0) if new; *fresh tells which.  -1 when full. */
static inline ptrdiff_t table_slot(Table *t, uint64_t key, size_t max_bytes, int *fresh) {
    size_t i = hash64(key) & t->mask;
    for (;;) {
        uint64_t k = slot_key(t, i);
        if (k == key) { *fresh = 0; return (ptrdiff_t)i; }
        if (!k) break;
        i = (i + 1) & t->mask;
    }
    if (t->count >= t->limit) {
        if (table_grow(t, max_bytes) != 0) return -1;
        return table_slot(t, key, max_bytes, fresh);
    }
    t->keys[i] = key;
    if (t->vals) t->vals[i] = 0;
    t->count++;
    *fresh = 1;
    return (ptrdiff_t)i;
}

static inline ptrdiff_t table_find(const Table *t, uint64_t key) {
    size_t i = hash64(key) & t->mask;
    for (;;) {
        uint64_t k = slot_key(t, i);
        if (k == key) return (ptrdiff_t)i;
        if (!k) return -1;
        i = (i + 1) & t->mask;
    }
}

/* ------------------------------------------------------------------ setup */

/* Trace a slide on the empty board; returns 1 if it loops forever. */
static int traces_loop(const Board *b, int colour1, int start, int d) {
    int cell = start, limit = 4 * b->ncells;
    for (int steps = 0;; steps++) {
        int n = b->step[d][cell];
        if (n < 0) return 0;
        cell = n;
        uint8_t bar = b->barrier[cell];
        if (bar && (bar & 7) != colour1) d = DEFLECT[bar >> 3][d];
        if (steps > limit) return 1;
    }
}

static int bits_for(int ncells) {
    int bits = 1;
    while ((1 << bits) < ncells) bits++;
    return bits;
}

/* ------------------------------------------------------------- results */

typedef struct {
    int status;                 /* ST_* */
    int length;                 /* solution length, or -1 */
    int lower_bound;            /* no solution has fewer moves */
    uint8_t move_robot[MAX_DEPTH + 1], move_dir[MAX_DEPTH + 1]; /* internal robot indices */
    uint64_t states;            /* distinct states stored */
    uint64_t nodes;             /* moves generated */
    int strategy;               /* 0 = IDA*, 1 = BFS */
} Result;

/* --------------------------------------------------- iterative deepening */

typedef struct {
    const Board *b;
    Limits *lim;
    Table tt;
    Pos cur;
    uint8_t occ[MAX_CELLS];
    uint8_t path_r[MAX_DEPTH + 1], path_d[MAX_DEPTH + 1];
    uint64_t nodes, node_cap;
    uint64_t cutoffs;            /* nodes the bound stopped (dead ends excluded) */
    int found;
} Ida;

/* 1: found (path in s->path_*), 0: not within bound, -1: a limit stopped it. */
/* Whether cell x lies on the straight slide from s to e, s excluded. */
static inline int on_segment(const Board *b, int s, int e, int x) {
    int w = b->width;
    int sx = s % w, sy = s / w, ex = e % w, ey = e / w, xx = x % w, xy = x / w;
    if (sy == ey && xy == sy) return (xx - sx) * (xx - ex) <= 0 && xx != sx;
    if (sx == ex && xx == sx) return (xy - sy) * (xy - ey) <= 0 && xy != sy;
    return 0;
}

/* Two straight moves of different robots, A (from sa to ea, direction da) then
 * B, commute when neither met the other: swapping them gives the same state. */
static inline int commute(const Board *b, int sa, int ea, int da, int sb, int eb, int db) {
    return b->step[db][eb] != ea && !on_segment(b, sb, eb, sa) &&
           b->step[da][ea] != sb && !on_segment(b, sa, ea, eb);
}

static int ida_dfs(Ida *s, int g, int bound, int h_here, int prev_r, int prev_s, int prev_e, int prev_d);

/* One child of the deepening search: goal test, bound test, memo, recursion.
 * The mover r already stands on `end` in s->cur (its cell `start` is clear). */
static inline int ida_child(Ida *s, int g, int bound, int r, int start, int end, int d, int h) {
    const Board *b = s->b;
    s->nodes++;
    s->path_r[g] = (uint8_t)r;
    s->path_d[g] = (uint8_t)d;
    if (is_goal(b, &s->cur, r)) { s->found = g + 1; return 1; }
    int rem = bound - g - 1;
    if (rem == 0 || (h > rem && h != 255)) s->cutoffs++;
    if (rem == 0 || h > rem) return 0;
    uint64_t key = make_key(b, &s->cur);
    int fresh;
    ptrdiff_t slot = table_slot(&s->tt, key, s->lim->state_budget, &fresh);
    if (slot >= 0) { /* with no memo left the search goes on unmemoised */
        if (!fresh && get_val(&s->tt, (size_t)slot) >= rem) return 0;
        set_val(&s->tt, (size_t)slot, rem);
    }
    s->occ[end] = 1;
    int res = ida_dfs(s, g + 1, bound, h, r, start, end, d);
    s->occ[end] = 0;
    return res;
}

/* 1: found (path in s->path_*), 0: not within bound, -1: a limit stopped it.
 * h_here is the lower bound of the current position. */
static int ida_dfs(Ida *s, int g, int bound, int h_here, int prev_r, int prev_s, int prev_e, int prev_d) {
    const Board *b = s->b;
    if (out_of_time(s->lim)) return -1;
    if (s->nodes > s->node_cap) return -1;
    int n = b->nrobots;
    int child_rem = bound - g - 1;
    /* A helper's move leaves the bound where it is, so helpers move only when
     * the bound leaves room for it after their move (and never as the last move). */
    int helpers_useful = child_rem > 0 && helper_fits(b, h_here, child_rem);
    for (int i = 0; i < n; i++) {
        int r = b->order[i];
        int eligible = (b->eligible >> r) & 1;
        if (!eligible && !helpers_useful) {
            if (h_here != 255) s->cutoffs++;
            continue;
        }
        int start = s->cur.pos[r];
        uint8_t old_status = s->cur.status[r];
        s->occ[start] = 0;
        int res = 0;
        if (eligible) {
            /* Moves that bring the bound down first: the last iteration meets
             * its solution sooner. */
            int ends[4], hs[4];
            uint8_t sts[4];
            for (int d = 0; d < 4; d++) {
                int deflected;
                ends[d] = slide(b, s->occ, r, start, d, &deflected);
                if (ends[d] < 0) continue;
                if (r < prev_r && b->straight && commute(b, prev_s, prev_e, prev_d, start, ends[d], d)) {
                    ends[d] = -1; /* of two commuting moves only the order by robot index is searched */
                    continue;
                }
                sts[d] = (uint8_t)next_status(old_status, d, deflected);
                s->cur.pos[r] = (int16_t)ends[d];
                s->cur.status[r] = sts[d];
                hs[d] = heuristic(b, &s->cur);
            }
            for (int pass = 0; pass < 2 && !res; pass++) {
                for (int d = 0; d < 4 && !res; d++) {
                    if (ends[d] < 0 || (hs[d] < h_here) != (pass == 0)) continue;
                    s->cur.pos[r] = (int16_t)ends[d];
                    s->cur.status[r] = sts[d];
                    res = ida_child(s, g, bound, r, start, ends[d], d, hs[d]);
                }
            }
        } else {
            /* Two moves left: on a board of straight slides a helper can only
             * help the last move by standing next to the target afterwards, or
             * by leaving the target's row or column (clearing the way). */
            int must_stop_by_target = child_rem == 1 && b->straight &&
                                      start % b->width != b->target % b->width &&
                                      start / b->width != b->target / b->width;
            for (int d = 0; d < 4 && !res; d++) {
                int deflected;
                int end = slide(b, s->occ, r, start, d, &deflected);
                if (end < 0) continue;
                if (must_stop_by_target && !adjacent(b, end, b->target)) continue;
                if (r < prev_r && b->straight && commute(b, prev_s, prev_e, prev_d, start, end, d)) continue;
                s->cur.pos[r] = (int16_t)end;
                s->cur.status[r] = ((b->tracked >> r) & 1) ? (uint8_t)next_status(old_status, d, deflected) : 0;
                /* Helpers leave the lone-robot bound as it is; an exact table's may drop. */
                res = ida_child(s, g, bound, r, start, end, d, b->exact ? heuristic(b, &s->cur) : h_here);
            }
        }
        s->cur.pos[r] = (int16_t)start;
        s->cur.status[r] = old_status;
        s->occ[start] = 1;
        if (res) return res;
    }
    return 0;
}

/* Returns 1 when it settled the answer in *res, 0 when it gave up (node cap)
 * and A* should settle it instead. */
static int run_ida(const Board *b, const Pos *start, Limits *lim, uint64_t node_cap, Result *res) {
    Ida *s = calloc(1, sizeof(Ida));
    if (!s) return 0;
    s->b = b;
    s->lim = lim;
    s->cur = *start;
    s->node_cap = node_cap;
    size_t budget = lim->state_budget / 4; /* leave room for a BFS after us */
    if (table_init(&s->tt, 1 << 12, budget, b->key_bits) != 0) { free(s); return 0; }
    for (int r = 0; r < b->nrobots; r++) s->occ[start->pos[r]] = 1;
    int h = heuristic(b, start);
    if (h == 255) { /* no finisher can ever reach the target */
        res->status = ST_UNSOLVABLE;
        table_free(&s->tt);
        free(s);
        return 1;
    }
    int bound = h < 1 ? 1 : h;
    int settled = 0;
    Limits local = *lim;
    local.state_budget = budget;
    s->lim = &local;
    for (; bound <= lim->max_depth; bound++) {
        s->cutoffs = 0;
        int r = ida_dfs(s, 0, bound, h, -1, 0, 0, 0);
        if (r == 1) {
            res->status = ST_OPTIMAL;
            res->length = s->found;
            res->lower_bound = s->found;
            memcpy(res->move_robot, s->path_r, (size_t)s->found);
            memcpy(res->move_dir, s->path_d, (size_t)s->found);
            settled = 1;
            break;
        }
        if (r < 0) {
            if (local.stopped) { lim->stopped = local.stopped; res->status = local.stopped; res->lower_bound = bound; settled = 1; }
            break;
        }
        /* Nothing was cut off by the bound: deeper iterations can find nothing
         * new.  A*, which can prove a puzzle unsolvable, settles it from here. */
        if (s->cutoffs == 0) break;
    }
    if (!settled && bound > lim->max_depth) {
        res->status = ST_DEPTH;
        res->lower_bound = lim->max_depth + 1;
        settled = 1;
    }
    res->nodes += s->nodes;
    res->states = s->tt.count;
    res->strategy = 0;
    lim->polls = local.polls;
    table_free(&s->tt);
    free(s);
    return settled;
}

/* -------------------------------------------------- breadth-first search */

typedef struct {
    uint64_t *keys;
    size_t len, cap;
} KeyList;

static int keys_push(KeyList *l, uint64_t k, size_t *bytes, size_t budget) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        if (*bytes + (cap - l->cap) * sizeof(uint64_t) > budget) return -1;
        uint64_t *keys = realloc(l->keys, cap * sizeof(uint64_t));
        if (!keys) return -1;
        *bytes += (cap - l->cap) * sizeof(uint64_t);
        l->keys = keys;
        l->cap = cap;
    }
    l->keys[l->len++] = k;
    return 0;
}

static inline void occupy(const Board *b, const Pos *p, uint8_t *occ, int on) {
    for (int r = 0; r < b->nrobots; r++) occ[p->pos[r]] = (uint8_t)on;
}

/* One legal move from a position: the mover, its direction, where it starts
 * and stops, and its ricochet status afterwards (0 when not tracked). */
typedef struct {
    uint8_t r, d, status;
    int16_t from, end;
} Child;

/* Every legal move from p; occ must mark p's robots (it is restored). */
/* Whether robot r, the others standing still, finishes in exactly k moves
 * (k = its lone-robot bound, so each move must lower that bound by one).  The
 * same question as solo_length() asks, but only along moves that lower the
 * bound: on A*'s hot path this takes a 20-move search from 6.4 s to 4.2 s. */
static int finishes_alone(const Board *b, uint8_t *occ, Pos *p, int r, int k) {
    int start = p->pos[r], ok = 0;
    uint8_t status = p->status[r];
    occ[start] = 0;
    for (int d = 0; d < 4 && !ok; d++) {
        int deflected;
        int end = slide(b, occ, r, start, d, &deflected);
        if (end < 0) continue;
        p->pos[r] = (int16_t)end;
        p->status[r] = ((b->tracked >> r) & 1) ? (uint8_t)next_status(status, d, deflected) : 0;
        if (k == 1) ok = is_goal(b, p, r);
        else if (robot_bound(b, p, r) == k - 1) {
            occ[end] = 1;
            ok = finishes_alone(b, occ, p, r, k - 1);
            occ[end] = 0;
        }
    }
    p->pos[r] = (int16_t)start;
    p->status[r] = status;
    occ[start] = 1;
    return ok;
}

/* A sharper bound for a position with one possible finisher, whose plain bound
 * is h: a solution that moves only the finisher needs at least its exact lone
 * length, and one that moves a helper needs h + 1.  So unless the finisher
 * finishes alone in exactly h moves, h + 1 is a bound too.  (Too dear to ask
 * of every child; A* asks it of each position it is about to expand.) */
static inline int sharpened(const Board *b, uint8_t *occ, Pos *p, int h) {
    if (h == 255 || h == 0 || b->single_finisher < 0) return h;
    return finishes_alone(b, occ, p, b->single_finisher, h) ? h : h + 1;
}

static int children(const Board *b, const Pos *p, uint8_t *occ, Child *out) {
    int n = 0;
    for (int r = 0; r < b->nrobots; r++) {
        int from = p->pos[r];
        occ[from] = 0;
        for (int d = 0; d < 4; d++) {
            int deflected;
            int end = slide(b, occ, r, from, d, &deflected);
            if (end < 0) continue;
            out[n].r = (uint8_t)r;
            out[n].d = (uint8_t)d;
            out[n].from = (int16_t)from;
            out[n].end = (int16_t)end;
            out[n].status = ((b->tracked >> r) & 1) ? (uint8_t)next_status(p->status[r], d, deflected) : 0;
            n++;
        }
        occ[from] = 1;
    }
    return n;
}

/* Walk back from `key` (at BFS depth `depth`) to the start through states of
 * depth one less each step, writing (from cell, direction) pairs. */
static int reconstruct(const Board *b, const Table *seen, uint64_t key, int depth,
                       int16_t *from_cell, uint8_t *dirs) {
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    for (int k = depth; k > 0; k--) {
        Pos s;
        decode_key(b, key, &s);
        int found = 0;
        for (int r = 0; r < b->nrobots && !found; r++) {
            Pos q = s;
            occupy(b, &s, occ, 1);
            occ[s.pos[r]] = 0;
            int tracked = (b->tracked >> r) & 1;
            for (int c = 0; c < b->ncells && !found; c++) {
                if (occ[c] || c == s.pos[r] || b->barrier[c]) continue;
                for (int d = 0; d < 4 && !found; d++) {
                    int deflected;
                    if (slide(b, occ, r, c, d, &deflected) != s.pos[r]) continue;
                    q.pos[r] = (int16_t)c;
                    for (int st = 0; st < (tracked ? 4 : 1) && !found; st++) {
                        if (tracked && next_status(st, d, deflected) != s.status[r]) continue;
                        q.status[r] = (uint8_t)st;
                        ptrdiff_t slot = table_find(seen, make_key(b, &q));
                        if (slot >= 0 && get_val(seen, (size_t)slot) == k - 1) {
                            from_cell[k - 1] = (int16_t)c;
                            dirs[k - 1] = (uint8_t)d;
                            key = make_key(b, &q);
                            found = 1;
                        }
                    }
                }
            }
            occupy(b, &s, occ, 0);
        }
        if (!found) return -1;
    }
    return 0;
}

/* Replay (from cell, direction) pairs from the real start, naming robots. */
static int name_moves(const Board *b, const Pos *start, int len, const int16_t *from_cell,
                      const uint8_t *dirs, Result *res) {
    Pos p = *start;
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    occupy(b, &p, occ, 1);
    for (int i = 0; i < len; i++) {
        int r = 0;
        while (r < b->nrobots && p.pos[r] != from_cell[i]) r++;
        if (r == b->nrobots) return -1;
        int deflected;
        occ[p.pos[r]] = 0;
        int end = slide(b, occ, r, p.pos[r], dirs[i], &deflected);
        if (end < 0) return -1;
        occ[end] = 1;
        p.status[r] = (uint8_t)next_status(p.status[r], dirs[i], deflected);
        p.pos[r] = (int16_t)end;
        res->move_robot[i] = (uint8_t)r;
        res->move_dir[i] = dirs[i];
    }
    return 0;
}

/* A* with the lone-robot bound, which is consistent (a move changes it by at
 * most one), so states are expanded in order of f = g + h and the first goal
 * generated is optimal.  Open states sit in buckets by (f, g); within one f the
 * deepest bucket goes first, which reaches the goal of the last layer early.
 * Only states with g + h <= optimum are expanded: on deep puzzles the helpers'
 * wanderings far from the target are never explored. */
typedef struct {
    int dim;                 /* f and g both run from 0 to dim - 1 */
    KeyList *bucket;         /* [f * dim + g]; each list grows on first push */
} Open;

#define BUCKET(o, f, g) (&(o)->bucket[(size_t)(f) * (size_t)(o)->dim + (size_t)(g)])

static void run_astar(const Board *b, const Pos *start, Limits *lim, Result *res) {
    Table seen;
    size_t bytes = 0, budget = lim->state_budget;
    Open open_lists = {lim->max_depth + 2, NULL}, *open = &open_lists;
    res->strategy = 1;
    res->status = -1;
    open->bucket = calloc((size_t)open->dim * (size_t)open->dim, sizeof(KeyList));
    if (!open->bucket) { res->status = ST_STATES; return; }
    if (table_init(&seen, 1 << 16, budget / 2, b->key_bits) != 0) {
        free(open->bucket);
        res->status = ST_STATES;
        return;
    }
    bytes += (seen.mask + 1) * slot_bytes(&seen);
    uint64_t start_key = make_key(b, start);
    int fresh, f = heuristic(b, start);
    table_slot(&seen, start_key, budget, &fresh);
    if (f < open->dim) keys_push(BUCKET(open, f, 0), start_key, &bytes, budget);
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    uint64_t goal_parent = 0;
    int16_t goal_cell = 0;
    uint8_t goal_dir = 0;
    int g = 0, beyond = 0;
    while (res->status < 0) {
        /* The deepest non-empty bucket of layer f, else the next layer. */
        while (g >= 0 && (f >= open->dim || BUCKET(open, f, g)->len == 0)) g--;
        if (g < 0) {
            if (f < open->dim)
                for (int gg = 0; gg < open->dim; gg++) { free(BUCKET(open, f, gg)->keys); *BUCKET(open, f, gg) = (KeyList){0}; }
            int nf = f + 1;
            for (; nf < open->dim; nf++) {
                int any = 0;
                for (int gg = 0; gg < open->dim && !any; gg++) any = BUCKET(open, nf, gg)->len > 0;
                if (any) break;
            }
            if (nf >= open->dim) {
                /* Nothing left within the depth limit; pushes beyond it were dropped. */
                if (beyond) { res->status = ST_DEPTH; res->lower_bound = lim->max_depth + 1; }
                else { res->status = ST_UNSOLVABLE; res->lower_bound = f + 1; }
                break;
            }
            f = nf;
            g = open->dim - 1;
            if (f > lim->max_depth) { res->status = ST_DEPTH; res->lower_bound = lim->max_depth + 1; break; }
            continue;
        }
        if (out_of_time(lim)) { res->status = lim->stopped; res->lower_bound = f; break; }
        KeyList *bucket = BUCKET(open, f, g);
        uint64_t key = bucket->keys[--bucket->len];
        if (bucket->len) table_prefetch(&seen, bucket->keys[bucket->len - 1]); /* the next one popped */
        ptrdiff_t at = table_find(&seen, key);
        if (at >= 0 && get_val(&seen, (size_t)at) < g) continue; /* reached more cheaply since */
        Pos p;
        decode_key(b, key, &p);
        occupy(b, &p, occ, 1);
        if (f - g == heuristic(b, &p)) {
            /* Pushed with the plain bound: sharpen it before paying for the expansion. */
            int h = sharpened(b, occ, &p, f - g);
            if (h > f - g) {
                occupy(b, &p, occ, 0);
                if (g + h >= open->dim) { beyond = 1; continue; }
                if (keys_push(BUCKET(open, g + h, g), key, &bytes, budget) != 0) {
                    res->status = ST_STATES;
                    res->lower_bound = f;
                }
                continue;
            }
        }
        Child moves[MAX_ROBOTS * 4];
        int nmoves = children(b, &p, occ, moves);
        occupy(b, &p, occ, 0);
        res->nodes += (uint64_t)nmoves;
        uint64_t child[MAX_ROBOTS * 4];
        uint8_t child_h[MAX_ROBOTS * 4];
        int nchild = 0;
        for (int m = 0; m < nmoves; m++) {
            Pos q = p;
            q.pos[moves[m].r] = moves[m].end;
            q.status[moves[m].r] = moves[m].status;
            if (is_goal(b, &q, moves[m].r)) {
                goal_parent = key;
                goal_cell = moves[m].from;
                goal_dir = moves[m].d;
                res->status = ST_OPTIMAL;
                res->length = res->lower_bound = g + 1;
                break;
            }
            uint64_t k = make_key(b, &q);
            table_prefetch(&seen, k);
            child_h[nchild] = (uint8_t)heuristic(b, &q);
            child[nchild++] = k;
        }
        for (int c = 0; c < nchild && res->status < 0; c++) {
            if (child_h[c] == 255) continue; /* no finisher can ever reach the target from there */
            /* Bounds sharpened at expansion are not consistent: a child never goes
             * below the layer of its parent (pathmax), or it would be lost. */
            int cf = g + 1 + child_h[c] > f ? g + 1 + child_h[c] : f;
            if (cf >= open->dim) { beyond = 1; continue; } /* cannot finish within the depth limit */
            size_t before = (seen.mask + 1) * slot_bytes(&seen);
            ptrdiff_t slot = table_slot(&seen, child[c], budget - bytes + before, &fresh);
            bytes += (seen.mask + 1) * slot_bytes(&seen) - before;
            if (slot < 0) { res->status = ST_STATES; res->lower_bound = f; break; }
            if (!fresh && get_val(&seen, (size_t)slot) <= g + 1) continue;
            set_val(&seen, (size_t)slot, g + 1);
            if (keys_push(BUCKET(open, cf, g + 1), child[c], &bytes, budget) != 0) {
                res->status = ST_STATES;
                res->lower_bound = f;
            }
        }
        if (res->status < 0 && g + 1 < open->dim && BUCKET(open, f, g + 1)->len) g = g + 1;
    }
    res->states = seen.count;
    if (res->status == ST_OPTIMAL) {
        int16_t from_cell[MAX_DEPTH + 1];
        uint8_t dirs[MAX_DEPTH + 1];
        int len = res->length;
        from_cell[len - 1] = goal_cell;
        dirs[len - 1] = goal_dir;
        if (reconstruct(b, &seen, goal_parent, len - 1, from_cell, dirs) != 0 ||
            name_moves(b, start, len, from_cell, dirs, res) != 0) {
            res->status = ST_STATES; /* cannot happen; reported rather than crash */
            res->length = -1;
        }
    }
    for (size_t i = 0; i < (size_t)open->dim * (size_t)open->dim; i++) free(open->bucket[i].keys);
    free(open->bucket);
    table_free(&seen);
}

/* ------------------------------------------------------------ reach table */

/* Breadth-first from one position over full states (every robot tracked, no
 * sorting): the first depth at which each robot stops on each cell, having
 * ricocheted when the rule asks for it.  One search rates every target. */
static void run_reach(const Board *b, const Pos *start, Limits *lim, uint8_t *out, int *depth_done, Result *res) {
    Table seen;
    KeyList cur = {0}, next = {0};
    size_t bytes = 0, budget = lim->state_budget;
    int n = b->ncells;
    memset(out, 255, (size_t)b->nrobots * (size_t)n);
    *depth_done = 0;
    res->status = ST_OPTIMAL;
    if (!b->ricochet)
        for (int r = 0; r < b->nrobots; r++) out[r * n + start->pos[r]] = 0;
    if (table_init(&seen, 1 << 16, budget / 2, b->key_bits) != 0) { res->status = ST_STATES; return; }
    bytes += (seen.mask + 1) * slot_bytes(&seen);
    uint64_t start_key = make_key(b, start);
    int fresh;
    table_slot(&seen, start_key, budget, &fresh);
    keys_push(&cur, start_key, &bytes, budget);
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    for (int depth = 0; depth < lim->max_depth && cur.len && res->status == ST_OPTIMAL; depth++) {
        next.len = 0;
        for (size_t i = 0; i < cur.len && res->status == ST_OPTIMAL; i++) {
            if (out_of_time(lim)) { res->status = lim->stopped; break; }
            Pos p;
            decode_key(b, cur.keys[i], &p);
            occupy(b, &p, occ, 1);
            Child moves[MAX_ROBOTS * 4];
            int nmoves = children(b, &p, occ, moves);
            occupy(b, &p, occ, 0);
            res->nodes += (uint64_t)nmoves;
            for (int m = 0; m < nmoves; m++) {
                int r = moves[m].r, end = moves[m].end;
                Pos q = p;
                q.pos[r] = (int16_t)end;
                q.status[r] = moves[m].status;
                if ((!b->ricochet || q.status[r] == TURNED) && out[r * n + end] == 255)
                    out[r * n + end] = (uint8_t)(depth + 1);
                uint64_t key = make_key(b, &q);
                size_t before = (seen.mask + 1) * slot_bytes(&seen);
                ptrdiff_t slot = table_slot(&seen, key, budget - bytes + before, &fresh);
                bytes += (seen.mask + 1) * slot_bytes(&seen) - before;
                if (slot < 0 || (fresh && keys_push(&next, key, &bytes, budget) != 0)) {
                    res->status = ST_STATES;
                    break;
                }
            }
        }
        if (res->status == ST_OPTIMAL) *depth_done = depth + 1;
        KeyList t = cur; cur = next; next = t;
    }
    res->states = seen.count;
    free(cur.keys);
    free(next.keys);
    table_free(&seen);
}

/* ------------------------------------------------------ optimal solutions */

/* Facts about every solution of exactly `rem` moves from a state: how many
 * (saturating at the cap), which sets of robots they move (bit m of `masks`
 * for robot set m), and the fewest robot switches given the previous mover.
 *
 * The memo is keyed by state alone and keeps the most moves left with which
 * the state has been reached.  Reached again with fewer moves left, it lies
 * on no optimal solution that way (it was reachable in fewer moves, so from it
 * the goal is at least that many moves away): that branch is cut at once. */
typedef struct {
    uint64_t key;                  /* state key; 0 = empty */
    uint64_t count;
    uint32_t masks;
    uint8_t rem;                   /* the most moves left with which the state was reached */
    uint8_t done;                  /* the facts are those for `rem` (0 while its subtree is searched) */
    uint8_t switches[MAX_ROBOTS + 1];
} Facts;

typedef struct {
    const Board *b;
    Limits *lim;
    Facts *memo;
    size_t mask, used, limit;
    uint64_t cap;
    Pos cur;
    uint8_t occ[MAX_CELLS];
    int failed;
    int abort_when_full;           /* a bigger table will be tried: stop as soon as this one is full */
    uint64_t nodes;
} Counter;

static Facts *facts_slot(Counter *c, uint64_t key) {
    size_t i = hash64(key) & c->mask;
    while (c->memo[i].key && c->memo[i].key != key) i = (i + 1) & c->mask;
    return &c->memo[i];
}

static void count_dfs(Counter *c, int rem, Facts *out) {
    const Board *b = c->b;
    int n = b->nrobots;
    if (n > MAX_ROBOTS) return;
    out->count = 0;
    out->masks = 0;
    memset(out->switches, 255, sizeof out->switches);
    if (c->failed || out_of_time(c->lim)) { c->failed = c->lim->stopped ? c->lim->stopped : ST_TIME; return; }
    /* Only moves that can lie on an optimal solution (the length is optimal):
     * a helper's move leaves the bound as it is, so helpers move only when the
     * bound leaves room after their move, and never last.  On a board of
     * straight slides a helper's move just before the last must change the
     * last slide: it ends next to the target, or leaves the target's row or
     * column.  (Otherwise the finisher could finish a move sooner.) */
    int h_here = heuristic(b, &c->cur);
    int helpers_useful = rem > 1 && helper_fits(b, h_here, rem - 1);
    /* First every move worth following, with its memo slot fetched ahead (the
     * search waits on memory more than on anything else), then each in turn. */
    struct { uint64_t key; int16_t end; uint8_t r, status, goal; } next[MAX_ROBOTS * 4];
    int count = 0;
    for (int r = 0; r < n; r++) {
        int eligible = (b->eligible >> r) & 1;
        if (!eligible && !helpers_useful) continue;
        int start = c->cur.pos[r];
        uint8_t old_status = c->cur.status[r];
        int must_stop_by_target = !eligible && rem == 2 && b->straight &&
                                  start % b->width != b->target % b->width &&
                                  start / b->width != b->target / b->width;
        c->occ[start] = 0;
        for (int d = 0; d < 4; d++) {
            int deflected;
            int end = slide(b, c->occ, r, start, d, &deflected);
            if (end < 0) continue;
            if (must_stop_by_target && !adjacent(b, end, b->target)) continue;
            c->nodes++;
            c->cur.pos[r] = (int16_t)end;
            c->cur.status[r] = ((b->tracked >> r) & 1) ? (uint8_t)next_status(old_status, d, deflected) : 0;
            int goal = is_goal(b, &c->cur, r);
            if (rem == 1 ? goal : !goal && heuristic(b, &c->cur) <= rem - 1) {
                uint64_t key = rem == 1 ? 0 : make_key(b, &c->cur);
                if (rem > 1) __builtin_prefetch(&c->memo[hash64(key) & c->mask], 1, 1);
                next[count].key = key;
                next[count].end = (int16_t)end;
                next[count].r = (uint8_t)r;
                next[count].status = c->cur.status[r];
                next[count].goal = (uint8_t)goal;
                count++;
            }
        }
        c->cur.pos[r] = (int16_t)start;
        c->cur.status[r] = old_status;
        c->occ[start] = 1;
    }
    for (int i = 0; i < count && !c->failed; i++) {
        int r = next[i].r, start = c->cur.pos[r], end = next[i].end;
        uint8_t old_status = c->cur.status[r];
        Facts sub;
        if (rem == 1) {
            sub.count = 1;
            sub.masks = 1u; /* the empty set of robots moved after this one */
            memset(sub.switches, 0, sizeof sub.switches);
        } else {
            uint64_t key = next[i].key;
            Facts *slot = facts_slot(c, key);
            if (slot->key == key && slot->rem >= rem - 1) {
                /* Known for these moves left, or reached before with more moves left
                 * (then no optimal solution continues from here). */
                if (slot->rem == rem - 1 && slot->done) sub = *slot;
                else sub.count = 0;
            } else {
                if (slot->key != key && c->used >= c->limit) {
                    if (c->abort_when_full) { c->failed = ST_STATES; break; }
                    slot = NULL; /* the largest table is full: go on unmemoised */
                } else if (slot->key != key) {
                    slot->key = key;
                    c->used++;
                }
                if (slot) { slot->rem = (uint8_t)(rem - 1); slot->done = 0; }
                c->cur.pos[r] = (int16_t)end;
                c->cur.status[r] = next[i].status;
                c->occ[start] = 0;
                c->occ[end] = 1;
                count_dfs(c, rem - 1, &sub);
                c->occ[end] = 0;
                c->occ[start] = 1;
                c->cur.pos[r] = (int16_t)start;
                c->cur.status[r] = old_status;
                if (c->failed) break;
                if (slot) { /* the table is not resized during a search: the slot stays put */
                    sub.key = key;
                    sub.rem = (uint8_t)(rem - 1);
                    sub.done = 1;
                    *slot = sub;
                }
            }
        }
        if (sub.count > 0) {
            out->count = out->count + sub.count > c->cap ? c->cap : out->count + sub.count;
            for (int m = 0; m < 32; m++)
                if ((sub.masks >> m) & 1) out->masks |= 1u << (m | (1 << r));
            for (int prev = 0; prev <= n; prev++) {
                int cost = sub.switches[r] + (prev < n && prev != r ? 1 : 0);
                if (sub.switches[r] != 255 && cost < out->switches[prev]) out->switches[prev] = (uint8_t)cost;
            }
        }
    }
}

/* -------------------------------------------------------------- layouts */

/* A board compiled once and shared by many searches (a PyCapsule). */
typedef struct {
    int width, height, ncells;
    int16_t step[4][MAX_CELLS];
    uint8_t barrier[MAX_CELLS];
    int has_barriers, has_openings, loops_possible;
    uint8_t **lb_cache;           /* [target * 5 + colour]: bounds per target and robot colour,
                                     filled on first use, under the GIL */
} Layout;

static const char *LAYOUT_NAME = "ricochet.layout";

static void layout_free(PyObject *capsule) {
    Layout *L = PyCapsule_GetPointer(capsule, LAYOUT_NAME);
    if (!L) return;
    for (int i = 0; i < L->ncells * 5; i++) free(L->lb_cache[i]);
    free(L->lb_cache);
    free(L);
}

/* Lower bounds for one (target, colour): reverse walks on plain boards,
 * relaxation rounds where barriers or openings bend the slides. */
static int fill_lower_bounds(const Layout *L, int target, int colour, uint8_t *lb) {
    int n = L->ncells;
    memset(lb, 255, (size_t)n);
    lb[target] = 0;
    if (!L->has_barriers && !L->has_openings) {
        int16_t *queue = malloc(sizeof(int16_t) * (size_t)n);
        if (!queue) return -1;
        int head = 0, tail = 0;
        queue[tail++] = (int16_t)target;
        static const int OPP[4] = {2, 3, 0, 1};
        while (head < tail) {
            int t = queue[head++];
            for (int d = 0; d < 4; d++) {
                /* Every cell behind t (against direction d) passes t when moving d. */
                for (int c = L->step[OPP[d]][t]; c >= 0; c = L->step[OPP[d]][c]) {
                    if (lb[c] == 255) { lb[c] = (uint8_t)(lb[t] + 1); queue[tail++] = (int16_t)c; }
                }
            }
        }
        free(queue);
        return 0;
    }
    int limit = 4 * n, colour1 = colour + 1;
    for (int k = 0, changed = 1; changed && k < 254; k++) {
        changed = 0;
        for (int c = 0; c < n; c++) {
            if (lb[c] != 255) continue;
            for (int d0 = 0; d0 < 4 && lb[c] == 255; d0++) {
                int cell = c, d = d0;
                for (int steps = 0; steps <= limit; steps++) {
                    int nx = L->step[d][cell];
                    if (nx < 0) break;
                    cell = nx;
                    if (lb[cell] == k) { lb[c] = (uint8_t)(k + 1); changed = 1; break; }
                    uint8_t bar = L->barrier[cell];
                    if (bar && (bar & 7) != colour1) d = DEFLECT[bar >> 3][d];
                }
            }
        }
    }
    return 0;
}

static const uint8_t *lower_bounds(Layout *L, int target, int colour) {
    if (!L->has_barriers) colour = 0; /* colour cannot matter */
    uint8_t **slot = &L->lb_cache[target * 5 + colour];
    if (!*slot) {
        uint8_t *lb = malloc((size_t)L->ncells);
        if (!lb || fill_lower_bounds(L, target, colour, lb) != 0) { free(lb); return NULL; }
        *slot = lb;
    }
    return *slot;
}

static PyObject *py_compile_board(PyObject *self, PyObject *args) {
    int width, height;
    const char *step, *barrier;
    Py_ssize_t step_len, barrier_len;
    int has_openings;
    if (!PyArg_ParseTuple(args, "iiy#y#p", &width, &height, &step, &step_len, &barrier, &barrier_len,
                          &has_openings))
        return NULL;
    if (width < 1 || height < 1 || width * height > MAX_CELLS) {
        PyErr_Format(PyExc_ValueError, "board size %d x %d is out of range (at most %d cells)", width, height,
                     MAX_CELLS);
        return NULL;
    }
    int n = width * height;
    if (step_len != (Py_ssize_t)(4 * n * sizeof(int16_t)) || barrier_len != n) {
        PyErr_SetString(PyExc_ValueError, "step table or barrier table has the wrong size");
        return NULL;
    }
    Layout *L = calloc(1, sizeof(Layout));
    if (!L) return PyErr_NoMemory();
    L->lb_cache = calloc((size_t)n * 5, sizeof(uint8_t *));
    if (!L->lb_cache) { free(L); return PyErr_NoMemory(); }
    L->width = width;
    L->height = height;
    L->ncells = n;
    L->has_openings = has_openings;
    for (int d = 0; d < 4; d++) {
        for (int c = 0; c < n; c++) {
            int16_t v;
            memcpy(&v, step + (size_t)(d * n + c) * sizeof(int16_t), sizeof v);
            if (v < -1 || v >= n) {
                free(L->lb_cache);
                free(L);
                PyErr_SetString(PyExc_ValueError, "step table holds a cell off the board");
                return NULL;
            }
            L->step[d][c] = v;
        }
    }
    for (int c = 0; c < n; c++) {
        uint8_t bar = (uint8_t)barrier[c];
        if (bar && ((bar & 7) < 1 || (bar & 7) > 5 || (bar >> 3) > 1)) {
            free(L->lb_cache);
            free(L);
            PyErr_SetString(PyExc_ValueError, "barrier table holds an unknown barrier");
            return NULL;
        }
        L->barrier[c] = bar;
        if (bar) L->has_barriers = 1;
    }
    if (L->has_barriers || has_openings) {
        Board probe;
        probe.step = (const int16_t (*)[MAX_CELLS])L->step;
        probe.barrier = L->barrier;
        probe.ncells = n;
        for (int colour1 = 1; colour1 <= 5 && !L->loops_possible; colour1++)
            for (int c = 0; c < n && !L->loops_possible; c++)
                for (int d = 0; d < 4 && !L->loops_possible; d++)
                    if (traces_loop(&probe, colour1, c, d)) L->loops_possible = 1;
    }
    PyObject *capsule = PyCapsule_New(L, LAYOUT_NAME, layout_free);
    if (!capsule) { free(L->lb_cache); free(L); }
    return capsule;
}

/* ---------------------------------------------------------- one search */

typedef struct {
    int nrobots;
    int cells[MAX_ROBOTS], colours[MAX_ROBOTS];   /* in the caller's order */
    int target;
    int candidates;        /* robots of the target's colour (all, for the vortex) */
    int sightline, ricochet, allow_sorting;
    int skip_bounds;       /* reach tables need no lower bounds */
} Request;

typedef struct {
    Board board;
    Pos start;
    int perm[MAX_ROBOTS];          /* internal robot -> caller's robot */
    int reach_dir[MAX_ROBOTS];     /* caller's order: direction reaching the target in one move, or -1 */
    int eligible_ext;              /* caller's order */
} Setup;

/* Build the search board: eligibility (with the sightline rule), groups of
 * interchangeable robots made contiguous, lower bounds.  Needs the GIL. */
static int setup_search(Layout *L, const Request *q, Setup *S) {
    Board *b = &S->board;
    memset(S, 0, sizeof *S);
    b->ncells = L->ncells;
    b->nrobots = q->nrobots;
    b->cell_bits = bits_for(L->ncells);
    b->step = (const int16_t (*)[MAX_CELLS])L->step;
    b->barrier = L->barrier;
    b->has_barriers = L->has_barriers;
    b->loops_possible = L->loops_possible;
    b->width = L->width;
    b->straight = !L->has_barriers && !L->has_openings;
    b->target = q->target;
    b->ricochet = q->ricochet;

    /* One-move reach from the start, in the caller's order. */
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    for (int i = 0; i < q->nrobots; i++) occ[q->cells[i]] = 1;
    for (int i = 0; i < q->nrobots; i++) {
        S->reach_dir[i] = -1;
        b->colour[i] = (uint8_t)q->colours[i];
        if (!((q->candidates >> i) & 1)) continue;
        occ[q->cells[i]] = 0;
        for (int d = 0; d < 4 && S->reach_dir[i] < 0; d++) {
            int deflected;
            if (slide(b, occ, i, q->cells[i], d, &deflected) == q->target) S->reach_dir[i] = d;
        }
        occ[q->cells[i]] = 1;
    }
    int eligible = q->candidates;
    if (q->sightline)
        for (int i = 0; i < q->nrobots; i++)
            if (S->reach_dir[i] >= 0 || q->cells[i] == q->target) eligible &= ~(1 << i);
    S->eligible_ext = eligible;

    int colour_specific[5] = {0};
    for (int c = 0; c < L->ncells; c++)
        if (L->barrier[c]) colour_specific[(L->barrier[c] & 7) - 1] = 1;
    int group_ext[MAX_ROBOTS];
    for (int i = 0; i < q->nrobots; i++)
        group_ext[i] = (!q->allow_sorting || colour_specific[q->colours[i]]) ? 100 + i : (eligible >> i) & 1;
    /* Stable order by group: helpers, then finishers, then robots with a colour of their own. */
    int k = 0;
    for (int g = 0; g < 100 + MAX_ROBOTS; g++)
        for (int i = 0; i < q->nrobots; i++)
            if (group_ext[i] == g) S->perm[k++] = i;
    for (int r = 0; r < q->nrobots; r++) {
        int i = S->perm[r];
        b->colour[r] = (uint8_t)q->colours[i];
        b->group[r] = group_ext[i];
        S->start.pos[r] = (int16_t)q->cells[i];
        S->start.status[r] = UNMOVED;
        if ((eligible >> i) & 1) {
            b->eligible |= (uint8_t)(1 << r);
            if (q->skip_bounds) continue;
            const uint8_t *lb = lower_bounds(L, q->target, q->colours[i]);
            if (!lb) { PyErr_NoMemory(); return -1; }
            b->lb[r] = lb;
        }
    }
    b->single_finisher = -1;
    if (!q->skip_bounds && __builtin_popcount(b->eligible) == 1) b->single_finisher = __builtin_ctz(b->eligible);
    int k2 = 0;
    for (int r = 0; r < q->nrobots; r++) if ((b->eligible >> r) & 1) b->order[k2++] = (uint8_t)r;
    for (int r = 0; r < q->nrobots; r++) if (!((b->eligible >> r) & 1)) b->order[k2++] = (uint8_t)r;
    b->tracked = b->ricochet ? b->eligible : 0;
    b->key_bits = 1;
    for (int r = 0; r < b->nrobots; r++) b->key_bits += b->cell_bits + (((b->tracked >> r) & 1) ? 2 : 0);
    return 0;
}

static Layout *get_layout(PyObject *capsule) {
    if (!PyCapsule_IsValid(capsule, LAYOUT_NAME)) {
        PyErr_SetString(PyExc_TypeError, "layout must come from compile_board()");
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, LAYOUT_NAME);
}

/* Parse the common request arguments: cells and colours as sequences of ints. */
static int parse_request(Layout *L, PyObject *cells, PyObject *colours, int target, Request *q) {
    PyObject *cs = PySequence_Fast(cells, "cells must be a sequence of cell indices");
    if (!cs) return -1;
    PyObject *cl = PySequence_Fast(colours, "colours must be a sequence of colour indices");
    if (!cl) { Py_DECREF(cs); return -1; }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cs);
    int ok = 0;
    if (n < 1 || n > MAX_ROBOTS || PySequence_Fast_GET_SIZE(cl) != n) {
        PyErr_Format(PyExc_ValueError, "need 1 to %d robots, with one colour each", MAX_ROBOTS);
        goto done;
    }
    q->nrobots = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(cs, i));
        long k = PyLong_AsLong(PySequence_Fast_GET_ITEM(cl, i));
        if (PyErr_Occurred()) goto done;
        if (c < 0 || c >= L->ncells) {
            PyErr_Format(PyExc_ValueError, "robot %zd: cell %ld is off the board", i, c);
            goto done;
        }
        if (k < 0 || k > 4) { PyErr_Format(PyExc_ValueError, "robot %zd: colour %ld unknown", i, k); goto done; }
        for (Py_ssize_t j = 0; j < i; j++)
            if (q->cells[j] == c) { PyErr_Format(PyExc_ValueError, "two robots on cell %ld", c); goto done; }
        if (L->barrier[c]) { PyErr_Format(PyExc_ValueError, "robot %zd stands on a barrier", i); goto done; }
        q->cells[i] = (int)c;
        q->colours[i] = (int)k;
    }
    if (target < 0 || target >= L->ncells) { PyErr_SetString(PyExc_ValueError, "target is off the board"); goto done; }
    q->target = target;
    ok = 1;
done:
    Py_DECREF(cs);
    Py_DECREF(cl);
    return ok ? 0 : -1;
}

/* Parse a request and build its search board; NULL (with a Python error set) on failure. */
static Setup *new_setup(Layout *L, PyObject *cells, PyObject *colours, int target, int candidates, int sightline,
                        int ricochet, int allow_sorting, int skip_bounds, Request *q) {
    memset(q, 0, sizeof *q);
    if (parse_request(L, cells, colours, target, q) != 0) return NULL;
    q->candidates = candidates & ((1 << q->nrobots) - 1);
    q->sightline = sightline;
    q->ricochet = ricochet;
    q->allow_sorting = allow_sorting;
    q->skip_bounds = skip_bounds;
    Setup *S = malloc(sizeof(Setup));
    if (!S) { PyErr_NoMemory(); return NULL; }
    if (setup_search(L, q, S) != 0) { free(S); return NULL; }
    return S;
}

static int get_cancel(PyObject *cancel, Py_buffer *view, Limits *lim) {
    lim->cancel = NULL;
    if (cancel == Py_None) return 0;
    if (PyObject_GetBuffer(cancel, view, PyBUF_SIMPLE) != 0) return -1;
    if (view->len < 1) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "cancel buffer must hold at least one byte");
        return -1;
    }
    lim->cancel = (volatile const uint8_t *)view->buf;
    return 0;
}

/* The limits every entry point takes, checked at the boundary. */
static int check_limits(int max_depth, Py_ssize_t state_budget) {
    if (max_depth < 0 || max_depth > MAX_DEPTH - 1) {
        PyErr_Format(PyExc_ValueError, "max_depth must be from 0 to %d", MAX_DEPTH - 1);
        return -1;
    }
    if (state_budget < (1 << 20)) {
        PyErr_SetString(PyExc_ValueError, "state_budget must be at least 1 MiB");
        return -1;
    }
    return 0;
}

static int attach_exact(PyObject *capsule, const Layout *L, const Request *q, Setup *S);
static PyObject *cells_tuple(const int *pos, int n);

static PyObject *moves_list(const Setup *S, const Result *res) {
    PyObject *moves = PyList_New(res->length > 0 ? res->length : 0);
    if (!moves) return NULL;
    for (int i = 0; i < res->length; i++) {
        PyObject *m = Py_BuildValue("(ii)", S->perm[res->move_robot[i]], res->move_dir[i]);
        if (!m) { Py_DECREF(moves); return NULL; }
        PyList_SET_ITEM(moves, i, m);
    }
    return moves;
}

static PyObject *py_solve(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "cells", "colours", "target", "candidates", "sightline", "ricochet",
                             "max_depth", "time_budget", "state_budget", "cancel", "strategy",
                             "ida_nodes", "exact", NULL};
    PyObject *capsule, *cells, *colours, *cancel = Py_None, *exact = Py_None;
    int target, candidates, sightline, ricochet, max_depth = 64, strategy = 0;
    double time_budget = 0;
    Py_ssize_t state_budget = (Py_ssize_t)1 << 30;
    long long ida_nodes = 2000000;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOiipp|idnOiLO", kwlist, &capsule, &cells, &colours,
                                     &target, &candidates, &sightline, &ricochet, &max_depth, &time_budget,
                                     &state_budget, &cancel, &strategy, &ida_nodes, &exact))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    if (check_limits(max_depth, state_budget) != 0) return NULL;
    if (strategy < 0 || strategy > 2) { PyErr_SetString(PyExc_ValueError, "strategy must be 0, 1 or 2"); return NULL; }
    Request q;
    Setup *S = new_setup(L, cells, colours, target, candidates, sightline, ricochet, 1, 0, &q);
    if (!S) return NULL;
    /* The lone-robot bound is reported as it is, whatever bound the search uses. */
    int lone = S->board.eligible ? heuristic(&S->board, &S->start) : 255;
    if (attach_exact(exact, L, &q, S) != 0) { free(S); return NULL; }
    Limits lim = {0};
    Py_buffer view;
    if (get_cancel(cancel, &view, &lim) != 0) { free(S); return NULL; }
    lim.max_depth = max_depth;
    lim.state_budget = (size_t)state_budget;
    double t0 = now_seconds();
    lim.deadline = time_budget > 0 ? t0 + time_budget : 0;
    Result *res = calloc(1, sizeof(Result));
    if (!res) { if (lim.cancel) PyBuffer_Release(&view); free(S); return PyErr_NoMemory(); }
    res->length = -1;

    Py_BEGIN_ALLOW_THREADS
    const Board *b = &S->board;
    int at_target = -1;
    for (int r = 0; r < b->nrobots; r++)
        if (S->start.pos[r] == b->target && ((b->eligible >> r) & 1)) at_target = r;
    if (!b->eligible) {
        res->status = ST_UNSOLVABLE;
    } else if (!b->ricochet && at_target >= 0) {
        res->status = ST_OPTIMAL;
        res->length = 0;
    } else if (max_depth == 0) {
        res->status = ST_DEPTH;
        res->lower_bound = 1;
    } else {
        int settled = 0;
        if (strategy != 2)
            settled = run_ida(b, &S->start, &lim, strategy == 1 ? UINT64_MAX : (uint64_t)ida_nodes, res);
        if (!settled) run_astar(b, &S->start, &lim, res);
    }
    Py_END_ALLOW_THREADS

    double elapsed = now_seconds() - t0;
    if (lim.cancel) PyBuffer_Release(&view);
    PyObject *moves = moves_list(S, res);
    PyObject *reach = cells_tuple(S->reach_dir, q.nrobots);
    PyObject *out = NULL;
    if (moves && reach) {
        out = Py_BuildValue("{s:s,s:O,s:i,s:K,s:K,s:d,s:s,s:O,s:i,s:i}", "status", STATUS_NAMES[res->status],
                            "moves", moves, "lower_bound", res->status == ST_OPTIMAL ? res->length : res->lower_bound,
                            "states", (unsigned long long)res->states, "nodes", (unsigned long long)res->nodes,
                            "seconds", elapsed, "strategy", res->strategy ? "astar" : "ida",
                            "reach", reach, "eligible", S->eligible_ext, "lone_bound", lone);
    }
    Py_XDECREF(moves);
    Py_XDECREF(reach);
    free(res);
    free(S);
    return out;
}

static PyObject *py_reach(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "cells", "colours", "ricochet", "max_depth", "time_budget",
                             "state_budget", NULL};
    PyObject *capsule, *cells, *colours;
    int ricochet, max_depth = 10;
    double time_budget = 0;
    Py_ssize_t state_budget = (Py_ssize_t)1 << 30;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOp|idn", kwlist, &capsule, &cells, &colours, &ricochet,
                                     &max_depth, &time_budget, &state_budget))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    if (check_limits(max_depth, state_budget) != 0) return NULL;
    Request q = {0};
    PyObject *first = PySequence_GetItem(cells, 0);
    long target = first ? PyLong_AsLong(first) : -1;
    Py_XDECREF(first);
    if (PyErr_Occurred()) return NULL;
    if (parse_request(L, cells, colours, (int)target, &q) != 0) return NULL;
    q.candidates = (1 << q.nrobots) - 1;
    q.ricochet = ricochet;
    q.skip_bounds = 1;
    Setup *S = malloc(sizeof(Setup));
    uint8_t *table = malloc((size_t)q.nrobots * (size_t)L->ncells);
    uint8_t *ordered = malloc((size_t)q.nrobots * (size_t)L->ncells);
    Result *res = calloc(1, sizeof(Result));
    if (!S || !table || !ordered || !res || setup_search(L, &q, S) != 0) {
        free(S); free(table); free(ordered); free(res);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    Limits lim = {0};
    lim.max_depth = max_depth;
    lim.state_budget = (size_t)state_budget;
    double t0 = now_seconds();
    lim.deadline = time_budget > 0 ? t0 + time_budget : 0;
    int depth_done = 0;
    Py_BEGIN_ALLOW_THREADS
    run_reach(&S->board, &S->start, &lim, table, &depth_done, res);
    Py_END_ALLOW_THREADS
    /* Back to the caller's robot order. */
    for (int r = 0; r < q.nrobots; r++)
        memcpy(ordered + (size_t)S->perm[r] * (size_t)L->ncells, table + (size_t)r * (size_t)L->ncells,
               (size_t)L->ncells);
    PyObject *out = Py_BuildValue("{s:y#,s:i,s:s,s:K,s:K,s:d}", "depths", (const char *)ordered,
                                  (Py_ssize_t)q.nrobots * L->ncells, "complete_to", depth_done,
                                  "status", STATUS_NAMES[res->status], "states", (unsigned long long)res->states,
                                  "nodes", (unsigned long long)res->nodes, "seconds", now_seconds() - t0);
    free(S); free(table); free(ordered); free(res);
    return out;
}

static PyObject *py_facts(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "cells", "colours", "target", "candidates", "sightline", "ricochet",
                             "length", "cap", "time_budget", "state_budget", "exact", NULL};
    PyObject *capsule, *cells, *colours, *exact = Py_None;
    int target, candidates, sightline, ricochet, length;
    long long cap = 1000000;
    double time_budget = 0;
    Py_ssize_t state_budget = (Py_ssize_t)1 << 28;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOiippi|LdnO", kwlist, &capsule, &cells, &colours, &target,
                                     &candidates, &sightline, &ricochet, &length, &cap, &time_budget,
                                     &state_budget, &exact))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    if (length < 1 || length > MAX_DEPTH - 1 || cap < 1) {
        PyErr_SetString(PyExc_ValueError, "length must be from 1 to 254 and cap positive");
        return NULL;
    }
    if (check_limits(length, state_budget) != 0) return NULL;
    Request q;
    /* No sorting of interchangeable robots: robot identities matter for the facts. */
    Setup *S = new_setup(L, cells, colours, target, candidates, sightline, ricochet, 0, 0, &q);
    if (!S) return NULL;
    if (attach_exact(exact, L, &q, S) != 0) { free(S); return NULL; }
    Counter *c = calloc(1, sizeof(Counter));
    if (!c) { free(S); return PyErr_NoMemory(); }
    /* The memo starts small and grows sixteenfold when it fills, up to the state
     * budget: a short puzzle then costs no huge allocation.  The largest table
     * keeps going unmemoised when full, so the answer is always exact. */
    size_t max_slots = 1024;
    while (max_slots * 2 * sizeof(Facts) <= (size_t)state_budget && max_slots < ((size_t)1 << 32)) max_slots <<= 1;
    size_t slots = max_slots < ((size_t)1 << 14) ? max_slots : ((size_t)1 << 14);
    c->b = &S->board;
    c->cap = (uint64_t)cap;
    Limits lim = {0};
    lim.max_depth = length;
    lim.state_budget = (size_t)state_budget;
    double t0 = now_seconds();
    lim.deadline = time_budget > 0 ? t0 + time_budget : 0;
    c->lim = &lim;
    Facts root;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        c->memo = table_alloc(slots * sizeof(Facts));
        if (!c->memo) { nomem = 1; break; }
        c->mask = slots - 1;
        c->limit = slots / 10 * 7;
        c->used = 0;
        c->failed = 0;
        c->abort_when_full = slots < max_slots;
        c->cur = S->start;
        memset(c->occ, 0, sizeof c->occ);
        for (int r = 0; r < q.nrobots; r++) c->occ[S->start.pos[r]] = 1;
        count_dfs(c, length, &root);
        if (c->failed == ST_STATES && c->abort_when_full) {
            table_release(c->memo, slots * sizeof(Facts));
            c->memo = NULL;
            slots = slots * 16 < max_slots ? slots * 16 : max_slots;
            continue;
        }
        break;
    }
    Py_END_ALLOW_THREADS
    if (nomem) { free(S); free(c); return PyErr_NoMemory(); }
    PyObject *out;
    if (c->failed) {
        out = Py_BuildValue("{s:s}", "status", STATUS_NAMES[c->failed]);
    } else {
        int fewest = 99;
        int fewest_mask = 0;
        for (int m = 0; m < 32; m++)
            if ((root.masks >> m) & 1 && __builtin_popcount((unsigned)m) < fewest) {
                fewest = __builtin_popcount((unsigned)m);
                fewest_mask = m;
            }
        int ext_mask = 0;
        for (int r = 0; r < q.nrobots; r++)
            if ((fewest_mask >> r) & 1) ext_mask |= 1 << S->perm[r];
        out = Py_BuildValue("{s:s,s:K,s:O,s:i,s:i,s:i,s:K,s:d}", "status", "optimal",
                            "solutions", (unsigned long long)root.count, "capped", root.count >= c->cap ? Py_True : Py_False,
                            "fewest_robots", root.count ? fewest : -1, "fewest_robots_mask", ext_mask,
                            "fewest_switches", root.count ? root.switches[q.nrobots] : -1,
                            "nodes", (unsigned long long)c->nodes, "seconds", now_seconds() - t0);
    }
    table_release(c->memo, (c->mask + 1) * sizeof(Facts));
    free(c);
    free(S);
    return out;
}

/* ------------------------------------------------------------ upper bounds */

/* Fewest moves for an eligible robot to finish moving alone, the others
 * standing still: a breadth-first search over (cell, ricochet status).
 * 255 when none finishes within `limit` moves. */
static int solo_length(const Board *b, uint8_t *occ, const Pos *p, int limit) {
    static const int NSTATUS = 4;
    int best = 255;
    int16_t queue[MAX_CELLS * 4];
    uint8_t depth[MAX_CELLS * 4];
    for (int r = 0; r < b->nrobots; r++) {
        if (!((b->eligible >> r) & 1)) continue;
        int start = p->pos[r];
        if (is_goal(b, p, r)) return 0;
        memset(depth, 255, (size_t)b->ncells * NSTATUS);
        occ[start] = 0;
        int head = 0, tail = 0, s0 = start * NSTATUS + p->status[r];
        depth[s0] = 0;
        queue[tail++] = (int16_t)s0;
        while (head < tail) {
            int st = queue[head++], cell = st / NSTATUS, status = st % NSTATUS, g = depth[st];
            if (g + 1 >= best || g + 1 > limit) break;
            int found = 0;
            for (int d = 0; d < 4; d++) {
                int deflected;
                int end = slide(b, occ, r, cell, d, &deflected);
                if (end < 0) continue;
                int ns = next_status(status, d, deflected);
                int key = end * NSTATUS + ns;
                if (depth[key] != 255) continue;
                depth[key] = (uint8_t)(g + 1);
                if (end == b->target && (!b->ricochet || ns == TURNED)) { found = 1; break; }
                queue[tail++] = (int16_t)key;
            }
            if (found) { best = g + 1; break; }
        }
        occ[start] = 1;
    }
    return best;
}

/* An upper bound on the optimal length, found cheaply: the active robot alone,
 * or after one move of another robot.  Used by the generator to throw away
 * positions that are certainly shorter than it wants without a full search. */
static PyObject *py_upper_bound(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "cells", "colours", "target", "candidates", "sightline", "ricochet",
                             "helper_moves", NULL};
    PyObject *capsule, *cells, *colours;
    int target, candidates, sightline, ricochet, helper_moves = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOiipp|i", kwlist, &capsule, &cells, &colours, &target,
                                     &candidates, &sightline, &ricochet, &helper_moves))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    if (helper_moves < 0 || helper_moves > 1) {
        PyErr_SetString(PyExc_ValueError, "helper_moves must be 0 or 1");
        return NULL;
    }
    Request q;
    Setup *S = new_setup(L, cells, colours, target, candidates, sightline, ricochet, 0, 1, &q);
    if (!S) return NULL;
    int best;
    Py_BEGIN_ALLOW_THREADS
    const Board *b = &S->board;
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    Pos p = S->start;
    for (int r = 0; r < b->nrobots; r++) occ[p.pos[r]] = 1;
    best = b->eligible ? solo_length(b, occ, &p, 254) : 255;
    for (int h = 0; helper_moves && h < b->nrobots && best > 2; h++) {
        if ((b->eligible >> h) & 1 && __builtin_popcount(b->eligible) == 1) continue; /* its solo is counted */
        int start = p.pos[h];
        uint8_t old = p.status[h];
        occ[start] = 0;
        for (int d = 0; d < 4 && best > 2; d++) {
            int deflected;
            int end = slide(b, occ, h, start, d, &deflected);
            if (end < 0) continue;
            p.pos[h] = (int16_t)end;
            p.status[h] = (uint8_t)next_status(old, d, deflected);
            occ[end] = 1;
            int n = solo_length(b, occ, &p, best - 2);
            if (n != 255 && n + 1 < best) best = n + 1;
            occ[end] = 0;
        }
        p.pos[h] = (int16_t)start;
        p.status[h] = old;
        occ[start] = 1;
    }
    Py_END_ALLOW_THREADS
    free(S);
    if (best == 255) Py_RETURN_NONE;
    return PyLong_FromLong(best);
}

/* ------------------------------------------------- every position at once */

/* Retrograde analysis: the optimal length of every position of one board and
 * goal, by a breadth-first search backwards from the goal positions over one
 * byte per position (cells^robots bytes: 4 GiB for 4 robots on 16 x 16).
 * Lengths follow the plain rule (ricochet none), which is never longer than
 * under the ricochet rule: callers prove each position they keep with the
 * solver under the rules in force.  The bank uses it to find every position of
 * a board at the longest lengths, which random walks meet only by luck. */

#define RETRO_UNSEEN 0xFF
#define RETRO_MAX_ROBOTS 4
#define RETRO_MAX_THREADS 64

typedef struct {
    const Layout *L;
    Board board;                  /* for forward slides (slide()) */
    int nrobots, n;
    uint64_t stride[RETRO_MAX_ROBOTS], size;
    int shift;                    /* log2(n) when n is a power of two, else 0 */
    /* Interchangeable helpers (none may finish, no barrier has their colour): a
     * position is stored once, their cells sorted into their slots (ascending);
     * the other orders stay unseen.  sym_mask 0: every position is stored. */
    int sym_mask, sym_n, sym_slot[RETRO_MAX_ROBOTS];
    const uint8_t *free;          /* per cell: a robot may stand there */
    uint8_t *dist;
} Retro;

typedef struct {
    const Retro *R;
    uint64_t begin, end;
    int layer;                    /* expand positions of this length */
    uint64_t marked;              /* positions given layer + 1 (a race may count one twice) */
    uint64_t hist[256];           /* the final count, per length */
} RetroSlice;

static inline void retro_decode(const Retro *R, uint64_t idx, int *pos) {
    if (R->shift) { /* a power-of-two board (16 x 16): shifts, not divisions */
        const uint64_t mask = (uint64_t)R->n - 1;
        for (int r = 0; r < R->nrobots; r++) { pos[r] = (int)(idx & mask); idx >>= R->shift; }
        return;
    }
    for (int r = 0; r < R->nrobots; r++) { pos[r] = (int)(idx % (uint64_t)R->n); idx /= (uint64_t)R->n; }
}

/* The table index of the position with robots on pos[] (interchangeable
 * helpers' cells sorted into their slots). */
static inline uint64_t retro_index(const Retro *R, const int *pos) {
    uint64_t idx = 0;
    int g[RETRO_MAX_ROBOTS], k = 0;
    for (int r = 0; r < R->nrobots; r++) {
        if ((R->sym_mask >> r) & 1) g[k++] = pos[r];
        else idx += (uint64_t)pos[r] * R->stride[r];
    }
    for (int i = 1; i < k; i++) {
        int x = g[i], j = i - 1;
        while (j >= 0 && g[j] > x) { g[j + 1] = g[j]; j--; }
        g[j + 1] = x;
    }
    for (int i = 0; i < k; i++) idx += (uint64_t)g[i] * R->stride[R->sym_slot[i]];
    return idx;
}

/* Whether a position is stored as it is: its interchangeable helpers in order. */
static inline int retro_canonical(const Retro *R, const int *pos) {
    for (int i = 1; i < R->sym_n; i++)
        if (pos[R->sym_slot[i - 1]] >= pos[R->sym_slot[i]]) return 0;
    return 1;
}

/* How many real positions one stored position stands for. */
static inline uint64_t retro_multiplicity(const Retro *R) {
    uint64_t m = 1;
    for (int i = 2; i <= R->sym_n; i++) m *= (uint64_t)i;
    return m;
}

/* Whether any of the 8 bytes of x equals b. */
static inline int has_byte(uint64_t x, uint8_t b) {
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t v = x ^ (ones * b);
    return ((v - ones) & ~v & (ones << 7)) != 0;
}

static inline uint8_t retro_get(const Retro *R, uint64_t i) { return __atomic_load_n(&R->dist[i], __ATOMIC_RELAXED); }

/* Give layer + 1 to every unseen position one move before a position of this
 * slice at `layer`.  Robot r stopped at p moving d only if the way on is shut
 * (a wall, the edge, the centre or a robot: a barrier cell ahead would bend
 * the slide, not stop it); it came from any cell met when its path is traced
 * back, through barriers that bend it (each bend is its own inverse). */
static void *retro_expand(void *arg) {
    RetroSlice *S = arg;
    const Retro *R = S->R;
    const Layout *L = R->L;
    static const int OPP[4] = {2, 3, 0, 1};
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    const uint8_t layer = (uint8_t)S->layer, next = (uint8_t)(S->layer + 1);
    const int limit = 4 * L->ncells;
    for (uint64_t idx = S->begin; idx < S->end; idx++) {
        /* Most of the table is at other lengths: skip 8 positions at a time.  Other
         * threads only turn unseen bytes into layer + 1 meanwhile, never into layer. */
        if ((idx & 7) == 0 && idx + 8 <= S->end &&
            !has_byte(__atomic_load_n((const uint64_t *)(R->dist + idx), __ATOMIC_RELAXED), layer)) {
            idx += 7;
            continue;
        }
        if (retro_get(R, idx) != layer) continue;
        int pos[RETRO_MAX_ROBOTS];
        retro_decode(R, idx, pos);
        for (int r = 0; r < R->nrobots; r++) occ[pos[r]] = 1;
        for (int r = 0; r < R->nrobots; r++) {
            const int p = pos[r], colour1 = R->board.colour[r] + 1;
            occ[p] = 0;
            for (int d = 0; d < 4; d++) {
                int ahead = L->step[d][p];
                if (ahead >= 0 && !occ[ahead]) continue;
                int cur = p, dir = d;
                for (int steps = 0; steps < limit; steps++) {
                    int prev = L->step[OPP[dir]][cur];
                    if (prev < 0 || occ[prev]) break;
                    uint8_t bar = L->barrier[prev];
                    if (bar) {
                        if ((bar & 7) != colour1) dir = DEFLECT[bar >> 3][dir];
                    } else if (prev != p) {
                        uint64_t j;
                        if ((R->sym_mask >> r) & 1) {
                            pos[r] = prev;
                            j = retro_index(R, pos);
                            pos[r] = p;
                        } else {
                            j = (uint64_t)((int64_t)idx + (int64_t)(prev - p) * (int64_t)R->stride[r]);
                        }
                        if (retro_get(R, j) == RETRO_UNSEEN) {
                            __atomic_store_n(&R->dist[j], next, __ATOMIC_RELAXED);
                            S->marked++;
                        }
                    }
                    cur = prev;
                }
            }
            occ[p] = 1;
        }
        for (int r = 0; r < R->nrobots; r++) occ[pos[r]] = 0;
    }
    return NULL;
}

/* Count positions per length; unseen ones count as unsolvable when every robot
 * stands on its own free cell (index 255 of hist). */
static void *retro_count(void *arg) {
    RetroSlice *S = arg;
    const Retro *R = S->R;
    for (uint64_t idx = S->begin; idx < S->end; idx++) {
        uint8_t v = R->dist[idx];
        if (v != RETRO_UNSEEN) { S->hist[v]++; continue; }
        int pos[RETRO_MAX_ROBOTS], ok = 1;
        retro_decode(R, idx, pos);
        if (!retro_canonical(R, pos)) continue; /* stands for another order of the helpers */
        for (int r = 0; r < R->nrobots && ok; r++) {
            if (!R->free[pos[r]]) ok = 0;
            for (int s = 0; s < r && ok; s++) if (pos[s] == pos[r]) ok = 0;
        }
        if (ok) S->hist[255]++;
    }
    return NULL;
}

static void retro_parallel(Retro *R, int threads, int layer, void *(*fn)(void *), RetroSlice *slices) {
    pthread_t tid[RETRO_MAX_THREADS];
    uint64_t chunk = (R->size + (uint64_t)threads - 1) / (uint64_t)threads;
    for (int t = 0; t < threads; t++) {
        memset(&slices[t], 0, sizeof slices[t]);
        slices[t].R = R;
        slices[t].layer = layer;
        slices[t].begin = chunk * (uint64_t)t;
        slices[t].end = slices[t].begin + chunk < R->size ? slices[t].begin + chunk : R->size;
        if (slices[t].begin > slices[t].end) slices[t].begin = slices[t].end;
    }
    uint64_t started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[t], NULL, fn, &slices[t]) == 0) started |= (uint64_t)1 << t;
        else fn(&slices[t]);
    fn(&slices[0]);
    for (int t = 1; t < threads; t++) if ((started >> t) & 1) pthread_join(tid[t], NULL);
}

/* One optimal plain-rule solution from a position, read off the table: at each
 * step the first move (robot, then direction) to a position one move closer.
 * Returns its length, or -1 if the table disagrees with the forward moves. */
static int retro_descend(const Retro *R, uint64_t idx, int8_t *robot, int8_t *dir) {
    int pos[RETRO_MAX_ROBOTS];
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    int len = R->dist[idx];
    retro_decode(R, idx, pos); /* the robots' real cells from here on (helpers keep who they are) */
    for (int k = 0; k < len; k++) {
        for (int r = 0; r < R->nrobots; r++) occ[pos[r]] = 1;
        int found = 0;
        for (int r = 0; r < R->nrobots && !found; r++) {
            int from = pos[r];
            occ[from] = 0;
            for (int d = 0; d < 4 && !found; d++) {
                int deflected, to = slide(&R->board, occ, r, from, d, &deflected);
                if (to < 0) continue;
                pos[r] = to;
                uint64_t j = retro_index(R, pos);
                if (R->dist[j] == len - k - 1) { robot[k] = (int8_t)r; dir[k] = (int8_t)d; found = 1; }
                else pos[r] = from;
            }
            occ[from] = 1;
            if (found) occ[from] = 0;
        }
        for (int r = 0; r < R->nrobots; r++) occ[pos[r]] = 0;
        if (!found) return -1;
    }
    return len;
}

/* Check the arguments of an analysis and set R up (no table yet).  Needs the GIL. */
static int retro_prepare(Retro *R, Layout *L, PyObject *colours, int target, int threads, const char *free_cells,
                         Py_ssize_t free_len, Py_ssize_t state_budget) {
    if (L->has_openings) { PyErr_SetString(PyExc_ValueError, "boards with edge openings are not supported"); return -1; }
    if (free_len != L->ncells) { PyErr_SetString(PyExc_ValueError, "free must hold one byte per cell"); return -1; }
    if (target < 0 || target >= L->ncells) { PyErr_SetString(PyExc_ValueError, "target is off the board"); return -1; }
    if (threads < 1 || threads > RETRO_MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads must be from 1 to %d", RETRO_MAX_THREADS);
        return -1;
    }
    memset(R, 0, sizeof *R);
    R->L = L;
    R->n = L->ncells;
    R->free = (const uint8_t *)free_cells;
    PyObject *cl = PySequence_Fast(colours, "colours must be a sequence of colour indices");
    if (!cl) return -1;
    R->nrobots = (int)PySequence_Fast_GET_SIZE(cl);
    if (R->nrobots < 1 || R->nrobots > RETRO_MAX_ROBOTS) {
        Py_DECREF(cl);
        PyErr_Format(PyExc_ValueError, "need 1 to %d robots", RETRO_MAX_ROBOTS);
        return -1;
    }
    R->board.ncells = L->ncells;
    R->board.nrobots = R->nrobots;
    R->board.width = L->width;
    R->board.step = (const int16_t (*)[MAX_CELLS])L->step;
    R->board.barrier = L->barrier;
    R->board.has_barriers = L->has_barriers;
    R->board.loops_possible = L->loops_possible;
    for (int r = 0; r < R->nrobots; r++) {
        long k = PyLong_AsLong(PySequence_Fast_GET_ITEM(cl, r));
        if (k < 0 || k > 4) {
            Py_DECREF(cl);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "robot %d: colour %ld unknown", r, k);
            return -1;
        }
        R->board.colour[r] = (uint8_t)k;
    }
    Py_DECREF(cl);
    R->size = 1;
    for (int r = 0; r < R->nrobots; r++) {
        R->stride[r] = R->size;
        R->size *= (uint64_t)R->n;
    }
    R->shift = 0;
    if ((R->n & (R->n - 1)) == 0 && R->n > 1)
        while ((1 << R->shift) < R->n) R->shift++;
    if (R->size > (uint64_t)state_budget) {
        PyErr_Format(PyExc_MemoryError, "%d robots on %d cells need %llu bytes, over the state budget",
                     R->nrobots, R->n, (unsigned long long)R->size);
        return -1;
    }
    return 0;
}

/* Fill R->dist (allocated, R->size bytes): layer 0, then one layer at a time
 * until no position is new; then count positions per length into hist.
 * Runs without the GIL.  Returns ST_OPTIMAL, or ST_TIME when out of time. */
static int retro_run(Retro *R, int target, int candidates, int threads, double time_budget, RetroSlice *slices,
                     uint64_t hist[256], int *layers) {
    double t0 = now_seconds();
    int status = ST_OPTIMAL;
    memset(R->dist, RETRO_UNSEEN, R->size);
    /* Layer 0: a robot that may finish stands on the target, the others anywhere free. */
    for (int r = 0; r < R->nrobots; r++) {
        if (!((candidates >> r) & 1)) continue;
        uint64_t rest = R->size / (uint64_t)R->n;
        for (uint64_t k = 0; k < rest; k++) {
            int pos[RETRO_MAX_ROBOTS], ok = 1;
            uint64_t x = k, idx = 0;
            for (int s = 0; s < R->nrobots; s++) {
                if (s == r) { pos[s] = target; }
                else { pos[s] = (int)(x % (uint64_t)R->n); x /= (uint64_t)R->n; }
                idx += (uint64_t)pos[s] * R->stride[s];
            }
            for (int s = 0; s < R->nrobots && ok; s++) {
                if (!R->free[pos[s]]) ok = 0;
                for (int u = 0; u < s && ok; u++) if (pos[u] == pos[s]) ok = 0;
            }
            if (ok && retro_canonical(R, pos)) R->dist[idx] = 0;
        }
    }
    *layers = 0;
    for (int layer = 0; layer < 254; layer++) {
        if (time_budget > 0 && now_seconds() - t0 > time_budget) { status = ST_TIME; break; }
        retro_parallel(R, threads, layer, retro_expand, slices);
        uint64_t marked = 0;
        for (int t = 0; t < threads; t++) marked += slices[t].marked;
        *layers = layer + 1;
        if (!marked) break;
    }
    retro_parallel(R, threads, 0, retro_count, slices);
    memset(hist, 0, 256 * sizeof(uint64_t));
    const uint64_t m = retro_multiplicity(R); /* counts are of real positions */
    for (int t = 0; t < threads; t++) for (int v = 0; v < 256; v++) hist[v] += slices[t].hist[v] * m;
    return status;
}

static PyObject *counts_list(const uint64_t hist[256]) {
    int longest = -1;
    for (int v = 0; v < 255; v++) if (hist[v]) longest = v;
    PyObject *counts = PyList_New(0);
    for (int v = 0; counts && v <= longest; v++) {
        PyObject *x = PyLong_FromUnsignedLongLong((unsigned long long)hist[v]);
        if (!x || PyList_Append(counts, x) != 0) { Py_XDECREF(x); Py_CLEAR(counts); break; }
        Py_DECREF(x);
    }
    return counts;
}

/* A tuple of ints (robot cells, directions), or NULL with the error set. */
static PyObject *cells_tuple(const int *pos, int n) {
    PyObject *cells = PyTuple_New(n);
    if (!cells) return NULL;
    for (int r = 0; r < n; r++) {
        PyObject *x = PyLong_FromLong(pos[r]);
        if (!x) { Py_DECREF(cells); return NULL; }
        PyTuple_SET_ITEM(cells, r, x);
    }
    return cells;
}

/* (length, cells, moves) for a position, its moves read off the table. */
static PyObject *retro_row(const Retro *R, uint64_t idx) {
    int pos[RETRO_MAX_ROBOTS];
    int8_t robot[256], dir[256];
    retro_decode(R, idx, pos);
    int len = retro_descend(R, idx, robot, dir);
    if (len < 0) { PyErr_SetString(PyExc_RuntimeError, "analysis: the table disagrees with the moves"); return NULL; }
    PyObject *cells = cells_tuple(pos, R->nrobots), *moves = PyTuple_New(len);
    if (!cells || !moves) { Py_XDECREF(cells); Py_XDECREF(moves); return NULL; }
    for (int k = 0; k < len; k++) {
        PyObject *m = Py_BuildValue("(ii)", robot[k], dir[k]);
        if (!m) { Py_DECREF(cells); Py_DECREF(moves); return NULL; }
        PyTuple_SET_ITEM(moves, k, m);
    }
    return Py_BuildValue("(iNN)", len, cells, moves);
}

/* Positions as sequences of cells -> table indices; -1 with an error set. */
static int probe_indices(const Retro *R, PyObject *probes, uint64_t **out, Py_ssize_t *count) {
    *out = NULL;
    *count = 0;
    if (probes == Py_None) return 0;
    PyObject *list = PySequence_Fast(probes, "probes must be a sequence of positions");
    if (!list) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    uint64_t *idx = malloc(sizeof(uint64_t) * (size_t)(n + 1));
    if (!idx) { Py_DECREF(list); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *cells = PySequence_Fast(PySequence_Fast_GET_ITEM(list, i), "a probe is a sequence of cells");
        if (!cells) { free(idx); Py_DECREF(list); return -1; }
        int pos[RETRO_MAX_ROBOTS] = {0};
        int ok = PySequence_Fast_GET_SIZE(cells) == R->nrobots;
        for (int r = 0; r < R->nrobots && ok; r++) {
            long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(cells, r));
            ok = c >= 0 && c < R->n;
            pos[r] = ok ? (int)c : 0;
        }
        uint64_t x = retro_index(R, pos);
        Py_DECREF(cells);
        if (!ok) {
            free(idx); Py_DECREF(list);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "probe %zd: one cell per robot, on the board", i);
            return -1;
        }
        idx[i] = x;
    }
    Py_DECREF(list);
    *out = idx;
    *count = n;
    return 0;
}

static PyObject *probe_lengths(const Retro *R, const uint64_t *idx, Py_ssize_t n) {
    PyObject *probed = PyList_New(n);
    if (!probed) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t v = R->dist[idx[i]];
        PyObject *x = v == RETRO_UNSEEN ? Py_NewRef(Py_None) : PyLong_FromLong(v);
        if (!x) { Py_DECREF(probed); return NULL; }
        PyList_SET_ITEM(probed, i, x);
    }
    return probed;
}

static PyObject *py_exhaustive(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "colours", "target", "candidates", "free", "min_length", "limit",
                             "probes", "threads", "state_budget", "time_budget", NULL};
    PyObject *capsule, *colours, *probes = Py_None;
    const char *free_cells;
    Py_ssize_t free_len, state_budget = (Py_ssize_t)5 << 30;
    int target, candidates, min_length, threads = 2;
    long long limit = 100000;
    double time_budget = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOiiy#i|LOind", kwlist, &capsule, &colours, &target,
                                     &candidates, &free_cells, &free_len, &min_length, &limit, &probes,
                                     &threads, &state_budget, &time_budget))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    if (min_length < 0 || min_length > 254 || limit < 0) {
        PyErr_SetString(PyExc_ValueError, "min_length must be from 0 to 254 and limit not negative");
        return NULL;
    }
    Retro R;
    if (retro_prepare(&R, L, colours, target, threads, free_cells, free_len, state_budget) != 0) return NULL;
    uint64_t *probe_idx = NULL;
    Py_ssize_t nprobes = 0;
    if (probe_indices(&R, probes, &probe_idx, &nprobes) != 0) return NULL;
    R.dist = table_alloc(R.size);
    RetroSlice *slices = calloc((size_t)threads, sizeof(RetroSlice));
    if (!R.dist || !slices) {
        table_release(R.dist, R.size); free(slices); free(probe_idx);
        return PyErr_NoMemory();
    }
    double t0 = now_seconds();
    int status, layers = 0;
    uint64_t hist[256], *found = NULL;
    size_t nfound = 0;
    int threshold = 255;
    uint64_t total = 0, wanted = 0;
    Py_BEGIN_ALLOW_THREADS
    status = retro_run(&R, target, candidates, threads, time_budget, slices, hist, &layers);
    /* The longest lengths first, whole lengths only, within the limit. */
    for (int v = 254; v >= min_length; v--) {
        wanted += hist[v];
        if (total + hist[v] > (uint64_t)limit || total < wanted - hist[v]) continue;
        total += hist[v];
        threshold = v;
    }
    found = total ? malloc(sizeof(uint64_t) * total) : NULL;
    if (found)
        for (uint64_t idx = 0; idx < R.size; idx++) {
            uint8_t v = R.dist[idx];
            if (v != RETRO_UNSEEN && v >= threshold) found[nfound++] = idx;
        }
    Py_END_ALLOW_THREADS
    int longest = -1;
    for (int v = 0; v < 255; v++) if (hist[v]) longest = v;
    PyObject *out = NULL, *counts = counts_list(hist), *positions = PyList_New(0), *probed = NULL;
    if (!counts || !positions || (total && !found)) goto fail;
    for (size_t i = 0; i < nfound; i++) {
        PyObject *item = retro_row(&R, found[i]);
        if (!item || PyList_Append(positions, item) != 0) { Py_XDECREF(item); goto fail; }
        Py_DECREF(item);
    }
    probed = probe_lengths(&R, probe_idx, nprobes);
    if (!probed) goto fail;
    out = Py_BuildValue("{s:s,s:O,s:K,s:i,s:O,s:O,s:O,s:i,s:d}", "status", STATUS_NAMES[status],
                        "counts", counts, "unsolvable", (unsigned long long)hist[255], "layers", layers,
                        "positions", positions, "capped", total < wanted ? Py_True : Py_False,
                        "probes", probed, "longest", longest, "seconds", now_seconds() - t0);
fail:
    Py_XDECREF(counts); Py_XDECREF(positions); Py_XDECREF(probed);
    table_release(R.dist, R.size);
    free(slices); free(found); free(probe_idx);
    return out;
}

/* ------------------------------------------------ an analysis kept in memory */

/* The table of one analysis, kept for as long as Python holds it: the exact
 * plain-rule length of every position, a perfect lower bound for the solver
 * (under the ricochet rule too) while pools are drawn from it. */
typedef struct {
    Retro R;
    PyObject *layout;             /* the layout capsule, kept alive */
    uint8_t free[MAX_CELLS];
    int target, candidates, status, layers;
    uint64_t hist[256];
    double seconds;
} Analysis;

static const char *ANALYSIS_NAME = "ricochet.analysis";

static void analysis_free(PyObject *capsule) {
    Analysis *A = PyCapsule_GetPointer(capsule, ANALYSIS_NAME);
    if (!A) return;
    table_release(A->R.dist, A->R.size);
    Py_XDECREF(A->layout);
    free(A);
}

static Analysis *get_analysis(PyObject *capsule) {
    if (!PyCapsule_IsValid(capsule, ANALYSIS_NAME)) {
        PyErr_SetString(PyExc_TypeError, "exact must come from analyse()");
        return NULL;
    }
    Analysis *A = PyCapsule_GetPointer(capsule, ANALYSIS_NAME);
    if (!A->R.dist) { PyErr_SetString(PyExc_ValueError, "the analysis was released"); return NULL; }
    return A;
}

static PyObject *py_analyse(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"layout", "colours", "target", "candidates", "free", "threads", "state_budget",
                             "time_budget", NULL};
    PyObject *capsule, *colours;
    const char *free_cells;
    Py_ssize_t free_len, state_budget = (Py_ssize_t)5 << 30;
    int target, candidates, threads = 2;
    double time_budget = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOiiy#|ind", kwlist, &capsule, &colours, &target,
                                     &candidates, &free_cells, &free_len, &threads, &state_budget, &time_budget))
        return NULL;
    Layout *L = get_layout(capsule);
    if (!L) return NULL;
    Analysis *A = calloc(1, sizeof(Analysis));
    if (!A) return PyErr_NoMemory();
    if (retro_prepare(&A->R, L, colours, target, threads, free_cells, free_len, state_budget) != 0) {
        free(A);
        return NULL;
    }
    memcpy(A->free, free_cells, (size_t)L->ncells);
    A->R.free = A->free;
    A->target = target;
    A->candidates = candidates & ((1 << A->R.nrobots) - 1);
    /* Helpers that no barrier tells apart are interchangeable: each position of
     * theirs is stored once (up to 6 times less work for 3 such helpers). */
    int barrier_colours = 0;
    for (int c = 0; c < L->ncells; c++) if (L->barrier[c]) barrier_colours |= 1 << ((L->barrier[c] & 7) - 1);
    for (int r = 0; r < A->R.nrobots; r++)
        if (!((A->candidates >> r) & 1) && !((barrier_colours >> A->R.board.colour[r]) & 1))
            A->R.sym_slot[A->R.sym_n++] = r;
    if (A->R.sym_n >= 2)
        for (int i = 0; i < A->R.sym_n; i++) A->R.sym_mask |= 1 << A->R.sym_slot[i];
    else
        A->R.sym_n = 0;
    A->R.dist = table_alloc(A->R.size);
    RetroSlice *slices = calloc((size_t)threads, sizeof(RetroSlice));
    if (!A->R.dist || !slices) {
        table_release(A->R.dist, A->R.size); free(slices); free(A);
        return PyErr_NoMemory();
    }
    double t0 = now_seconds();
    Py_BEGIN_ALLOW_THREADS
    A->status = retro_run(&A->R, target, A->candidates, threads, time_budget, slices, A->hist, &A->layers);
    Py_END_ALLOW_THREADS
    free(slices);
    A->seconds = now_seconds() - t0;
    if (A->status != ST_OPTIMAL) {
        table_release(A->R.dist, A->R.size); free(A);
        PyErr_SetString(PyExc_TimeoutError, "the analysis ran out of its time budget");
        return NULL;
    }
    A->layout = Py_NewRef(capsule);
    PyObject *out = PyCapsule_New(A, ANALYSIS_NAME, analysis_free);
    if (!out) { table_release(A->R.dist, A->R.size); Py_DECREF(A->layout); free(A); }
    return out;
}

/* Lengths per position count, layers and time of an analysis. */
static PyObject *py_analysis_info(PyObject *self, PyObject *args) {
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    Analysis *A = get_analysis(capsule);
    if (!A) return NULL;
    PyObject *counts = counts_list(A->hist);
    if (!counts) return NULL;
    return Py_BuildValue("{s:N,s:K,s:i,s:d,s:K}", "counts", counts, "unsolvable", (unsigned long long)A->hist[255],
                         "layers", A->layers, "seconds", A->seconds, "bytes", (unsigned long long)A->R.size);
}

/* Free the table now rather than when the capsule goes (4 GiB for 4 robots). */
static PyObject *py_analysis_release(PyObject *self, PyObject *args) {
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    Analysis *A = get_analysis(capsule);
    if (!A) return NULL;
    table_release(A->R.dist, A->R.size);
    A->R.dist = NULL;
    Py_RETURN_NONE;
}

static PyObject *py_analysis_lengths(PyObject *self, PyObject *args) {
    PyObject *capsule, *probes;
    if (!PyArg_ParseTuple(args, "OO", &capsule, &probes)) return NULL;
    Analysis *A = get_analysis(capsule);
    if (!A) return NULL;
    uint64_t *idx;
    Py_ssize_t n;
    if (probe_indices(&A->R, probes, &idx, &n) != 0) return NULL;
    PyObject *out = probe_lengths(&A->R, idx, n);
    free(idx);
    return out;
}

static inline uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Calls visit(ctx, idx, length) for every position of at least min_length
 * moves whose robots all stand on distinct cells where `start` allows, in
 * index order (the first robot's cell varies fastest). */
typedef void (*RetroVisit)(void *ctx, uint64_t idx, int length);

static void retro_each_start(const Retro *R, const uint8_t *start, int min_length, RetroVisit visit, void *ctx) {
    int n = R->n, k = R->nrobots;
    int pos[RETRO_MAX_ROBOTS] = {0};
    /* An odometer over the outer robots; the first robot's cells run in the inner loop. */
    for (;;) {
        int ok = 1;
        uint64_t base = 0;
        for (int r = 1; r < k && ok; r++) {
            if (!start[pos[r]]) ok = 0;
            for (int s = 1; s < r && ok; s++) if (pos[s] == pos[r]) ok = 0;
            base += (uint64_t)pos[r] * R->stride[r];
        }
        if (ok) {
            for (int c = 0; c < n; c++) {
                uint8_t v = R->dist[base + (uint64_t)c];
                if (v == RETRO_UNSEEN || v < min_length || !start[c]) continue;
                int clash = 0;
                for (int r = 1; r < k; r++) clash |= pos[r] == c;
                if (!clash) visit(ctx, base + (uint64_t)c, v);
            }
        }
        int r = 1;
        while (r < k && ++pos[r] == n) pos[r++] = 0;
        if (r >= k) break;
    }
}

typedef struct {
    uint64_t count[256];          /* positions met so far per length */
    uint64_t *ranks[256];         /* per length: the sorted ranks wanted */
    uint64_t nranks[256], next[256];
    uint64_t *picked[256];
} Sampler;

static void sample_count(void *ctx, uint64_t idx, int v) { ((Sampler *)ctx)->count[v]++; }

static void sample_pick(void *ctx, uint64_t idx, int v) {
    Sampler *S = ctx;
    uint64_t rank = S->count[v]++;
    if (S->next[v] < S->nranks[v] && S->ranks[v][S->next[v]] == rank) S->picked[v][S->next[v]++] = idx;
}

/* A seeded uniform sample of the fair positions at each length from
 * min_length: up to per_length positions per length, robots on distinct
 * cells that `start` allows (cells without a chip, for a fair round).  Two
 * passes over the table: count, then pick the drawn ranks. */
static PyObject *py_analysis_sample(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"analysis", "start", "min_length", "per_length", "seed", NULL};
    PyObject *capsule;
    const char *start;
    Py_ssize_t start_len;
    int min_length;
    long long per_length;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy#iLK", kwlist, &capsule, &start, &start_len, &min_length,
                                     &per_length, &seed))
        return NULL;
    Analysis *A = get_analysis(capsule);
    if (!A) return NULL;
    if (start_len != A->R.n) { PyErr_SetString(PyExc_ValueError, "start must hold one byte per cell"); return NULL; }
    if (min_length < 0 || min_length > 254 || per_length < 1 || per_length > 10000000) {
        PyErr_SetString(PyExc_ValueError, "min_length must be from 0 to 254 and per_length from 1 to 10^7");
        return NULL;
    }
    Sampler *S = calloc(1, sizeof(Sampler));
    if (!S) return PyErr_NoMemory();
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    retro_each_start(&A->R, (const uint8_t *)start, min_length, sample_count, S);
    uint64_t rng = seed;
    for (int v = min_length; v < 255 && !nomem; v++) {
        uint64_t c = S->count[v], k = c < (uint64_t)per_length ? c : (uint64_t)per_length;
        if (!k) continue;
        S->ranks[v] = malloc(sizeof(uint64_t) * k);
        S->picked[v] = malloc(sizeof(uint64_t) * k);
        if (!S->ranks[v] || !S->picked[v]) { nomem = 1; break; }
        if (k == c) {
            for (uint64_t i = 0; i < k; i++) S->ranks[v][i] = i;
        } else {
            /* k distinct ranks out of c: a partial shuffle when c is small, rejection otherwise. */
            uint64_t got = 0;
            while (got < k) {
                uint64_t x = splitmix64(&rng) % c, dup = 0;
                for (uint64_t j = 0; j < got && !dup; j++) dup = S->ranks[v][j] == x;
                if (!dup) S->ranks[v][got++] = x;
            }
            qsort(S->ranks[v], k, sizeof(uint64_t), cmp_u64);
        }
        S->nranks[v] = k;
    }
    if (!nomem) {
        uint64_t fair[256];
        memcpy(fair, S->count, sizeof fair);
        memset(S->count, 0, sizeof S->count);
        retro_each_start(&A->R, (const uint8_t *)start, min_length, sample_pick, S);
        memcpy(S->count, fair, sizeof fair);
    }
    Py_END_ALLOW_THREADS
    PyObject *out = NULL, *counts = NULL, *rows = NULL;
    if (nomem) { PyErr_NoMemory(); goto done; }
    counts = PyDict_New();
    rows = PyList_New(0);
    if (!counts || !rows) goto done;
    for (int v = min_length; v < 255; v++) {
        if (!S->count[v]) continue;
        PyObject *key = PyLong_FromLong(v), *val = PyLong_FromUnsignedLongLong((unsigned long long)S->count[v]);
        int bad = !key || !val || PyDict_SetItem(counts, key, val) != 0;
        Py_XDECREF(key); Py_XDECREF(val);
        if (bad) goto done;
        for (uint64_t i = 0; i < S->next[v]; i++) {
            PyObject *row = retro_row(&A->R, S->picked[v][i]);
            if (!row || PyList_Append(rows, row) != 0) { Py_XDECREF(row); goto done; }
            Py_DECREF(row);
        }
    }
    out = Py_BuildValue("{s:O,s:O}", "counts", counts, "positions", rows);
done:
    Py_XDECREF(counts); Py_XDECREF(rows);
    for (int v = 0; v < 256; v++) { free(S->ranks[v]); free(S->picked[v]); }
    free(S);
    return out;
}

/* Give a search the analysis of its board and goal as its bound.  The table
 * must be of the same layout and target, with the robots in the caller's
 * order and colours, and a finisher set that includes the search's. */
static int attach_exact(PyObject *capsule, const Layout *L, const Request *q, Setup *S) {
    if (capsule == Py_None) return 0;
    Analysis *A = get_analysis(capsule);
    if (!A) return -1;
    const Retro *R = &A->R;
    int same = R->L == L && A->target == q->target && R->nrobots == q->nrobots &&
               (q->candidates & ~A->candidates) == 0;
    for (int i = 0; same && i < q->nrobots; i++) same = R->board.colour[i] == q->colours[i];
    if (!same) {
        PyErr_SetString(PyExc_ValueError, "the analysis is of another board, target or set of robots");
        return -1;
    }
    Board *b = &S->board;
    b->exact = R->dist;
    b->exact_sym = 0;
    for (int r = 0; r < b->nrobots; r++) {
        b->exact_stride[r] = R->stride[S->perm[r]];
        if ((R->sym_mask >> S->perm[r]) & 1) b->exact_sym |= 1 << r;
    }
    for (int i = 0; i < R->sym_n; i++) b->exact_sym_stride[i] = R->stride[R->sym_slot[i]];
    b->single_finisher = -1; /* its sharper bound assumes the lone-robot bound */
    return 0;
}

static PyMethodDef core_methods[] = {
    {"compile_board", py_compile_board, METH_VARARGS,
     "compile_board(width, height, step, barrier, has_openings) -> layout capsule"},
    {"solve", (PyCFunction)(void (*)(void))py_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(layout, cells, colours, target, candidates, sightline, ricochet, ...) -> dict"},
    {"reach", (PyCFunction)(void (*)(void))py_reach, METH_VARARGS | METH_KEYWORDS,
     "reach(layout, cells, colours, ricochet, max_depth=10, ...) -> dict with depths per robot and cell"},
    {"upper_bound", (PyCFunction)(void (*)(void))py_upper_bound, METH_VARARGS | METH_KEYWORDS,
     "upper_bound(layout, cells, colours, target, candidates, sightline, ricochet, helper_moves=1) -> int or None"},
    {"facts", (PyCFunction)(void (*)(void))py_facts, METH_VARARGS | METH_KEYWORDS,
     "facts(layout, cells, colours, target, candidates, sightline, ricochet, length, ...) -> dict"},
    {"exhaustive", (PyCFunction)(void (*)(void))py_exhaustive, METH_VARARGS | METH_KEYWORDS,
     "exhaustive(layout, colours, target, candidates, free, min_length, limit=100000, probes=None, threads=2, "
     "...) -> dict: plain-rule lengths of every position of a board and goal"},
    {"analyse", (PyCFunction)(void (*)(void))py_analyse, METH_VARARGS | METH_KEYWORDS,
     "analyse(layout, colours, target, candidates, free, threads=2, ...) -> analysis capsule kept in memory"},
    {"analysis_info", py_analysis_info, METH_VARARGS, "analysis_info(analysis) -> dict of counts per length"},
    {"analysis_release", py_analysis_release, METH_VARARGS, "analysis_release(analysis): free its table now"},
    {"analysis_lengths", py_analysis_lengths, METH_VARARGS,
     "analysis_lengths(analysis, positions) -> plain-rule length of each (None: unreachable)"},
    {"analysis_sample", (PyCFunction)(void (*)(void))py_analysis_sample, METH_VARARGS | METH_KEYWORDS,
     "analysis_sample(analysis, start, min_length, per_length, seed) -> dict: counts and sampled positions"},
    {NULL, NULL, 0, NULL},
};

/* Multi-phase initialisation (PEP 489): the module keeps no state of its own
 * (layouts and analyses are capsules), so it needs no exec slot. */
static PyModuleDef_Slot core_slots[] = {
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "solver._core", "The optimal search for Ricochet Robots, in C.", 0, core_methods,
    core_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
