/* Setting up a search: the lone-robot lower bounds of a layout, the search
 * set-up of one request, and a cheap solo length (an upper bound). */
#include "core.h"

/* ------------------------------------------------------------------ setup */

/* The relaxed slide of a robot of colour colour1 - 1 from cell c in direction
 * d on the empty board, bent by the barriers it does not pass: *cell and *d
 * step to its next cell and the direction it leaves that cell in.  0 at its
 * end (a wall, the edge, or more steps than a slide without a loop takes). */
static int bent_step(const Setup *b, int colour1, int *cell, int *d, int *steps) {
    int nx = b->step[*d][*cell];
    if (nx < 0 || ++*steps > 4 * b->ncells) return 0;
    *cell = nx;
    uint8_t bar = b->barrier[nx];
    if (bar && (bar & 7) != colour1) *d = DEFLECT[bar >> 3][*d];
    return 1;
}

/* Trace a slide on the empty board; returns 1 if it loops forever (it takes
 * more steps than there are cells and directions). */
int traces_loop(const Setup *b, int colour1, int start, int d) {
    int cell = start, steps = 0;
    while (bent_step(b, colour1, &cell, &d, &steps)) continue;
    return steps > 4 * b->ncells;
}

static int bits_for(int ncells) {
    int bits = 1;
    while ((1 << bits) < ncells) bits++;
    return bits;
}

/* Whether the slide from c in direction d on the empty board, bent by the
 * barriers robot colour colour1 - 1 does not pass, meets a cell whose bound
 * is k (a relaxed robot may stop on any cell it crosses). */
static int path_meets(const Layout *L, int colour1, const uint8_t *lb, int c, int d, int k) {
    int cell = c;
    for (int steps = 0; steps <= 4 * L->ncells; steps++) {
        int nx = L->step[d][cell];
        if (nx < 0) return 0;
        cell = nx;
        if (lb[cell] == k) return 1;
        uint8_t bar = L->barrier[cell];
        if (bar && (bar & 7) != colour1) d = DEFLECT[bar >> 3][d];
    }
    return 0;
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
    for (int k = 0, changed = 1; changed && k < 254; k++) {
        changed = 0;
        for (int c = 0; c < n; c++) {
            if (lb[c] != 255) continue;
            for (int d = 0; d < 4 && lb[c] == 255; d++)
                if (path_meets(L, colour + 1, lb, c, d, k)) { lb[c] = (uint8_t)(k + 1); changed = 1; }
        }
    }
    return 0;
}

/* Per cell, the directions (bit d) whose slide may lower a lone robot's
 * bound lb by one: its path on the empty board (bent as fill_lower_bounds()
 * bends it) meets a cell whose bound is one less.  Robots only cut a slide
 * short on that path, so no other direction can.  All four at the target
 * (under the ricochet rule a finisher that has not turned leaves and comes
 * back) and where no bound is known. */
static void fill_lowering(const Layout *L, int colour, const uint8_t *lb, uint8_t *dirs) {
    for (int c = 0; c < L->ncells; c++) {
        dirs[c] = lb[c] == 0 || lb[c] == 255 ? 15 : 0;
        if (dirs[c]) continue;
        for (int d = 0; d < 4; d++)
            if (path_meets(L, colour + 1, lb, c, d, lb[c] - 1)) dirs[c] |= (uint8_t)(1 << d);
    }
}

/* The lone-robot bounds of a (target, colour), followed by their lowering
 * directions (fill_lowering), made on first use and kept with the layout. */
static const uint8_t *lower_bounds(Layout *L, int target, int colour) {
    if (!L->has_barriers) colour = 0; /* colour cannot matter */
    uint8_t **slot = &L->lb_cache[target * 5 + colour];
    if (!*slot) {
        uint8_t *lb = malloc(2 * (size_t)L->ncells);
        if (!lb || fill_lower_bounds(L, target, colour, lb) != 0) { free(lb); return NULL; }
        fill_lowering(L, colour, lb, lb + L->ncells);
        *slot = lb;
        L->bytes += 2 * (size_t)L->ncells;
    }
    return *slot;
}

static void set_bit(uint64_t *set, int x) { set[x >> 6] |= 1ULL << (x & 63); }

/* Into `mine`: the cells of a slide so far (`path`), the cell beyond its
 * last cell e (leaving e in direction d), and the set `then` (the cells of
 * concern from e). */
static void add_slide(const Setup *b, uint64_t *mine, const uint64_t *path, int e, int d, const uint64_t *then,
                      int words) {
    for (int w = 0; w < words; w++) mine[w] |= path[w] | then[w];
    if (b->step[d][e] >= 0) set_bit(mine, b->step[d][e]);
}

