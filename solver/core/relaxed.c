#include "core.h"

/* The finisher's relaxed finish: a bound of h + 2 for some positions
 * bounded by h + 1 (h the finisher's lone-robot bound), which A* tests at a
 * pop (astar.c) and IDA* at a node with one move to spare (ida.c).  A
 * solution in h + 1 moves or fewer moves the one finisher at least h times,
 * so helpers at most once.  Relax the finisher's slides: let them pass
 * through robots and stop on any cell but a barrier's, for free where the
 * cell beyond is a wall or a helper's cell now, else against a blocker; and
 * let a path cost its moves plus the distinct cells it needs a blocker on.
 * The finisher's path in a real solution is such a path: each of its stops
 * is against a wall or a robot, and a robot on a cell that no helper holds
 * now got there by a helper's move of its own, one cell a move.  So that
 * path costs at most the solution's length, and where no relaxed path costs
 * h + 1 or less the position needs h + 2 moves.  Within h + 1 a path either
 * makes h moves that each lower the bound, against one blocker cell at most
 * (used once or more), or h + 1 moves, one of which keeps the bound,
 * against none: the stops kept (Stops, made below) are those two kinds of
 * step.  The lone-robot bound lets a slide stop on any cell it crosses, so
 * it drops by at most one a step here too.
 *
 * Searched in full, the test costs about a third of an expansion, and most
 * positions it sends on are expanded a layer later all the same.  But the
 * search with no helper on the board settles most positions at the cost of
 * a table look-up (relaxed_alone), and so it pays with four robots as well
 * as five (see stops_of in setup.c). */

/* Whether the finisher r, on `cell` with ricochet status `status`, has a
 * relaxed path (above) to the goal that costs at most `left` (at most one
 * more than its bound there), `blk` being the blocker cell it has counted
 * (-1: none).  occ marks the helpers. */
static int relaxed_finish(const Setup *b, const Stops *s, const uint8_t *occ, int r, int cell, int status,
                          int left, int blk, uint64_t *read) {
    int tracked = (b->tracked >> r) & 1;
    int spare = left > robot_bound_at(b, r, cell, status);
    for (int d = 0; d < 4; d++) {
        const Stop *st = s->stops + s->start[cell * 4 + d];
        int nlow = s->nlow[cell * 4 + d], n = spare ? (int)(s->start[cell * 4 + d + 1] - s->start[cell * 4 + d]) : nlow;
        for (int i = 0; i < n; i++) {
            int beyond = st[i].beyond, cost = 1, nblk = blk;
            if (read && beyond >= 0) read[beyond >> 6] |= 1ULL << (beyond & 63);
            if (beyond >= 0 && !occ[beyond] && beyond != blk) {
                if (blk >= 0 || !spare || i >= nlow) continue; /* a second blocker, or no room for one */
                cost = 2;
                nblk = beyond;
            }
            int x = st[i].cell, sx = tracked ? next_status(status, d, st[i].deflected) : 0;
            int need = st[i].bound == 0 && b->ricochet && sx != TURNED ? 2 : st[i].bound;
            if (need > left - cost) continue;
            if (need == 0 || relaxed_finish(b, s, occ, r, x, sx, left - cost, nblk, read)) return 1;
        }
    }
    return 0;
}

/* Where p's finisher r stands, its cell and status, as the relaxed finish's
 * tables (Stops) and memo (below) index it. */
static inline size_t finisher_at(const Pos *p, int r) { return (size_t)p->pos[r] * 4 + p->status[r]; }

/* The relaxed finish (within its bound + 1) of p's finisher r, on a board
 * with no helper: NULL when it succeeds, and then it
 * succeeds with any helpers (they only make stops free); else the cells whose
 * occupancy it read, and a position with no helper on any of them fails just
 * the same, reading just those.  Made on first use and kept with the stops,
 * by whichever search asks first: that search claims the entry, fills it and
 * marks it made (release); a search that finds it being made works it out
 * for itself into `own`.  Most positions are settled here: on the 24- and
 * 25-move puzzles half finish alone and a third have no helper on a cell
 * read, so the search with the helpers runs for one in seven. */
