/* Facts about every optimal solution: count, robots moved, switches. */
#include "core.h"

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
    const Setup *b;
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

static void count_dfs(Counter *c, int rem, Facts *out);

typedef struct {
    uint64_t key;
    int16_t end;
    uint8_t r, d, status, goal;
} Step;

/* Every move from the counter's position that can lie on an optimal solution
 * with `rem` moves left, its memo slot fetched ahead (the search waits on
 * memory more than on anything else).  Helpers move only when the bound leaves
 * room after their move (it leaves the bound as it is), and never last.  On a
 * board of straight slides a helper's move just before the last must change
 * the last slide: it ends next to the target, or leaves the target's row or
 * column (otherwise the finisher could finish a move sooner). */
static int facts_steps(Counter *c, int rem, Step *next) {
    const Setup *b = c->b;
    int helpers_useful = rem > 1 && helper_fits(b, heuristic(b, &c->cur), rem - 1);
    int count = 0;
    for (int r = 0; r < b->nrobots; r++) {
        int eligible = (b->eligible >> r) & 1;
        if (!eligible && !helpers_useful) continue;
        int start = c->cur.pos[r];
        uint8_t old_status = c->cur.status[r];
        int must_stop_by_target = !eligible && rem == 2 && b->straight &&
                                  b->column[start] != b->column[b->target] &&
                                  b->row[start] != b->row[b->target];
        c->occ[start] = 0;
        for (int d = 0; d < 4; d++) {
            int deflected;
            int end = slide(b, c->occ, r, start, d, &deflected);
            if (end < 0 || (must_stop_by_target && !adjacent(b, end, b->target))) continue;
            c->nodes++;
            c->cur.pos[r] = (int16_t)end;
            c->cur.status[r] = ((b->tracked >> r) & 1) ? (uint8_t)next_status(old_status, d, deflected) : 0;
            int goal = is_goal(b, &c->cur, r);
            if (rem == 1 ? !goal : goal || heuristic(b, &c->cur) > rem - 1) continue;
            uint64_t key = rem == 1 ? 0 : make_key(b, &c->cur);
            if (rem > 1) __builtin_prefetch(&c->memo[hash64(key) & c->mask], 1, 1);
            next[count++] = (Step){key, (int16_t)end, (uint8_t)r, (uint8_t)d, c->cur.status[r], (uint8_t)goal};
        }
        c->cur.pos[r] = (int16_t)start;
        c->cur.status[r] = old_status;
        c->occ[start] = 1;
    }
    return count;
}

/* Take a step (and take it back): the counter's position after it. */
typedef struct { int16_t start; uint8_t status; } Undo;

static Undo step_in(Counter *c, const Step *step) {
    Undo undo = {c->cur.pos[step->r], c->cur.status[step->r]};
    c->cur.pos[step->r] = step->end;
    c->cur.status[step->r] = step->status;
    c->occ[undo.start] = 0;
    c->occ[step->end] = 1;
    return undo;
}

static void step_out(Counter *c, const Step *step, Undo undo) {
    c->occ[step->end] = 0;
    c->occ[undo.start] = 1;
    c->cur.pos[step->r] = undo.start;
    c->cur.status[step->r] = undo.status;
}

/* The facts after one step with `rem` moves left before it: from the memo, or
 * by counting on from there (and remembering it). */
static void facts_after(Counter *c, int rem, const Step *step, Facts *sub) {
    if (rem == 1) {
        sub->count = 1;
        sub->masks = 1u; /* the empty set of robots moved after this one */
        memset(sub->switches, 0, sizeof sub->switches);
        return;
    }
    Facts *slot = facts_slot(c, step->key);
    if (slot->key == step->key && slot->rem >= rem - 1) {
        /* Known for these moves left, or reached before with more moves left
         * (then no optimal solution continues from here). */
        if (slot->rem == rem - 1 && slot->done) *sub = *slot;
        else sub->count = 0;
        return;
    }
    if (slot->key != step->key && c->used >= c->limit) {
        if (c->abort_when_full) { c->failed = ST_STATES; return; }
        slot = NULL; /* the largest table is full: go on unmemoised */
    } else if (slot->key != step->key) {
        slot->key = step->key;
        c->used++;
    }
    if (slot) { slot->rem = (uint8_t)(rem - 1); slot->done = 0; }
    Undo undo = step_in(c, step);
    count_dfs(c, rem - 1, sub);
    step_out(c, step, undo);
    if (slot && !c->failed) { /* the table is not resized during a search: the slot stays put */
        sub->key = step->key;
        sub->rem = (uint8_t)(rem - 1);
        sub->done = 1;
        *slot = *sub;
    }
}

/* Fold the facts after robot r's move into those before it. */
static void facts_add(const Counter *c, int r, const Facts *sub, Facts *out) {
    int n = c->b->nrobots;
    if (sub->count == 0 || n > MAX_ROBOTS) return;
    out->count = out->count + sub->count > c->cap ? c->cap : out->count + sub->count;
    for (int m = 0; m < 32; m++)
        if ((sub->masks >> m) & 1) out->masks |= 1u << (m | (1 << r));
    for (int prev = 0; prev <= n; prev++) {
        int cost = sub->switches[r] + (prev < n && prev != r ? 1 : 0);
        if (sub->switches[r] != 255 && cost < out->switches[prev]) out->switches[prev] = (uint8_t)cost;
    }
}