/* The concern sets (spare = 0) or those with a finisher move to spare
 * (spare = 1) of the cells whose bound is k, from those of lower bounds; the
 * latter also take a slide that keeps the bound, then a tight finish.  0 when
 * no cell has bound k.  A relaxed robot may stop on any cell of a slide. */
static int concern_level(const Setup *b, int colour1, const uint8_t *lb, int k, int spare, uint64_t *set,
                         uint64_t *spare_set) {
    int n = b->ncells, words = (n + 63) / 64, any = 0;
    for (int c = 0; c < n; c++) {
        if (lb[c] != k) continue;
        any = 1;
        uint64_t *mine = (spare ? spare_set : set) + (size_t)c * words;
        for (int d = 0; d < 4; d++) {
            uint64_t path[MAX_CELLS / 64] = {0};
            int e = c, de = d, steps = 0;
            while (bent_step(b, colour1, &e, &de, &steps)) {
                set_bit(path, e);
                if (lb[e] == k - 1) add_slide(b, mine, path, e, de, (spare ? spare_set : set) + (size_t)e * words, words);
                else if (spare && lb[e] == k) add_slide(b, mine, path, e, de, set + (size_t)e * words, words);
            }
        }
    }
    return any;
}

/* For each cell c of robot r, the one finisher, the cells that a finish in
 * exactly its lone-robot bound from c can touch: the cells its slides cross
 * and the cells just beyond where they stop.  Every such finish is a path of
 * slides that each lower the bound by one (the bound lets a robot stop
 * anywhere), each slide a part of the relaxed one, bent where barriers bend
 * it, so the union over those paths holds them all.  A robot standing
 * outside that set, or arriving there, changes no such finish.  Then the
 * same for a finish with one finisher move to spare (one slide may keep the
 * bound). */
static uint64_t *fill_concern(const Setup *b, int r) {
    int n = b->ncells, words = (n + 63) / 64, colour1 = b->colour[r] + 1;
    size_t size = (size_t)n * (size_t)words;
    uint64_t *set = calloc(2 * size, sizeof(uint64_t));
    if (!set) return NULL;
    uint64_t *spare = set + size;
    const uint8_t *lb = b->lb[r];
    for (int k = 1; k < 255 && concern_level(b, colour1, lb, k, 0, set, spare); k++)
        concern_level(b, colour1, lb, k, 1, set, spare); /* needs every tight set of level k */
    return set;
}

/* Per cell, the cells a slide from it may reach on the empty board, bent by
 * the barriers of any colour but the robot's (the union over the colours):
 * one set per board. */
static uint64_t *fill_rays(const Setup *b) {
    int n = b->ncells, words = (n + 63) / 64;
    uint64_t *rays = calloc((size_t)n * (size_t)words, sizeof(uint64_t));
    if (!rays) return NULL;
    for (int c = 0; c < n; c++)
        for (int colour1 = 1; colour1 <= (b->has_barriers ? 5 : 1); colour1++)
            for (int d = 0; d < 4; d++)
                for (int e = c, de = d, steps = 0; bent_step(b, colour1, &e, &de, &steps);)
                    set_bit(rays + (size_t)c * words, e);
    return rays;
}

/* The concern sets of b's target and finisher colour, and the board's rays,
 * made on first use (under the GIL) and kept with the layout; -1 when memory
 * ran out. */
static int concern_of(Layout *L, Setup *b, int r) {
    size_t n = (size_t)L->ncells, words = (n + 63) / 64;
    if (!L->concern_cache) {
        if (!(L->concern_cache = calloc(n * 5, sizeof(uint64_t *)))) return -1;
        L->bytes += n * 5 * sizeof(uint64_t *);
    }
    uint64_t **slot = &L->concern_cache[b->target * 5 + (L->has_barriers ? b->colour[r] : 0)];
    if (!*slot) {
        if (!(*slot = fill_concern(b, r))) return -1;
        L->bytes += 2 * n * words * sizeof(uint64_t);
    }
    if (!L->rays) {
        if (!(L->rays = fill_rays(b))) return -1;
        L->bytes += n * words * sizeof(uint64_t);
    }
    b->concern_words = (b->ncells + 63) / 64;
    b->concern = *slot;
    b->concern_spare = *slot + (size_t)b->ncells * (size_t)b->concern_words;
    b->rays = L->rays;
    return 0;
}

/* The relaxed stops of b's one finisher, made on first use (under the GIL)
 * and kept with the layout, for A* and IDA* to test its relaxed finish with
 * four robots or more (the 21-move 5-robot puzzle's states 37.1 to 21.2 million,
 * the 24- and 25-move puzzles' 20-22% fewer).  -1 when memory ran out. */