static const uint64_t *relaxed_alone(const Setup *b, const Stops *s, const Pos *p, int r, uint64_t *own) {
    int rule = b->ricochet != 0, cell = p->pos[r], status = p->status[r];
    size_t i = finisher_at(p, r);
    uint8_t *mark = &s->alone[rule][i];
    uint64_t *read = s->alone_read[rule] + i * (size_t)s->words;
    uint8_t seen = __atomic_load_n(mark, __ATOMIC_ACQUIRE);
    if (seen == ALONE_FINISHES) return NULL;
    if (seen == ALONE_FAILS) return read;
    uint8_t unknown = ALONE_UNKNOWN;
    int mine = seen == ALONE_UNKNOWN &&
               __atomic_compare_exchange_n(mark, &unknown, ALONE_BEING_MADE, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    uint64_t *into = mine ? read : own;
    static const uint8_t empty[MAX_CELLS];
    memset(into, 0, (size_t)s->words * sizeof *into);
    int finishes = relaxed_finish(b, s, empty, r, cell, status, robot_bound_at(b, r, cell, status) + 1, -1, into);
    if (mine) __atomic_store_n(mark, (uint8_t)(finishes ? ALONE_FINISHES : ALONE_FAILS), __ATOMIC_RELEASE);
    return finishes ? NULL : into;
}

/* The memo: per finisher cell and status, and the cells of the helpers
 * that stand where the finish with no helper read (its key), whether the
 * finish with just those helpers fails, and the cells it read.  Direct-mapped,
 * one per thread.  On the 21-move 5-robot puzzle 1.3 million searches with
 * helpers come down to 4,300 keys. */
struct RelaxedMemo {
    int shift;                   /* a key's slot: its hash's top bits */
    uint64_t *key;               /* [slots]; 0: empty */
    uint8_t *fails;              /* [slots] */
    uint64_t *read;              /* [slot * words] */
};

RelaxedMemo *relaxed_memo_new(const Stops *s, int slot_bits) {
    if (!s) return NULL;
    size_t slots = (size_t)1 << slot_bits;
    RelaxedMemo *m = malloc(sizeof *m + slots * (sizeof(uint64_t) * (1 + (size_t)s->words) + 1));
    if (!m) return NULL;
    m->shift = 64 - slot_bits;
    m->key = (uint64_t *)(m + 1);
    memset(m->key, 0, slots * sizeof *m->key); /* a slot's reads and verdict are written with its key */
    m->read = m->key + slots;
    m->fails = (uint8_t *)(m->read + slots * (size_t)s->words);
    return m;
}

/* p's relaxed finish, from the finish with only its helpers on cells the
 * finish with none read (`alone`; occ marks p's robots): if that succeeds, so
 * does p's, more helpers only freeing more stops; if it fails and no other
 * helper of p stands on a cell it read, p's fails the same way, reading
 * those cells.  Else -1. */
static int memo_verdict(const Setup *b, const Stops *s, RelaxedMemo *m, uint8_t *occ, const Pos *p, int h,
                        const uint64_t *alone, uint64_t *read) {
    int r = b->single_finisher, cell = p->pos[r], cells[MAX_ROBOTS], n = 0, words = s->words;
    unsigned in = 0;
    for (int q = 0; q < b->nrobots; q++) {
        if (q == r || !(alone[p->pos[q] >> 6] >> (p->pos[q] & 63) & 1)) continue;
        in |= 1u << q;
        int x = p->pos[q], i = n++;
        for (; i > 0 && cells[i - 1] > x; i--) cells[i] = cells[i - 1];
        cells[i] = x;
    }
    /* The cells' count at the bottom: keys of different counts never meet
     * (at most 13 + 4 * 10 + 3 bits). */
    uint64_t key = finisher_at(p, r) + 1;
    for (int i = 0; i < n; i++) key = key << b->cell_bits | (uint64_t)cells[i];
    key = key << 3 | (uint64_t)n;
    size_t slot = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> m->shift);
    uint64_t *seen = m->read + slot * (size_t)words;
    if (m->key[slot] != key) {
        for (int q = 0; q < b->nrobots; q++) if (!((in >> q) & 1)) occ[p->pos[q]] = 0;
        memset(seen, 0, (size_t)words * sizeof *seen);
        m->fails[slot] = !relaxed_finish(b, s, occ, r, cell, p->status[r], h + 1, -1, seen);
        m->key[slot] = key;
        for (int q = 0; q < b->nrobots; q++) if (!((in >> q) & 1)) occ[p->pos[q]] = 1;
    }
    if (!m->fails[slot]) return 0;
    for (int q = 0; q < b->nrobots; q++)
        if (q != r && !((in >> q) & 1) && (seen[p->pos[q] >> 6] >> (p->pos[q] & 63) & 1)) return -1;
    if (read) memcpy(read, seen, (size_t)words * sizeof *read);
    return 1;
}

