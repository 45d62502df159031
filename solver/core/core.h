/* The search core's shared kernel: the search set-up, limits, positions, moves
 * (slide), keys and the hash table's inline probes.  Everything here is inline
 * or a declaration, so that every search file inlines the hot path. */
#ifndef RICOCHET_CORE_H
#define RICOCHET_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CELLS 1024

#define MAX_ROBOTS 5

#define MAX_DEPTH 255

#define NO_CELL (-1)

/* In a set-up's stop table: the lone robot's slide passes a barrier cell. */
#define CROSSES_BARRIER (-2)

/* Ricochet status of a robot (see solver/model/moves.py). */
enum { UNMOVED = 0, LAST_VERTICAL = 1, LAST_HORIZONTAL = 2, TURNED = 3 };

/* How a search ended. */
enum { ST_OPTIMAL = 0, ST_UNSOLVABLE, ST_DEPTH, ST_TIME, ST_STATES, ST_CANCELLED };

/* The rule options as one word, a bit set for each option away from its
 * default: solver/model/puzzle.py's RuleFlag (tests/test_rules.py holds the
 * two alike).  module.c checks the word once, in the request every search
 * takes; setup_search turns it into the Setup fields the kernel reads. */
enum { RULE_PLAIN = 1 /* ricochet: none */, RULE_VORTEX_SIGHTLINE = 2, RULES_KNOWN = 3 };

/* DEFLECT[orientation][direction], orientation 0 = '/', 1 = '\'; N E S W = 0 1 2 3. */
static const int8_t DEFLECT[2][4] = {{1, 0, 3, 2}, {3, 2, 1, 0}};

/* A stop of the finisher's relaxed slides (see relaxed.c):
 * a cell the slide from a given cell and direction passes, where it may stop,
 * the cell beyond it in the slide's last direction (-1: a wall), and whether
 * a barrier bent the slide on the way. */
typedef struct {
    int16_t cell, beyond;
    uint8_t deflected, bound;    /* bound: the cell's lone-robot bound */
} Stop;

/* Per cell and direction, the stops whose lone-robot bound is one lower than
 * the cell's (nlow of them), then those whose bound is the same; at the
 * target, one and two (the finisher leaves it to turn). */
typedef struct {
    uint32_t *start;             /* [cell * 4 + d], and one past the last */
    uint8_t *nlow;               /* [cell * 4 + d] */
    Stop *stops;
    /* The relaxed finish with no helper on the board, per rule (ricochet off,
     * on) and finisher cell and status ([cell * 4 + status]), made on first
     * use by whichever search asks (relaxed.c's relaxed_alone): */
    int words;                   /* (cells + 63) / 64 */
    uint8_t *alone[2];           /* ALONE_* */
    uint64_t *alone_read[2];     /* [(cell * 4 + status) * words]: when it fails, the cells whose occupancy it read */
} Stops;

enum { ALONE_UNKNOWN, ALONE_FINISHES, ALONE_FAILS, ALONE_BEING_MADE };

/* A search set-up: the board's tables (shared with its layout), the robots'
 * colours and groups, the goal, who may finish it, and the bounds to prune by.
 * Read-only while a search runs, so searches on one board run side by side. */