static void count_dfs(Counter *c, int rem, Facts *out) {
    out->count = 0;
    out->masks = 0;
    memset(out->switches, 255, sizeof out->switches);
    if (c->b->nrobots > MAX_ROBOTS) return;
    if (c->failed || out_of_time(c->lim)) { c->failed = c->lim->stopped ? c->lim->stopped : ST_TIME; return; }
    Step next[MAX_ROBOTS * 4];
    int count = facts_steps(c, rem, next);
    for (int i = 0; i < count && !c->failed; i++) {
        Facts sub;
        facts_after(c, rem, &next[i], &sub);
        if (!c->failed) facts_add(c, next[i].r, &sub, out);
    }
}

/* Every solution (up to the listing's limit), walked through the memo the count
 * filled: a step is taken only when solutions of the moves left follow it, so the
 * walk visits nothing but the solutions' own states. */
static void list_dfs(Counter *c, int rem, int depth, SolutionList *out) {
    if (c->failed || out->listed >= out->limit) return;
    if (out_of_time(c->lim)) { c->failed = c->lim->stopped ? c->lim->stopped : ST_TIME; return; }
    Step next[MAX_ROBOTS * 4];
    int count = facts_steps(c, rem, next);
    for (int i = 0; i < count && !c->failed && out->listed < out->limit; i++) {
        Facts sub;
        facts_after(c, rem, &next[i], &sub);
        if (c->failed || sub.count == 0) continue;
        out->path[depth] = (uint8_t)(next[i].r * 4 + next[i].d);
        if (rem == 1) {
            memcpy(out->moves + (size_t)out->listed * (size_t)(depth + 1), out->path, (size_t)(depth + 1));
            out->listed++;
            continue;
        }
        Undo undo = step_in(c, &next[i]);
        list_dfs(c, rem - 1, depth + 1, out);
        step_out(c, &next[i], undo);
    }
}

/* Count the facts of every solution of exactly `length` moves from `start`.
 * The memo starts small and grows sixteenfold when it fills, up to the state
 * budget: a short puzzle then costs no huge allocation.  The largest table
 * keeps going unmemoised when full, so the answer is always exact.  With `list`,
 * the solutions themselves follow (robot * 4 + direction per move, internal robot
 * order), up to its limit.  Returns 0,
 * a limit's ST_* status, or -1 when memory ran out.  Runs without the GIL. */
int count_facts(const Setup *b, const Pos *start, int length, uint64_t cap, Limits *lim, FactsSummary *out,
                SolutionList *list) {
    Counter *c = calloc(1, sizeof(Counter));
    if (!c) return -1;
    size_t max_slots = 1024;
    while (max_slots * 2 * sizeof(Facts) <= lim->state_budget && max_slots < ((size_t)1 << 32)) max_slots <<= 1;
    size_t slots = max_slots < ((size_t)1 << 14) ? max_slots : ((size_t)1 << 14);
    c->b = b;
    c->cap = cap;
    c->lim = lim;
    Facts root;
    for (;;) {
        c->memo = table_alloc(slots * sizeof(Facts));
        if (!c->memo) { free(c); return -1; }
        c->mask = slots - 1;
        c->limit = slots / 10 * 7;
        c->used = 0;
        c->failed = 0;
        c->abort_when_full = slots < max_slots;
        c->cur = *start;
        memset(c->occ, 0, sizeof c->occ);
        for (int r = 0; r < b->nrobots; r++) c->occ[start->pos[r]] = 1;
        count_dfs(c, length, &root);
        if (!(c->failed == ST_STATES && c->abort_when_full)) break;
        table_release(c->memo, slots * sizeof(Facts));
        slots = slots * 16 < max_slots ? slots * 16 : max_slots;
    }
    if (list && !c->failed && root.count) {
        c->cur = *start;
        memset(c->occ, 0, sizeof c->occ);
        for (int r = 0; r < b->nrobots; r++) c->occ[start->pos[r]] = 1;
        list_dfs(c, length, 0, list);
    }
    int failed = c->failed;
    out->solutions = root.count;
    out->capped = root.count >= c->cap;
    out->fewest = -1;
    out->fewest_mask = 0;
    for (int m = 0; m < 32; m++)
        if ((root.masks >> m) & 1 && (out->fewest < 0 || __builtin_popcount((unsigned)m) < out->fewest)) {
            out->fewest = __builtin_popcount((unsigned)m);
            out->fewest_mask = m;
        }
    out->fewest_switches = root.count ? root.switches[b->nrobots] : -1;
    out->nodes = c->nodes;
    table_release(c->memo, (c->mask + 1) * sizeof(Facts));
    free(c);
    return failed;
}
