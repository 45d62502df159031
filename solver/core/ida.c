/* Iterative-deepening A* with a transposition table: most puzzles. */
#include "core.h"

/* --------------------------------------------------- iterative deepening */
typedef struct {
    const Setup *b;
    Limits *lim;
    Table tt;
    Pos cur;
    uint8_t occ[MAX_CELLS];
    int bits;                    /* the robots' cells are kept as bits too (bits_fit) */
    RobotBits m;
    uint8_t path_r[MAX_DEPTH + 1], path_d[MAX_DEPTH + 1];
    uint64_t nodes, node_cap;
    uint64_t cutoffs;            /* nodes the bound stopped (dead ends excluded) */
    int found;
    RelaxedMemo *memo;           /* the relaxed finish's (relaxed.c), made on first use */
} Ida;

static int ida_dfs(Ida *s, int g, int bound, int h_here, int prev_r, int prev_s, int prev_e, int prev_d);

/* The slots of IDA*'s memo of relaxed finishes, as a power of two (10 KiB on
 * a 16x16 board). */
#define IDA_MEMO_BITS 8

/* Robot r's slide from `start` (its cell, clear in occ) in direction d. */
static inline __attribute__((always_inline)) int ida_slide(Ida *s, int r, int start, int d, int *deflected) {
    const Setup *b = s->b;
    if (s->bits) {
        int end = b->stop[d][start];
        if (end != CROSSES_BARRIER) { *deflected = 0; return slide_bits(b, &s->m, start, d, end); }
    }
    return slide_from(b, &s->cur, s->occ, r, start, d, deflected);
}

/* Robot r's move from `start` to `end` (or back, swapped) in occ and the bits. */
static inline void ida_place(Ida *s, int start, int end) {
    s->occ[end] = 1;
    if (s->bits) bits_move(s->b, &s->m, start, end);
}
static inline void ida_unplace(Ida *s, int start, int end) {
    s->occ[end] = 0;
    if (s->bits) bits_move(s->b, &s->m, end, start);
}

/* A tight position: one possible finisher r, and exactly its lone-robot bound
 * k of moves left.  No helper may move there (its move leaves the bound where
 * it is), and each of r's moves must lower the bound by one: a narrow search,
 * done straight, without keys or the memo, whose probes cost more than the
 * few slides they would save.  1: found (path in s->path_*), else 0. */
static int ida_tight(Ida *s, int g, int r, int k) {
    const Setup *b = s->b;
    int start = s->cur.pos[r], res = 0;
    uint8_t status = s->cur.status[r];
    int dirs = b->lowering ? b->lowering[start] : 15;
    s->occ[start] = 0;
    for (int d = 0; d < 4 && !res; d++) {
        if (!((dirs >> d) & 1)) continue;
        int deflected;
        int end = ida_slide(s, r, start, d, &deflected);
        if (end < 0) continue;
        s->nodes++;
        s->cur.pos[r] = (int16_t)end;
        s->cur.status[r] = (uint8_t)next_status(status, d, deflected);
        s->path_r[g] = (uint8_t)r;
        s->path_d[g] = (uint8_t)d;
        if (is_goal(b, &s->cur, r)) { s->found = g + 1; res = 1; }
        else if (k > 1 && robot_bound(b, &s->cur, r) == k - 1) {
            ida_place(s, start, end);
            res = ida_tight(s, g + 1, r, k - 1);
            ida_unplace(s, start, end);
        }
    }
    s->cur.pos[r] = (int16_t)start;
    s->cur.status[r] = status;
    s->occ[start] = 1;
    return res;
}

/* Whether helper r's move from start to end can be passed over.  It leaves
 * the finisher no move or one move to spare (child_rem - h_here).  With none,
 * a solution moves the finisher alone along bound-lowering slides; with one,
 * those slides and besides either one slide that keeps the bound or one more
 * helper move.  A move that touches none of the cells those could use leaves
 * every such solution as it was before the move, and the position before it
 * has none: that one would be a move shorter, which an earlier iteration
 * would have found.  The cells: with none to spare, those of concern; with
 * one, those of concern with a finisher move to spare, the slides of every
 * other helper (this move may stop or free one), and this robot's next slides
 * must not reach a cell of concern. */
