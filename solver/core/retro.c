/* The retrograde analysis, with its own threads. */
#include "retro.h"

#include <pthread.h>

/* Give layer + 1 to every unseen position one move before a position of this
 * slice at `layer`.  Robot r stopped at p moving d only if the way on is shut
 * (a wall, the edge, the centre or a robot: a barrier cell ahead would bend
 * the slide, not stop it); it came from any cell met when its path is traced
 * back, through barriers that bend it (each bend is its own inverse). */
void *retro_expand(void *arg) {
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
void *retro_count(void *arg) {
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

void retro_parallel(Retro *R, int threads, int layer, void *(*fn)(void *), RetroSlice *slices) {
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
int retro_descend(const Retro *R, uint64_t idx, int8_t *robot, int8_t *dir) {
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
int retro_prepare(Retro *R, Layout *L, PyObject *colours, int target, int threads, const char *free_cells,
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
    setup_from_layout(&R->board, L, R->nrobots);
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
int retro_run(Retro *R, int target, int candidates, int threads, double time_budget, RetroSlice *slices,
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


int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void retro_each_start(const Retro *R, const uint8_t *start, int min_length, RetroVisit visit, void *ctx) {
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