/* Whether no relaxed path of p's one finisher, its bound h, finishes within
 * h + 1 (occ marks p's robots; read, when not NULL, is set to the cells whose
 * occupancy the search read): from the finish with no helper when it
 * settles p, else from the thread's memo (when it has one) when that does,
 * else searched. */
int relaxed_fails(const Setup *b, const Stops *s, RelaxedMemo *memo, uint8_t *occ, const Pos *p, int h,
                  uint64_t *read) {
    int r = b->single_finisher, cell = p->pos[r], words = s->words;
    uint64_t own[MAX_CELLS / 64];
    const uint64_t *alone = relaxed_alone(b, s, p, r, own);
    if (!alone) return 0;
    int helper_read = 0;
    for (int q = 0; q < b->nrobots; q++)
        helper_read |= q != r && (int)(alone[p->pos[q] >> 6] >> (p->pos[q] & 63) & 1);
    if (!helper_read) {
        if (read) memcpy(read, alone, (size_t)words * sizeof *read);
        return 1;
    }
    int verdict = memo ? memo_verdict(b, s, memo, occ, p, h, alone, read) : -1;
    if (verdict >= 0) return verdict;
    if (read) memset(read, 0, (size_t)words * sizeof *read);
    occ[cell] = 0;
    int may = relaxed_finish(b, s, occ, r, cell, p->status[r], h + 1, -1, read);
    occ[cell] = 1;
    return !may;
}

/* ------------------------------------------------------------ the stops */

void stops_free(Stops *s) {
    if (!s) return;
    free(s->start);
    free(s->nlow);
    free(s->stops);
    for (int rule = 0; rule < 2; rule++) {
        free(s->alone[rule]);
        free(s->alone_read[rule]);
    }
    free(s);
}

/* The stops of robot r's slide from cell c in direction d whose bound is
 * `want`, into out (when not NULL); how many. */
static int slide_stops(const Setup *b, int r, int c, int d, int want, Stop *out) {
    const uint8_t *lb = b->lb[r];
    int colour1 = b->colour[r] + 1, x = c, dd = d, deflected = 0, n = 0;
    for (int steps = 0; steps < 4 * b->ncells; steps++) {
        int next = b->step[dd][x];
        if (next < 0) break;
        x = next;
        uint8_t bar = b->barrier[x];
        if (bar) {
            if ((bar & 7) != colour1) { dd = DEFLECT[bar >> 3][dd]; deflected = 1; }
            continue; /* no stop on a barrier's cell */
        }
        if (x == c || lb[x] != want) continue;
        if (out) out[n] = (Stop){(int16_t)x, b->step[dd][x], (uint8_t)deflected, (uint8_t)want};
        n++;
    }
    return n;
}

/* The finisher's stops (see Stops) into s; 0, or -1 when out of memory. */
int stops_build(Stops *s, const Setup *b) {
    int r = b->single_finisher, cells = b->ncells;
    const uint8_t *lb = b->lb[r];
    s->start = calloc((size_t)cells * 4 + 1, sizeof *s->start);
    s->nlow = calloc((size_t)cells * 4, 1);
    s->words = (cells + 63) / 64;
    for (int rule = 0; rule < 2; rule++) {
        s->alone[rule] = calloc((size_t)cells * 4, 1);
        s->alone_read[rule] = calloc((size_t)cells * 4 * (size_t)s->words, sizeof(uint64_t));
        if (!s->alone[rule] || !s->alone_read[rule]) return -1;
    }
    if (!s->start || !s->nlow) return -1;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t total = 0;
        for (int c = 0; c < cells; c++) {
            /* One lower, then the same; at the target, as its bound is 2 until the finisher has turned. */
            int lower = c == b->target ? 1 : lb[c] - 1, none = lb[c] == 255 || b->barrier[c];
            for (int d = 0; d < 4; d++) {
                Stop *out = pass ? s->stops + total : NULL;
                int low = none ? 0 : slide_stops(b, r, c, d, lower, out);
                int level = none ? 0 : slide_stops(b, r, c, d, lower + 1, out ? out + low : NULL);
                if (low > 255) return -1;
                s->start[c * 4 + d] = total;
                s->nlow[c * 4 + d] = (uint8_t)low;
                total += (uint32_t)(low + level);
            }
        }
        s->start[cells * 4] = total;
        if (!pass && !(s->stops = malloc(((size_t)total + 1) * sizeof *s->stops))) return -1;
    }
    return 0;
}