static inline int helper_idle(const Ida *s, int h_here, int child_rem, int r, int start, int end) {
    const Setup *b = s->b;
    int fin = b->single_finisher, spare = child_rem - h_here;
    if (spare > 1 || !spares_tight_finish(b, &s->cur, start, end)) return 0;
    if (spare == 0) return 1;
    int fc = s->cur.pos[fin];
    if (in_set(b, b->concern_spare, fc, start) || in_set(b, b->concern_spare, fc, end)) return 0;
    for (int o = 0; o < b->nrobots; o++) {
        if (o == r || o == fin) continue;
        if (in_set(b, b->rays, s->cur.pos[o], start) || in_set(b, b->rays, s->cur.pos[o], end)) return 0;
    }
    const uint64_t *ray = b->rays + (size_t)end * (size_t)b->concern_words;
    const uint64_t *con = b->concern + (size_t)fc * (size_t)b->concern_words;
    for (int w = 0; w < b->concern_words; w++)
        if (ray[w] & con[w]) return 0;
    return 1;
}

/* One child of the deepening search: goal test, bound test, memo, recursion.
 * The mover r already stands on `end` in s->cur (its cell `start` is clear). */
static inline int ida_child(Ida *s, int g, int bound, int r, int start, int end, int d, int h) {
    const Setup *b = s->b;
    s->nodes++;
    s->path_r[g] = (uint8_t)r;
    s->path_d[g] = (uint8_t)d;
    if (is_goal(b, &s->cur, r)) { s->found = g + 1; return 1; }
    int rem = bound - g - 1;
    if (rem == 0 || (h > rem && h != 255)) s->cutoffs++;
    if (rem == 0 || h > rem) return 0;
    if (h == rem && b->single_finisher >= 0) {
        ida_place(s, start, end);
        int res = ida_tight(s, g + 1, b->single_finisher, rem);
        ida_unplace(s, start, end);
        if (!res) s->cutoffs++; /* a bound one higher leaves its helpers room */
        return res;
    }
    if (h + 1 == rem && b->stops) {
        /* A move to spare: none, if the finisher's relaxed finish fails.  The
         * memo is small, and made on first use: most searches are short. */
        if (!s->memo) s->memo = relaxed_memo_new(b->stops, IDA_MEMO_BITS);
        s->occ[end] = 1;
        int fails = relaxed_fails(b, b->stops, s->memo, s->occ, &s->cur, h, NULL);
        s->occ[end] = 0;
        if (fails) { s->cutoffs++; return 0; }
    }
    uint64_t key = make_key(b, &s->cur);
    int fresh;
    ptrdiff_t slot = table_slot(&s->tt, key, s->lim->state_budget, &fresh);
    if (slot >= 0) { /* with no memo left the search goes on unmemoised */
        if (!fresh && get_val(&s->tt, (size_t)slot) >= rem) return 0;
        set_val(&s->tt, (size_t)slot, rem);
    }
    ida_place(s, start, end);
    int res = ida_dfs(s, g + 1, bound, h, r, start, end, d);
    ida_unplace(s, start, end);
    return res;
}

/* 1: found (path in s->path_*), 0: not within bound, -1: a limit stopped it.
 * h_here is the lower bound of the current position. */