static int stops_of(Layout *L, Setup *b) {
    int r = b->single_finisher;
    if (r < 0 || b->nrobots < 4) return 0;
    size_t n = (size_t)L->ncells, words = (n + 63) / 64;
    if (!L->stops_cache) {
        if (!(L->stops_cache = calloc(n * 5, sizeof(Stops *)))) return -1;
        L->bytes += n * 5 * sizeof(Stops *);
    }
    Stops **slot = &L->stops_cache[b->target * 5 + (L->has_barriers ? b->colour[r] : 0)];
    if (!*slot) {
        Stops *s = calloc(1, sizeof *s);
        if (!s || stops_build(s, b) != 0) { stops_free(s); return -1; }
        *slot = s;
        L->bytes += sizeof *s + (n * 4 + 1) * sizeof *s->start + n * 4 +
                    ((size_t)s->start[n * 4] + 1) * sizeof *s->stops +
                    2 * (n * 4 + n * 4 * words * sizeof(uint64_t)); /* both rules' alone and alone_read */
    }
    b->stops = *slot;
    return 0;
}

/* A set-up's board part, from a layout: its tables and what they allow. */
void setup_from_layout(Setup *b, const Layout *L, int nrobots) {
    b->ncells = L->ncells;
    b->nrobots = nrobots;
    b->width = L->width;
    b->cell_bits = bits_for(L->ncells);
    b->step = (const int16_t (*)[MAX_CELLS])L->step;
    b->barrier = L->barrier;
    b->has_barriers = L->has_barriers;
    b->loops_possible = L->loops_possible;
    b->straight = !L->has_barriers && !L->has_openings;
    b->lines = L->lines;
    b->stop = (const int16_t (*)[MAX_CELLS])L->stop;
    b->column = L->column;
    b->row = L->row;
}

/* Build the search set-up: eligibility (with the sightline rule), groups of
 * interchangeable robots made contiguous, lower bounds.  Needs the GIL. */
int setup_search(Layout *L, const Request *q, Prepared *S) {
    Setup *b = &S->board;
    memset(S, 0, sizeof *S);
    setup_from_layout(b, L, q->nrobots);
    b->target = q->target;
    b->ricochet = !(q->rules & RULE_PLAIN);

    /* One-move reach from the start, in the caller's order. */
    uint8_t occ[MAX_CELLS];
    memset(occ, 0, (size_t)L->ncells);
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
    if (q->rules & RULE_VORTEX_SIGHTLINE)
        for (int i = 0; i < q->nrobots; i++)
            if (S->reach_dir[i] >= 0 || q->cells[i] == q->target) eligible &= ~(1 << i);
    S->eligible_ext = eligible;

    int group_ext[MAX_ROBOTS];
    for (int i = 0; i < q->nrobots; i++)
        group_ext[i] = (!q->allow_sorting || ((L->barrier_colours >> q->colours[i]) & 1)) ? 100 + i
                                                                                          : (eligible >> i) & 1;
    /* Stable order by group: helpers, then finishers, then robots with a colour of their own. */
    for (int i = 0; i < q->nrobots; i++) {
        int k = i;
        for (; k > 0 && group_ext[S->perm[k - 1]] > group_ext[i]; k--) S->perm[k] = S->perm[k - 1];
        S->perm[k] = i;
    }
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
    if (!q->skip_bounds && __builtin_popcount(b->eligible) == 1) {
        b->single_finisher = __builtin_ctz(b->eligible);
        b->lowering = b->lb[b->single_finisher] + b->ncells;
    }
    if ((b->single_finisher >= 0 && b->ncells <= 256 && /* kept per target and colour: 16 KiB each */
         concern_of(L, b, b->single_finisher) != 0) || stops_of(L, b) != 0) {
        PyErr_NoMemory();
        return -1;
    }
    int k2 = 0;
    for (int r = 0; r < q->nrobots; r++) if ((b->eligible >> r) & 1) b->order[k2++] = (uint8_t)r;
    for (int r = 0; r < q->nrobots; r++) if (!((b->eligible >> r) & 1)) b->order[k2++] = (uint8_t)r;
    b->tracked = b->ricochet ? b->eligible : 0;
    b->key_bits = 1;
    for (int r = 0; r < b->nrobots; r++) b->key_bits += b->cell_bits + (((b->tracked >> r) & 1) ? 2 : 0);
    return 0;
}

/* ------------------------------------------------------------ upper bounds */

/* Fewest moves for an eligible robot to finish moving alone, the others
 * standing still: a breadth-first search over (cell, ricochet status).
 * 255 when none finishes within `limit` moves. */
int solo_length(const Setup *b, uint8_t *occ, const Pos *p, int limit) {
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
