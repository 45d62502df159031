/* The retrograde analysis: every position of a board and goal at once. */
#ifndef RICOCHET_RETRO_H
#define RICOCHET_RETRO_H

#include "core.h"

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
    Setup board;                  /* for forward slides (slide()) */
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

/* Calls visit(ctx, idx, length) for every position of at least min_length
 * moves whose robots all stand on distinct cells where `start` allows, in
 * index order (the first robot's cell varies fastest). */
typedef void (*RetroVisit)(void *ctx, uint64_t idx, int length);

static inline uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* retro.c */
void *retro_expand(void *arg);
void *retro_count(void *arg);
void retro_parallel(Retro *R, int threads, int layer, void *(*fn)(void *), RetroSlice *slices);
int retro_descend(const Retro *R, uint64_t idx, int8_t *robot, int8_t *dir);
int retro_prepare(Retro *R, Layout *L, PyObject *colours, int target, int threads, const char *free_cells,
                         Py_ssize_t free_len, Py_ssize_t state_budget);
int retro_run(Retro *R, int target, int candidates, int threads, double time_budget, RetroSlice *slices,
                     uint64_t hist[256], int *layers);
int cmp_u64(const void *a, const void *b);
void retro_each_start(const Retro *R, const uint8_t *start, int min_length, RetroVisit visit, void *ctx);

#endif