typedef struct {
    int ncells, nrobots, width;
    int straight;                 /* no barriers, no openings: every slide is a straight line */
    int cell_bits;
    int key_bits;                 /* bits a key uses (statuses only for tracked robots) */
    const int16_t (*step)[MAX_CELLS]; /* [direction][cell]: next cell, or -1 (wall, edge, blocked) */
    const uint8_t *barrier;       /* per cell: 0 none; else (colour + 1) | (orientation << 3) */
    int has_barriers, loops_possible;
    int lines;                    /* no openings, and every step is to the next cell of a row or column */
    const int16_t (*stop)[MAX_CELLS]; /* with lines: [direction][cell] where a lone robot stops, or
                                     CROSSES_BARRIER when its slide passes a barrier cell */
    const int16_t *column, *row;  /* each cell's column and row */
    uint8_t colour[MAX_ROBOTS];   /* colour index of each robot (0 red .. 4 black) */
    int target;
    uint8_t eligible;             /* robots that may finish (bit r) */
    int ricochet;                 /* 1: the finishing robot must have turned */
    uint8_t tracked;              /* robots whose ricochet status is part of the state */
    int group[MAX_ROBOTS];        /* interchangeable robots share a group id */
    uint8_t order[MAX_ROBOTS];    /* move order in deepening: robots that may finish first */
    const uint8_t *lb[MAX_ROBOTS]; /* moves a lone robot needs if it could stop anywhere */
    int single_finisher;          /* the one robot that may finish, or -1 */
    const uint64_t *concern;      /* with one finisher, up to 256 cells: per finisher cell, the
                                     cells a finish in its lone-robot bound can touch (setup.c) */
    int concern_words;            /* 64-bit words per cell's set */
    const uint64_t *concern_spare; /* likewise, for a finish with one finisher move to spare */
    const uint64_t *rays;         /* with concern: per cell, the cells a slide from it may reach */
    const uint8_t *lowering;      /* with one finisher: per finisher cell, the directions (bit d) whose
                                     slides may lower its lone-robot bound */
    const Stops *stops;           /* 4+ robots, one finisher, no analysis: its relaxed stops (relaxed.c), or NULL */
    const uint8_t *exact;         /* an analysis: the plain-rule length of every position, or NULL */
    uint64_t exact_stride[MAX_ROBOTS]; /* index of robot r's cell in that table */
    int exact_sym;                /* robots the table keeps in sorted order (interchangeable helpers) */
    uint64_t exact_sym_stride[MAX_ROBOTS]; /* their slots' strides, ascending */
} Setup;

/* Limits, shared by every strategy. */
typedef struct {
    int max_depth;
    double deadline;              /* monotonic seconds; 0 = none */
    size_t state_budget;          /* bytes for tables */
    volatile const uint8_t *cancel; /* polled; nonzero = stop */
    int stopped;                  /* ST_TIME / ST_STATES / ST_CANCELLED once a limit hit */
    int threads;                  /* A* may expand a full bucket on this many threads */
    size_t crew_from;             /* ... a bucket holding at least this many states */
    int crew_yields;              /* ... unless the processors are taken (crew.c): then on one */
    uint64_t polls;
} Limits;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Looks at the clock and the cancel flag now. */
static inline int limits_reached(Limits *lim) {
    if (lim->stopped) return 1;
    if (lim->cancel && *lim->cancel) { lim->stopped = ST_CANCELLED; return 1; }
    if (lim->deadline > 0 && now_seconds() > lim->deadline) { lim->stopped = ST_TIME; return 1; }
    return 0;
}

/* Cheap to call often: looks at the clock and the cancel flag every 4096 calls. */
static inline int out_of_time(Limits *lim) {
    if (lim->stopped) return 1;
    if ((++lim->polls & 4095) != 0) return 0;
    return limits_reached(lim);
}

/* ------------------------------------------------------------------ moves */

/* Where robot `r` stops moving in direction d; -1 if the move is not allowed.
 * occ marks occupied cells (the mover's own cell must be clear). */
