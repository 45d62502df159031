/* Reach tables: breadth-first from one position, every robot and cell. */
#include "core.h"

/* ------------------------------------------------------------ reach table */

/* Breadth-first from one position over full states (every robot tracked, no
 * sorting): the first depth at which each robot stops on each cell, having
 * ricocheted when the rule asks for it.  One search rates every target. */
void run_reach(const Setup *b, const Pos *start, Limits *lim, uint8_t *out, int *depth_done, Result *res) {
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
    bytes += table_bytes(&seen);
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
                size_t before = table_bytes(&seen);
                ptrdiff_t slot = table_slot(&seen, key, budget - bytes + before, &fresh);
                bytes += table_bytes(&seen) - before;
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
