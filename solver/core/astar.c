/* A* over a hash set with bucketed open lists: deep puzzles. */
#include "astar.h"

/* Whether robot r, the others standing still, finishes in exactly k moves
 * (k = its lone-robot bound, so each move must lower that bound by one).  The
 * same question as solo_length() asks, but only along moves that lower the
 * bound: on A*'s hot path this takes a 20-move search from 6.4 s to 4.2 s. */
static int finishes_alone(const Setup *b, uint8_t *occ, Pos *p, int r, int k) {
    int start = p->pos[r], ok = 0;
    uint8_t status = p->status[r];
    int dirs = b->lowering ? b->lowering[start] : 15; /* r is the one finisher (see sharpened) */
    occ[start] = 0;
    for (int d = 0; d < 4 && !ok; d++) {
        if (!((dirs >> d) & 1)) continue;
        int deflected;
        int end = slide_from(b, p, occ, r, start, d, &deflected);
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
static int sharpened(const Setup *b, uint8_t *occ, Pos *p, int h) {
    if (h == 255 || h == 0 || b->single_finisher < 0) return h;
    return finishes_alone(b, occ, p, b->single_finisher, h) ? h : h + 1;
}

/* The layer for p's child by move mv, reached in g + 1 moves with bound h and
 * put in layer cf: a new state (cf = g + 1 + h) has its bound sharpened now,
 * while its parent's robots are at hand (occ marks them), rather than when it
 * is popped, which would cost a second look-up and a second push; *mark is
 * then SHARPENED.  `settled`: p's finisher is known not to finish alone (its
 * bound was sharpened to h + 1); a helper's move that touches no cell of
 * concern leaves that so, and the child's bound is h + 1 at once. */
static int sharpened_layer(const Setup *b, const Pos *p, uint8_t *occ, const Child *mv, int g, int cf, int h,
                           int settled, uint64_t *mark) {
    if (b->single_finisher < 0 || cf != g + 1 + h) return cf;
    *mark = SHARPENED;
    if (settled && !b->exact && mv->r != b->single_finisher && spares_tight_finish(b, p, mv->from, mv->end))
        return g + 2 + h;
    Pos q = *p;
    q.pos[mv->r] = mv->end;
    q.status[mv->r] = mv->status;
    occ[mv->from] = 0;
    occ[mv->end] = 1;
    int sharp = sharpened(b, occ, &q, h);
    occ[mv->end] = 0;
    occ[mv->from] = 1;
    return g + 1 + sharp;
}

/* A state's record (see astar.h), decoded: its mover went from x1 to y1 in
 * direction d1.  any: the state has one. */
typedef struct {
    int any, x1, y1, d1, straight, order1;
} Record;

static void record_decode(const Astar *A, uint64_t entry, Record *rc) {
    uint64_t rec = A->records ? entry >> A->rec_shift & ((1ULL << (3 + 2 * A->b->cell_bits)) - 1) : 0;
    int cb = A->b->cell_bits;
    rc->any = rec != 0;
    rc->d1 = (int)(rec >> 1 & 3);
    rc->x1 = (int)(rec >> 3 & ((1u << cb) - 1));
    rc->y1 = (int)(rec >> (3 + cb));
    rc->straight = rc->any && slides_straight(A->b, rc->x1, rc->d1);
    rc->order1 = rc->x1 * 4 + rc->d1;
}

/* Whether robot r's move from `from` to `end` in direction d is not searched
 * from a state with record rc: it commutes with the record and comes first,
 * or it takes the record's untracked mover straight back (its parent's parent). */
static inline int record_skips(const Setup *b, const Record *rc, int r, int from, int end, int d) {
    if (from == rc->y1) return end == rc->x1 && !((b->tracked >> r) & 1);
    return rc->straight && from * 4 + d < rc->order1 && slides_straight(b, from, d) &&
           commute(b, rc->x1, rc->y1, rc->d1, from, end, d);
}

/* Robot r's move in direction d from `from` to `end`, from position p. */
static inline Child move_of(const Setup *b, const Pos *p, int r, int d, int from, int end, int deflected) {
    uint8_t status = ((b->tracked >> r) & 1) ? (uint8_t)next_status(p->status[r], d, deflected) : 0;
    return (Child){(uint8_t)r, (uint8_t)d, status, (int16_t)from, (int16_t)end};
}

/* The moves from p (occ marks its robots) where the robots' bits fit
 * (bits_fit), those rc skips left out: a lone robot's stop, cut short by the
 * nearest robot in the way; slides across a barrier the long way. */
static int children_bits(const Setup *b, const Pos *p, uint8_t *occ, const Record *rc, Child *out) {
    RobotBits m;
    robot_bits(b, p, &m, 0);
    robot_bits(b, p, &m, 1);
    int n = 0;
    for (int r = 0; r < b->nrobots; r++) {
        int from = p->pos[r];
        /* Every move of a robot before the record's start in the order, clear of it, is skipped. */
        if (rc->straight && from < rc->x1 && clear_of(b, rc->x1, rc->y1, rc->d1, from)) continue;
#pragma GCC unroll 4
        for (int d = 0; d < 4; d++) { /* unrolled: each slide_bits() is its direction's alone */
            int deflected = 0, end = b->stop[d][from];
            if (end == CROSSES_BARRIER) {
                occ[from] = 0;
                end = slide(b, occ, r, from, d, &deflected);
                occ[from] = 1;
            } else {
                end = slide_bits(b, &m, from, d, end);
            }
            if (end < 0 || (rc->any && record_skips(b, rc, r, from, end, d))) continue;
            out[n++] = move_of(b, p, r, d, from, end, deflected);
        }
    }
    return n;
}

/* Every legal move from p; occ must mark p's robots (it is restored). */
int children(const Setup *b, const Pos *p, uint8_t *occ, Child *out) {
    static const Record none = {0};
    if (bits_fit(b)) return children_bits(b, p, occ, &none, out);
    int n = 0;
    for (int r = 0; r < b->nrobots; r++) {
        int from = p->pos[r];
        occ[from] = 0;
        for (int d = 0; d < 4; d++) {
            int deflected;
            int end = slide_from(b, p, occ, r, from, d, &deflected);
            if (end < 0) continue;
            out[n++] = move_of(b, p, r, d, from, end, deflected);
        }
        occ[from] = 1;
    }
    return n;
}

/* Whether robot r reached s from cell c by a slide in direction d, from a
 * state stored at depth k - 1; if so its key in *key.  occ marks s's robots
 * but r. */
static int parent_at(const Setup *b, const Table *seen, const Pos *s, int r, int c, int d, int deflected, int k,
                     uint64_t *key) {
    int tracked = (b->tracked >> r) & 1;
    Pos q = *s;
    q.pos[r] = (int16_t)c;
    for (int st = 0; st < (tracked ? 4 : 1); st++) {
        if (tracked && next_status(st, d, deflected) != s->status[r]) continue;
        q.status[r] = (uint8_t)st;
        uint64_t here = make_key(b, &q);
        ptrdiff_t slot = table_find(seen, here);
        if (slot >= 0 && get_val(seen, (size_t)slot) == k - 1) { *key = here; return 1; }
    }
    return 0;
}

/* Walk back from `key` (at BFS depth `depth`) to the start through states of
 * depth one less each step, writing (from cell, direction) pairs.  On a
 * straight board a robot came from the cells behind it in line, where it
 * stops; elsewhere every cell is tried. */
static int reconstruct(const Setup *b, const Table *seen, uint64_t key, int depth,
                       int16_t *from_cell, uint8_t *dirs) {
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, sizeof occ);
    for (int k = depth; k > 0; k--) {
        Pos s;
        decode_key(b, key, &s);
        int found = 0;
        occupy(b, &s, occ, 1);
        for (int r = 0; r < b->nrobots && !found; r++) {
            int at = s.pos[r];
            occ[at] = 0;
            for (int d = 0; d < 4 && !found; d++) {
                if (b->straight) {
                    int beyond = b->step[d][at];
                    if (beyond >= 0 && !occ[beyond]) continue; /* it would not have stopped here */
                    for (int c = b->step[d ^ 2][at]; c >= 0 && !occ[c] && !found; c = b->step[d ^ 2][c])
                        if (parent_at(b, seen, &s, r, c, d, 0, k, &key)) { from_cell[k - 1] = (int16_t)c; found = 1; }
                } else {
                    for (int c = 0; c < b->ncells && !found; c++) {
                        int deflected;
                        if (occ[c] || c == at || b->barrier[c] || slide(b, occ, r, c, d, &deflected) != at) continue;
                        if (parent_at(b, seen, &s, r, c, d, deflected, k, &key)) { from_cell[k - 1] = (int16_t)c; found = 1; }
                    }
                }
                if (found) dirs[k - 1] = (uint8_t)d;
            }
            occ[at] = 1;
        }
        occupy(b, &s, occ, 0);
        if (!found) return -1;
    }
    return 0;
}

/* Replay (from cell, direction) pairs from the real start, naming robots. */
static int name_moves(const Setup *b, const Pos *start, int len, const int16_t *from_cell,
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

/* Push a state into bucket (f, g), within the memory budget. */
int astar_push(Astar *A, int f, int g, uint64_t key, Result *res) {
    if (keys_push(BUCKET(&A->open, f, g), key, &A->bytes, A->budget) == 0) return 0;
    res->status = ST_STATES;
    return -1;
}

/* Layer f is spent: free it and move *f to the next layer holding states.
 * Returns 1 when the search ends there (status in res). */
static int astar_next_layer(Astar *A, int *f, int *g, Result *res) {
    Open *open = &A->open;
    if (*f < open->dim)
        for (int gg = 0; gg < open->dim; gg++) { free(BUCKET(open, *f, gg)->keys); *BUCKET(open, *f, gg) = (KeyList){0}; }
    int nf = *f + 1;
    for (; nf < open->dim; nf++) {
        int any = 0;
        for (int gg = 0; gg < open->dim && !any; gg++) any = BUCKET(open, nf, gg)->len > 0;
        if (any) break;
    }
    if (nf >= open->dim) {
        /* Nothing left within the depth limit; pushes beyond it were dropped. */
        if (A->beyond) { res->status = ST_DEPTH; res->lower_bound = A->lim->max_depth + 1; }
        else { res->status = ST_UNSOLVABLE; res->lower_bound = *f + 1; }
        return 1;
    }
    *f = nf;
    *g = open->dim - 1;
    if (nf > A->lim->max_depth) { res->status = ST_DEPTH; res->lower_bound = A->lim->max_depth + 1; return 1; }
    return 0;
}

int child_keys(const Astar *A, const Pos *p, const Child *moves, int nmoves, uint64_t *keys, uint8_t *h, int *n) {
    const Setup *b = A->b;
    *n = 0;
    for (int m = 0; m < nmoves; m++) {
        Pos q = *p;
        q.pos[moves[m].r] = moves[m].end;
        q.status[moves[m].r] = moves[m].status;
        if (is_goal(b, &q, moves[m].r)) return m;
        keys[*n] = make_key(b, &q);
        table_prefetch(&A->seen, keys[*n]);
        h[(*n)++] = (uint8_t)heuristic(b, &q);
    }
    return -1;
}

/* The record (see astar.h) of move mv, to be stored beside its child's key. */
uint64_t record_of(const Astar *A, const Child *mv) {
    if (!A->records) return 0;
    int cb = A->b->cell_bits;
    return (1 | (uint64_t)mv->d << 1 | (uint64_t)mv->from << 3 | (uint64_t)mv->end << (3 + cb)) << A->rec_shift;
}

/* Drops from moves[] (a state's n moves) each move its record skips (in its
 * bucket entry); how many are left. */
static int skip_commuting(const Astar *A, uint64_t entry, Child *moves, int n) {
    Record rc;
    record_decode(A, entry, &rc);
    if (!rc.any) return n;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (!record_skips(A->b, &rc, moves[i].r, moves[i].from, moves[i].end, moves[i].d)) moves[kept++] = moves[i];
    return kept;
}

/* Whether e's state was sent on by its relaxed finish (marked, and two
 * above its bound); if so its finish is searched again (it fails again), to
 * learn which cells' occupancy it read: a helper's move that does not enter
 * one of them leaves the child's finish failing as well (a helper leaving a
 * cell only takes free stops away; robots never cut a relaxed slide short). */
static int relaxed_failed(const Astar *A, Expansion *e) {
    const Setup *b = A->b;
    if (!b->stops || !(e->entry & SHARPENED)) return 0;
    int h = heuristic(b, &e->p);
    if (e->f - e->g != h + 2) return 0;
    return relaxed_fails(b, b->stops, e->memo, e->occ, &e->p, h, e->read);
}

static inline int was_read(const Expansion *e, int cell) { return (int)(e->read[cell >> 6] >> (cell & 63) & 1); }

int expansion_open(const Astar *A, Expansion *e) {
    const Setup *b = A->b;
    e->lifted = relaxed_failed(A, e);
    if (bits_fit(b)) {
        Record rc;
        record_decode(A, e->entry, &rc);
        e->nmoves = children_bits(b, &e->p, e->occ, &rc, e->moves);
    } else {
        e->nmoves = skip_commuting(A, e->entry, e->moves, children(b, &e->p, e->occ, e->moves));
    }
    int m = child_keys(A, &e->p, e->moves, e->nmoves, e->child, e->child_h, &e->nchild);
    if (m >= 0) occupy(b, &e->p, e->occ, 0);
    e->live = m < 0;
    return m;
}

int child_layer(const Astar *A, const Expansion *e, int c, int *beyond) {
    int h = e->child_h[c];
    if (h == 255) return -1; /* no finisher can ever reach the target from there */
    /* Bounds sharpened at expansion are not consistent: a child never goes
     * below the layer of its parent (pathmax), or it would be lost. */
    int cf = e->g + 1 + h > e->f ? e->g + 1 + h : e->f;
    if (cf >= A->open.dim) { *beyond = 1; return -1; } /* cannot finish within the depth limit */
    return cf;
}

uint64_t child_entry(const Astar *A, Expansion *e, int c, int *cf, int *beyond) {
    uint64_t mark = 0;
    const Child *mv = &e->moves[c];
    if (e->lifted && mv->r != A->b->single_finisher && !was_read(e, mv->end)) {
        *cf = e->g + 3 + e->child_h[c]; /* its relaxed finish fails as its parent's did */
        mark = SHARPENED;
    } else {
        *cf = sharpened_layer(A->b, &e->p, e->occ, mv, e->g, *cf, e->child_h[c], e->settled, &mark);
    }
    if (*cf >= A->open.dim) { *beyond = 1; *cf = -1; }
    return e->child[c] | mark | record_of(A, &e->moves[c]);
}

/* The goal reached from e by its move m ends the search. */
static void astar_goal(Astar *A, const Expansion *e, int m, Result *res) {
    A->goal_parent = entry_key(A, e->entry);
    A->goal_cell = e->moves[m].from;
    A->goal_dir = e->moves[m].d;
    res->status = ST_OPTIMAL;
    res->length = res->lower_bound = e->g + 1;
}

/* The second half: push each child not reached as cheaply before. */
static void expansion_admit(Astar *A, Expansion *e, Result *res) {
    e->live = 0;
    for (int c = 0; c < e->nchild && res->status < 0; c++) {
        int cf = child_layer(A, e, c, &A->beyond);
        if (cf < 0 || !astar_claim(A, e->child[c], e->g + 1, e->f, res)) continue;
        uint64_t entry = child_entry(A, e, c, &cf, &A->beyond);
        if (cf >= 0 && astar_push(A, cf, e->g + 1, entry, res) != 0) res->lower_bound = e->f;
    }
    occupy(A->b, &e->p, e->occ, 0);
}

int astar_claim(Astar *A, uint64_t key, int g, int f, Result *res) {
    size_t before = table_bytes(&A->seen);
    int fresh;
    ptrdiff_t slot = table_slot(&A->seen, key, A->budget - A->bytes + before, &fresh);
    A->bytes += table_bytes(&A->seen) - before;
    if (slot < 0) { res->status = ST_STATES; res->lower_bound = f; return 0; }
    if (!fresh && get_val(&A->seen, (size_t)slot) <= g) return 0;
    set_val(&A->seen, (size_t)slot, g);
    return 1;
}

void astar_admit(Astar *A, uint64_t entry, int cf, int g, int f, Result *res) {
    if (astar_claim(A, entry_key(A, entry), g, f, res) && astar_push(A, cf, g, entry, res) != 0) res->lower_bound = f;
}

int astar_pop(const Astar *A, uint64_t entry, int f, int g, Expansion *e, int *later) {
    const Setup *b = A->b;
    uint8_t *occ = e->occ;
    Pos *p = &e->p;
    decode_key(b, entry_key(A, entry), p);
    occupy(b, p, occ, 1);
    int h = heuristic(b, p), sharp = (entry & SHARPENED) != 0;
    if (!sharp && f - g == h) {
        /* Pushed with the plain bound: sharpen it before paying for the expansion. */
        int sharp_h = sharpened(b, occ, p, h);
        if (sharp_h > h) {
            occupy(b, p, occ, 0);
            *later = g + sharp_h;
            return POP_LATER;
        }
    }
    if (f - g == h + 1 && b->stops && relaxed_fails(b, b->stops, e->memo, occ, p, h, NULL)) {
        occupy(b, p, occ, 0);
        *later = f + 1;
        return POP_LATER;
    }
    e->settled = sharp && f - g >= h + 1;
    return POP_EXPAND;
}

/* Pop one state from bucket (f, g) into e, and open its expansion. */
static void astar_expand(Astar *A, Expansion *e, uint64_t entry, int f, int g, Result *res) {
    int later;
    switch (astar_pop(A, entry, f, g, e, &later)) {
    case POP_LATER:
        if (later >= A->open.dim) A->beyond = 1;
        else if (astar_push(A, later, g, entry | SHARPENED, res) != 0) res->lower_bound = f;
        break;
    case POP_EXPAND:
        e->entry = entry;
        e->f = f;
        e->g = g;
        int m = expansion_open(A, e);
        res->nodes += (uint64_t)e->nmoves;
        if (m >= 0) astar_goal(A, e, m, res);
        break;
    }
}

/* The moves of the solution found, from the table of depths. */
static void astar_solution(Astar *A, const Pos *start, Result *res) {
    int16_t from_cell[MAX_DEPTH + 1];
    uint8_t dirs[MAX_DEPTH + 1];
    int len = res->length;
    from_cell[len - 1] = A->goal_cell;
    dirs[len - 1] = A->goal_dir;
    if (reconstruct(A->b, &A->seen, A->goal_parent, len - 1, from_cell, dirs) != 0 ||
        name_moves(A->b, start, len, from_cell, dirs, res) != 0) {
        res->status = ST_STATES; /* cannot happen; reported rather than crash */
        res->length = -1;
    }
}

void run_astar(const Setup *b, const Pos *start, Limits *lim, Result *res) {
    Astar *A = calloc(1, sizeof(Astar));
    res->strategy = 1;
    res->status = -1;
    if (!A) { res->status = ST_STATES; return; }
    A->b = b;
    A->lim = lim;
    A->budget = lim->state_budget;
    A->key_mask = (1ULL << b->key_bits) - 1;
    A->rec_shift = b->key_bits;
    A->records = b->key_bits + 3 + 2 * b->cell_bits <= 63;
    A->open.dim = lim->max_depth + 1; /* a child beyond max_depth is dropped at once, never stored */
    A->open.bucket = calloc((size_t)A->open.dim * (size_t)A->open.dim, sizeof(KeyList));
    if (!A->open.bucket || table_init(&A->seen, 1 << 16, A->budget / 2, b->key_bits) != 0) {
        free(A->open.bucket);
        free(A);
        res->status = ST_STATES;
        return;
    }
    A->bytes += table_bytes(&A->seen);
    A->memo = relaxed_memo_new(b->stops, ASTAR_MEMO_BITS);
    uint64_t start_key = make_key(b, start);
    int fresh, f = heuristic(b, start), g = 0;
    table_slot(&A->seen, start_key, A->budget, &fresh);
    if (f < A->open.dim) keys_push(BUCKET(&A->open, f, 0), start_key, &A->bytes, A->budget);
    else if (f != 255) A->beyond = 1; /* the start alone needs more than max_depth moves */
    /* One thread overlaps two expansions of one bucket: the next state's
     * children are found, and their slots prefetched, before the last state's
     * are claimed, so that claims seldom wait for memory.  The pending
     * expansion is admitted first whenever the next pop would come from
     * another bucket (its children might belong there, deepest first), or
     * the crew takes the bucket. */
    Expansion *ex = calloc(2, sizeof(Expansion)), *pending = NULL;
    if (!ex) res->status = ST_STATES;
    else ex[0].memo = ex[1].memo = A->memo;
    while (res->status < 0) {
        /* The deepest non-empty bucket of layer f, else the next layer. */
        while (g >= 0 && (f >= A->open.dim || BUCKET(&A->open, f, g)->len == 0)) g--;
        if (pending && g != pending->g) {
            int below = pending->g + 1;
            expansion_admit(A, pending, res);
            pending = NULL;
            if (below < A->open.dim && below > g && BUCKET(&A->open, f, below)->len) g = below;
            continue;
        }
        if (g < 0) {
            if (astar_next_layer(A, &f, &g, res)) break;
            continue;
        }
        KeyList *bucket = BUCKET(&A->open, f, g);
        if (lim->threads > 1 && bucket->len >= lim->crew_from && (A->crew || (A->crew = crew_start(A, lim->threads)))) {
            /* A chunk of the bucket's states, side by side. */
            if (pending) { expansion_admit(A, pending, res); pending = NULL; continue; }
            if (limits_reached(lim)) { res->status = lim->stopped; res->lower_bound = f; break; }
            crew_chunk(A->crew, bucket, f, g, res);
        } else {
            if (out_of_time(lim)) { res->status = lim->stopped; res->lower_bound = f; break; }
            uint64_t key = bucket->keys[--bucket->len];
            Expansion *e = pending == ex ? ex + 1 : ex;
            astar_expand(A, e, key, f, g, res);
            if (pending && res->status < 0) expansion_admit(A, pending, res);
            pending = e->live ? e : NULL;
        }
        if (res->status < 0 && g + 1 < A->open.dim && BUCKET(&A->open, f, g + 1)->len) g = g + 1;
    }
    free(ex);
    free(A->memo);
    if (A->crew) crew_stop(A->crew);
    res->states = A->seen.count;
    if (res->status == ST_OPTIMAL) astar_solution(A, start, res);
    for (size_t i = 0; i < (size_t)A->open.dim * (size_t)A->open.dim; i++) free(A->open.bucket[i].keys);
    free(A->open.bucket);
    table_free(&A->seen);
    free(A);
}