static inline int slide(const Setup *b, const uint8_t *occ, int r, int start, int d, int *deflected) {
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

/* Whether `cell` is in the set of cell `at` among per-cell sets (see Setup's
 * concern, concern_spare and rays). */
static inline int in_set(const Setup *b, const uint64_t *sets, int at, int cell) {
    return (sets[(size_t)at * (size_t)b->concern_words + (size_t)(cell >> 6)] >> (cell & 63)) & 1;
}

static inline int adjacent(const Setup *b, int a, int c) {
    int dx = b->column[a] - b->column[c], dy = b->row[a] - b->row[c];
    return dx * dx + dy * dy == 1;
}

/* Whether cell x lies on the straight slide from s to e, s excluded. */
static inline int on_segment(const Setup *b, int s, int e, int x) {
    int sx = b->column[s], sy = b->row[s], ex = b->column[e], ey = b->row[e], xx = b->column[x], xy = b->row[x];
    if (sy == ey && xy == sy) return (xx - sx) * (xx - ex) <= 0 && xx != sx;
    if (sx == ex && xx == sx) return (xy - sy) * (xy - ey) <= 0 && xy != sy;
    return 0;
}

/* Whether a slide from `start` in direction d is a straight line wherever the
 * robots stand: the board has no barriers and no openings, or it has lines
 * and a lone robot's slide from there passes no barrier cell. */
static inline int slides_straight(const Setup *b, int start, int d) {
    return b->straight || (b->lines && b->stop[d][start] != CROSSES_BARRIER);
}

/* Two straight moves of different robots, A (from sa to ea, direction da) then
 * B, commute when neither met the other: swapping them gives the same state. */
static inline int commute(const Setup *b, int sa, int ea, int da, int sb, int eb, int db) {
    return b->step[db][eb] != ea && !on_segment(b, sb, eb, sa) &&
           b->step[da][ea] != sb && !on_segment(b, sa, ea, eb);
}

/* Whether every move of a robot at cell c commutes with the straight move
 * from sa to ea in direction da, wherever c's moves end: each of them is
 * straight, and c's row and column both miss that move's line and span (so
 * neither move meets the other: see commute()).  Then a robot's four slides
 * need not be made only to be skipped. */
static inline int clear_of(const Setup *b, int sa, int ea, int da, int c) {
    if (!b->straight && !(b->lines && b->stop[0][c] != CROSSES_BARRIER && b->stop[1][c] != CROSSES_BARRIER &&
                          b->stop[2][c] != CROSSES_BARRIER && b->stop[3][c] != CROSSES_BARRIER))
        return 0;
    const int16_t *along = (da & 1) ? b->column : b->row, *across = (da & 1) ? b->row : b->column;
    int lo = along[sa], hi = along[ea];
    if (lo > hi) { int t = lo; lo = hi; hi = t; }
    return across[c] != across[sa] && (along[c] < lo || along[c] > hi);
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

static inline int is_goal(const Setup *b, const Pos *p, int r) {
    return p->pos[r] == b->target && ((b->eligible >> r) & 1) &&
           (!b->ricochet || p->status[r] == TURNED);
}

/* Whether a helper's move from `start` to `end` leaves every finish of p's one
 * finisher in exactly its lone-robot bound as it was: it neither leaves nor
 * enters a cell of concern.  0 where the sets do not apply (no sets, or a
 * finisher that must still turn under the ricochet rule). */
static inline int spares_tight_finish(const Setup *b, const Pos *p, int start, int end) {
    int fin = b->single_finisher;
    if (!b->concern || fin < 0 || (b->ricochet && p->status[fin] != TURNED)) return 0;
    return !in_set(b, b->concern, p->pos[fin], start) && !in_set(b, b->concern, p->pos[fin], end);
}

/* slide() where the board has lines (b->lines) and the lone robot's slide
 * from `start` passes no barrier cell: its stop `end` (b->stop), cut short by
 * the nearest robot in the way.  It reads the robots' cells instead of an
 * occupancy table, and never walks the cells between. */
static inline int slide_lines(const Setup *b, const Pos *p, int r, int start, int d, int end) {
    if (end == start) return -1;
    int n = b->nrobots;
    if (d & 1) { /* east or west: a row's cells are consecutive */
        if (end > start) {
            for (int o = 0; o < n; o++) { int c = p->pos[o]; if (o != r && c > start && c <= end) end = c - 1; }
        } else {
            for (int o = 0; o < n; o++) { int c = p->pos[o]; if (o != r && c < start && c >= end) end = c + 1; }
        }
    } else {
        int w = b->width, col = b->column[start];
        if (end > start) {
            for (int o = 0; o < n; o++) {
                int c = p->pos[o];
                if (o != r && c > start && c <= end && b->column[c] == col) end = c - w;
            }
        } else {
            for (int o = 0; o < n; o++) {
                int c = p->pos[o];
                if (o != r && c < start && c >= end && b->column[c] == col) end = c + w;
            }
        }
    }
    return end == start ? -1 : end;
}

/* The robots' cells as bits, per row and per column (boards with lines up to
 * 64 cells a side): a slide finds the nearest robot in its way at once. */
typedef struct {
    uint64_t row[64], col[64];
} RobotBits;

static inline int bits_fit(const Setup *b) { return b->lines && b->width <= 64 && b->ncells / b->width <= 64; }

static inline void robot_bits(const Setup *b, const Pos *p, RobotBits *m, int on) {
    for (int r = 0; r < b->nrobots; r++) {
        int c = p->pos[r];
        if (on) { m->row[b->row[c]] |= 1ULL << b->column[c]; m->col[b->column[c]] |= 1ULL << b->row[c]; }
        else { m->row[b->row[c]] = 0; m->col[b->column[c]] = 0; }
    }
}

/* A robot moved from cell `from` to `to`, in the bits. */
static inline void bits_move(const Setup *b, RobotBits *m, int from, int to) {
    m->row[b->row[from]] &= ~(1ULL << b->column[from]);
    m->col[b->column[from]] &= ~(1ULL << b->row[from]);
    m->row[b->row[to]] |= 1ULL << b->column[to];
    m->col[b->column[to]] |= 1ULL << b->row[to];
}

/* slide_lines() read from the robots' bits m (the mover's own bit may be set). */
static inline int slide_bits(const Setup *b, const RobotBits *m, int start, int d, int end) {
    int x = b->column[start], y = b->row[start];
    uint64_t in_way;
    switch (d) {
    case 1: { /* east: the nearest robot in columns x + 1 .. the stop's */
        int e = b->column[end];
        in_way = m->row[y] & ~((2ULL << x) - 1) & (e == 63 ? ~0ULL : (2ULL << e) - 1);
        if (in_way) end = start + (__builtin_ctzll(in_way) - 1 - x);
        break;
    }
    case 3: { /* west */
        int e = b->column[end];
        in_way = m->row[y] & ((1ULL << x) - 1) & ~((1ULL << e) - 1);
        if (in_way) end = start - (x - (64 - __builtin_clzll(in_way)));
        break;
    }
    case 2: { /* south: rows y + 1 .. the stop's */
        int e = b->row[end];
        in_way = m->col[x] & ~((2ULL << y) - 1) & (e == 63 ? ~0ULL : (2ULL << e) - 1);
        if (in_way) end = start + (__builtin_ctzll(in_way) - 1 - y) * b->width;
        break;
    }
    default: { /* north */
        int e = b->row[end];
        in_way = m->col[x] & ((1ULL << y) - 1) & ~((1ULL << e) - 1);
        if (in_way) end = start - (y - (64 - __builtin_clzll(in_way))) * b->width;
        break;
    }
    }
    return end == start ? -1 : end;
}

/* slide() from position p (robot r at `start`) the fastest way the board
 * allows; occ must mark p's other robots, unless the board has lines. */
static inline int slide_from(const Setup *b, const Pos *p, const uint8_t *occ, int r, int start, int d,
                             int *deflected) {
    if (b->lines) {
        int end = b->stop[d][start];
        if (end != CROSSES_BARRIER) { *deflected = 0; return slide_lines(b, p, r, start, d, end); }
    }
    return slide(b, occ, r, start, d, deflected);
}

/* The lone-robot bound of robot r alone (a robot on the target that has not
 * turned yet must leave and come back). */
static inline int robot_bound_at(const Setup *b, int r, int cell, int status) {
    int h = b->lb[r][cell];
    return h == 0 && b->ricochet && status != TURNED ? 2 : h;
}

static inline int robot_bound(const Setup *b, const Pos *p, int r) { return robot_bound_at(b, r, p->pos[r], p->status[r]); }

/* Lower bound on the moves still needed from p: the best lone-robot bound,
 * or, with an analysis of the board and goal at hand, the position's exact
 * plain-rule length where that is larger (the ricochet rule only takes
 * finishing moves away, so it is a lower bound under either rule, and a
 * consistent one: a move changes it by at most one). */
static inline int heuristic(const Setup *b, const Pos *p) {
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
static inline int helper_fits(const Setup *b, int h, int rem) {
    return b->exact ? h - 1 <= rem : h <= rem;
}

/* The state as one integer: robots' cells (and the ricochet status of tracked
 * robots), interchangeable robots sorted so that equivalent positions share a key. */
static inline uint64_t make_key(const Setup *b, const Pos *p) {
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

static inline void decode_key(const Setup *b, uint64_t key, Pos *p) {
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
 * touched per probe), else in a separate array.  A key's home slot is taken
 * from its hash's top bits, so that a table twice as large keeps the keys in
 * the same order (the key at slot i moves to about 2i): a big table grows in
 * place, within address space reserved for it (see table.c). */
#define KEY_MASK 0x00FFFFFFFFFFFFFFULL

typedef struct {
    uint64_t *keys;
    uint8_t *vals;          /* NULL when values are embedded */
    size_t mask, count;
    size_t limit;           /* it grows at this many keys (70% of its slots) ... */
    size_t full;            /* ... and, when the budget allows no growth, takes keys up to this many (85%) */
    size_t room;            /* slots reserved for growing in place; 0 for a small table (heap memory) */
    size_t max_disp;        /* the farthest any key lies from its home slot */
    int shift;              /* 64 - log2(slots): a key's home is its hash >> shift */
    int embedded;
} Table;

/* Slots are read and written whole (relaxed atomics, plain moves on x86): A*'s
 * crew reads the table while one thread stores into it (see crew.c). */
static inline uint64_t slot_word(const Table *t, size_t i) { return __atomic_load_n(&t->keys[i], __ATOMIC_RELAXED); }

static inline uint64_t slot_key(const Table *t, size_t i) {
    return t->embedded ? slot_word(t, i) & KEY_MASK : slot_word(t, i);
}

static inline int get_val(const Table *t, size_t i) {
    return t->embedded ? (int)(slot_word(t, i) >> 56) : __atomic_load_n(&t->vals[i], __ATOMIC_RELAXED);
}

static inline void set_val(Table *t, size_t i, int v) {
    if (t->embedded) __atomic_store_n(&t->keys[i], (slot_word(t, i) & KEY_MASK) | ((uint64_t)v << 56), __ATOMIC_RELAXED);
    else __atomic_store_n(&t->vals[i], (uint8_t)v, __ATOMIC_RELAXED);
}

static inline size_t slot_bytes(const Table *t) { return t->embedded ? 8 : 9; }

static inline size_t table_bytes(const Table *t) { return (t->mask + 1) * slot_bytes(t); }

static inline size_t hash64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k;
}

/* table.c */
void *table_alloc(size_t bytes);
void table_release(void *p, size_t bytes);
int table_init(Table *t, size_t min_slots, size_t max_bytes, int key_bits);
void table_free(Table *t);
int table_grow(Table *t, size_t max_bytes);
int table_grows_in_place(const Table *t, size_t max_bytes);
/* A growth in place in steps, for threads to share (see table.c). */
typedef struct Growth Growth;
Growth *table_growth_begin(Table *t);
int table_growth_step(Growth *g, size_t *lo, size_t *hi);
void table_growth_move(Table *t, Growth *g, size_t lo, size_t hi, int shared);
void table_growth_end(Table *t, Growth *g);
void table_populate(const Table *t, size_t part, size_t parts);
long table_selftest(size_t n, size_t crowd, int key_bits, int threads, uint64_t seed, size_t *slots, int *in_place);

static inline size_t table_home(const Table *t, uint64_t key) { return hash64(key) >> t->shift; }

static inline void table_prefetch(const Table *t, uint64_t key) {
    __builtin_prefetch(&t->keys[table_home(t, key)], 1, 0);
}

/* Slot of key, inserting it (value 0) if new; *fresh tells which.  -1 when full. */
static inline ptrdiff_t table_slot(Table *t, uint64_t key, size_t max_bytes, int *fresh) {
    size_t home = table_home(t, key), i = home;
    for (;;) {
        uint64_t k = slot_key(t, i);
        if (k == key) { *fresh = 0; return (ptrdiff_t)i; }
        if (!k) break;
        i = (i + 1) & t->mask;
    }
    if (t->count >= t->limit) {
        if (table_grow(t, max_bytes) == 0) return table_slot(t, key, max_bytes, fresh);
        if (t->count >= t->full) return -1;
    }
    __atomic_store_n(&t->keys[i], key, __ATOMIC_RELAXED);
    if (t->vals) __atomic_store_n(&t->vals[i], (uint8_t)0, __ATOMIC_RELAXED);
    t->count++;
    if (((i - home) & t->mask) > t->max_disp) t->max_disp = (i - home) & t->mask;
    *fresh = 1;
    return (ptrdiff_t)i;
}

static inline ptrdiff_t table_find(const Table *t, uint64_t key) {
    size_t i = table_home(t, key);
    for (;;) {
        uint64_t k = slot_key(t, i);
        if (k == key) return (ptrdiff_t)i;
        if (!k) return -1;
        i = (i + 1) & t->mask;
    }
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

/* -------------------------------------------------- breadth-first search */
typedef struct {
    uint64_t *keys;
    size_t len, cap;
} KeyList;

static inline void occupy(const Setup *b, const Pos *p, uint8_t *occ, int on) {
    for (int r = 0; r < b->nrobots; r++) occ[p->pos[r]] = (uint8_t)on;
}

/* One legal move from a position: the mover, its direction, where it starts
 * and stops, and its ricochet status afterwards (0 when not tracked). */
typedef struct {
    uint8_t r, d, status;
    int16_t from, end;
} Child;

/* -------------------------------------------------------------- layouts */

/* A board compiled once and shared by many searches (a PyCapsule). */
typedef struct {
    int width, height, ncells;
    int16_t step[4][MAX_CELLS];
    uint8_t barrier[MAX_CELLS];
    int has_barriers, has_openings, loops_possible;
    int barrier_colours;          /* the colours (bit colour) of its barriers */
    int lines;                    /* see Setup */
    int16_t stop[4][MAX_CELLS];
    int16_t column[MAX_CELLS], row[MAX_CELLS];
    uint8_t **lb_cache;           /* [target * 5 + colour]: bounds per target and robot colour,
                                     filled on first use, under the GIL */
    uint64_t **concern_cache;     /* [target * 5 + colour]: Setup's concern sets, likewise */
    uint64_t *rays;               /* Setup's rays, likewise */
    Stops **stops_cache;          /* [target * 5 + colour]: Setup's stops, likewise */
    size_t bytes;                 /* what the layout holds, its caches included (under the GIL) */
} Layout;

/* relaxed.c: the finisher's relaxed finish. */
/* The stops of b's one finisher into s; 0, or -1 when out of memory. */
int stops_build(Stops *s, const Setup *b);
void stops_free(Stops *s);
/* A thread's memo of relaxed finishes, of 2^slot_bits slots; NULL when s is
 * (no relaxed finish is tested) or memory ran out (the finishes are then
 * searched each time).  Freed with free(). */
typedef struct RelaxedMemo RelaxedMemo;
RelaxedMemo *relaxed_memo_new(const Stops *s, int slot_bits);
/* Whether no relaxed path of p's one finisher, its bound h, finishes within
 * h + 1 (occ marks p's robots; read, when not NULL, is set to the cells whose
 * occupancy the search read). */
int relaxed_fails(const Setup *b, const Stops *s, RelaxedMemo *memo, uint8_t *occ, const Pos *p, int h,
                  uint64_t *read);

/* ---------------------------------------------------------- one search */
typedef struct {
    int nrobots;
    int cells[MAX_ROBOTS], colours[MAX_ROBOTS];   /* in the caller's order */
    int target;
    int candidates;        /* robots of the target's colour (all, for the vortex) */
    int rules;             /* RULE_* bits */
    int allow_sorting;
    int skip_bounds;       /* reach tables need no lower bounds */
} Request;

/* A set-up for one request: the start position and the caller's robot order. */
typedef struct {
    Setup board;
    Pos start;
    int perm[MAX_ROBOTS];          /* internal robot -> caller's robot */
    int reach_dir[MAX_ROBOTS];     /* caller's order: direction reaching the target in one move, or -1 */
    int eligible_ext;              /* caller's order */
} Prepared;

/* table.c */
int keys_push(KeyList *l, uint64_t k, size_t *bytes, size_t budget);

/* setup.c */
void setup_from_layout(Setup *b, const Layout *L, int nrobots);
int traces_loop(const Setup *b, int colour1, int start, int d);
int setup_search(Layout *L, const Request *q, Prepared *S);
int solo_length(const Setup *b, uint8_t *occ, const Pos *p, int limit);

/* ida.c */
int run_ida(const Setup *b, const Pos *start, Limits *lim, uint64_t node_cap, Result *res);

/* astar.c */
int children(const Setup *b, const Pos *p, uint8_t *occ, Child *out);
void run_astar(const Setup *b, const Pos *start, Limits *lim, Result *res);

/* reach.c */
void run_reach(const Setup *b, const Pos *start, Limits *lim, uint8_t *out, int *depth_done, Result *res);

/* facts.c */
typedef struct {
    uint64_t solutions, nodes;
    int capped;
    int fewest, fewest_mask;       /* fewest robots any optimal solution moves, and which (internal order) */
    int fewest_switches;
} FactsSummary;
typedef struct {
    uint8_t *moves;                /* limit x length moves, robot * 4 + direction (internal robot order) */
    int limit, listed;
    uint8_t path[MAX_DEPTH];
} SolutionList;
int count_facts(const Setup *b, const Pos *start, int length, uint64_t cap, Limits *lim, FactsSummary *out,
                SolutionList *list);

#endif