static int ida_dfs(Ida *s, int g, int bound, int h_here, int prev_r, int prev_s, int prev_e, int prev_d) {
    const Setup *b = s->b;
    if (out_of_time(s->lim)) return -1;
    if (s->nodes > s->node_cap) return -1;
    int n = b->nrobots;
    int child_rem = bound - g - 1;
    int prev_straight = prev_r >= 0 && slides_straight(b, prev_s, prev_d); /* the last move may commute */
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
        /* Its moves all commute with the last one and come first: each is searched the other way round. */
        if (r < prev_r && prev_straight && clear_of(b, prev_s, prev_e, prev_d, start)) continue;
        uint8_t old_status = s->cur.status[r];
        s->occ[start] = 0;
        int res = 0;
        if (eligible) {
            /* Moves that bring the bound down first: the last iteration meets
             * its solution sooner. */
            int ends[4], hs[4];
            uint8_t sts[4];
#pragma GCC unroll 4
            for (int d = 0; d < 4; d++) { /* unrolled: each slide is its direction's alone */
                int deflected;
                ends[d] = ida_slide(s, r, start, d, &deflected);
                if (ends[d] < 0) continue;
                if (r < prev_r && prev_straight && slides_straight(b, start, d) &&
                    commute(b, prev_s, prev_e, prev_d, start, ends[d], d)) {
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
                                      b->column[start] != b->column[b->target] &&
                                      b->row[start] != b->row[b->target];
#pragma GCC unroll 4
            for (int d = 0; d < 4 && !res; d++) {
                int deflected;
                int end = ida_slide(s, r, start, d, &deflected);
                if (end < 0) continue;
                if (must_stop_by_target && !adjacent(b, end, b->target)) continue;
                if (helper_idle(s, h_here, child_rem, r, start, end)) continue;
                if (r < prev_r && prev_straight && slides_straight(b, start, d) &&
                    commute(b, prev_s, prev_e, prev_d, start, end, d))
                    continue;
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

#define HANDOVER_BOUND 8
#define HANDOVER_NODES 2000

/* Returns 1 when it settled the answer in *res, 0 when it gave up (node cap)
 * and A* should settle it instead. */
int run_ida(const Setup *b, const Pos *start, Limits *lim, uint64_t node_cap, Result *res) {
    Ida *s = malloc(sizeof(Ida)); /* cleared where it is read before it is written: */
    if (!s) return 0;
    memset(s, 0, offsetof(Ida, occ));
    memset(s->occ, 0, (size_t)b->ncells);
    memset(&s->m, 0, sizeof s->m);
    s->nodes = s->cutoffs = 0;
    s->found = 0;
    s->memo = NULL;
    s->b = b;
    s->lim = lim;
    s->cur = *start;
    s->node_cap = node_cap;
    size_t budget = lim->state_budget / 4; /* leave room for a BFS after us */
    if (table_init(&s->tt, 1 << 8, budget, b->key_bits) != 0) { free(s); return 0; }
    for (int r = 0; r < b->nrobots; r++) s->occ[start->pos[r]] = 1;
    s->bits = bits_fit(b);
    if (s->bits) robot_bits(b, start, &s->m, 1); /* s->m starts clear (calloc) */
    int h = heuristic(b, start);
    if (h == 255) { /* no finisher can ever reach the target */
        res->status = ST_UNSOLVABLE;
        table_free(&s->tt);
        free(s);
        return 1;
    }
    int bound = h < 1 ? 1 : h;
    int settled = 0;
    uint64_t last = 0;            /* nodes of the last failed iteration */
    Limits local = *lim;
    local.state_budget = budget;
    s->lim = &local;
    for (; bound <= lim->max_depth; bound++) {
        s->cutoffs = 0;
        uint64_t before = s->nodes;
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
        /* The next iteration costs about this one times the last growth: when
         * that would pass the cap, A* takes over now rather than after it. */
        uint64_t spent = s->nodes - before;
        if (last > 0 && s->nodes + spent * spent / last > node_cap) break;
        /* With a cap (strategy auto), A* also takes over a puzzle of 8 moves
         * or more that IDA* has not settled cheaply: it expands each state
         * once, where IDA*'s iterations repeat theirs (README: "Sooner to A*, again"). */
        if (node_cap != UINT64_MAX && bound + 1 >= HANDOVER_BOUND && s->nodes > HANDOVER_NODES) break;
        last = spent;
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
    free(s->memo);
    free(s);
    return settled;
}
