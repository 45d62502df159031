/* The Python boundary of the search core (solver._core): argument parsing,
 * capsules, results as Python objects; the searches run with the GIL released.
 *
 * Two strategies share one move generator: iterative-deepening A* with a
 * transposition table (ida.c: most puzzles, the lone-robot lower bound prunes
 * hard, little memory) and A* over a hash set with bucketed open lists
 * (astar.c: deep puzzles, where re-deepening costs).  No global mutable state. */
#include "core.h"
#include "retro.h"

/* What every search is asked: the compiled board and the request on it. */
typedef struct {
    Layout *L;
    Request q;
} Asked;

#include "args.h"

static const char *STATUS_NAMES[] = {"optimal", "unsolvable", "depth_limit", "timeout",
                                     "state_limit", "cancelled"};
#define NSTATUS ((int)(sizeof STATUS_NAMES / sizeof *STATUS_NAMES))

/* The module's state (PEP 489): the names a solve answers with, made once. */
typedef struct {
    PyObject *status[NSTATUS];
    PyObject *strategy[2]; /* "ida", "astar" */
} CoreState;

static CoreState *core_state(PyObject *module) { return PyModule_GetState(module); }

static const char *LAYOUT_NAME = "ricochet.layout";

static void layout_free(PyObject *capsule) {
    Layout *L = PyCapsule_GetPointer(capsule, LAYOUT_NAME);
    if (!L) return;
    for (int i = 0; i < L->ncells * 5; i++) free(L->lb_cache[i]);
    free(L->lb_cache);
    if (L->concern_cache)
        for (int i = 0; i < L->ncells * 5; i++) free(L->concern_cache[i]);
    free(L->concern_cache);
    if (L->stops_cache)
        for (int i = 0; i < L->ncells * 5; i++) stops_free(L->stops_cache[i]);
    free(L->stops_cache);
    free(L->rays);
    free(L);
}

/* Each cell's row and column; whether every step goes to the next cell of a
 * row or column (no openings), and then where a lone robot stops (unless its
 * slide passes a barrier cell, where it may turn, or may not stop). */
static void find_lines(Layout *L) {
    static const int DX[4] = {0, 1, 0, -1}, DY[4] = {-1, 0, 1, 0};
    int w = L->width, n = L->ncells;
    L->lines = !L->has_openings;
    for (int d = 0; d < 4 && L->lines; d++)
        for (int c = 0; c < n; c++) {
            int x = c % w + DX[d], y = c / w + DY[d], v = L->step[d][c];
            if (v >= 0 && (x < 0 || x >= w || y < 0 || y >= L->height || v != y * w + x)) { L->lines = 0; break; }
        }
    for (int c = 0; c < n; c++) { L->column[c] = (int16_t)(c % w); L->row[c] = (int16_t)(c / w); }
    for (int d = 0; d < 4 && L->lines; d++)
        for (int c = 0; c < n; c++) {
            int e = c, crosses = 0;
            while (L->step[d][e] >= 0) { e = L->step[d][e]; crosses |= L->barrier[e] != 0; }
            L->stop[d][c] = (int16_t)(crosses ? CROSSES_BARRIER : e);
        }
}

#define COMPILE_BOARD_ARGS(REQ, OPT) REQ(INT, width) REQ(INT, height) REQ(BYTES, step) REQ(BYTES, barrier) \
    REQ(BOOL, has_openings)
DECLARE_ARGS(CompileBoardArgs, "compile_board", COMPILE_BOARD_ARGS)

static PyObject *py_compile_board(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    CompileBoardArgs a;
    if (CompileBoardArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    int width = a.width, height = a.height, has_openings = a.has_openings;
    const char *step = a.step.s, *barrier = a.barrier.s;
    Py_ssize_t step_len = a.step.len, barrier_len = a.barrier.len;
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
    L->bytes = sizeof(Layout) + (size_t)n * 5 * sizeof(uint8_t *);
    L->has_openings = has_openings;
    L->barrier_colours = 0;
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
        if (bar) { L->has_barriers = 1; L->barrier_colours |= 1 << ((bar & 7) - 1); }
    }
    find_lines(L);
    if (L->has_barriers || has_openings) {
        Setup probe;
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

static Layout *get_layout(PyObject *capsule) {
    if (!PyCapsule_IsValid(capsule, LAYOUT_NAME)) {
        PyErr_SetString(PyExc_TypeError, "layout must come from compile_board()");
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, LAYOUT_NAME);
}

/* The bytes a compiled board holds now: its tables, and the bounds, concern
 * sets and stops its searches have cached (they grow with the targets used). */
#define LAYOUT_BYTES_ARGS(REQ, OPT) REQ(OBJECT, layout)
DECLARE_ARGS(LayoutBytesArgs, "layout_bytes", LAYOUT_BYTES_ARGS)

static PyObject *py_layout_bytes(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    LayoutBytesArgs a;
    if (LayoutBytesArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Layout *L = get_layout(a.layout);
    if (!L) return NULL;
    return PyLong_FromSize_t(L->bytes);
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

/* The one argument every search takes, checked here once (the REQUEST kind of
 * args.h): (layout, cells, colours, target, candidates, rules), as _request in
 * solver/search/solve.py builds it.  `rules` is the RULE_* word: a new rule
 * option changes none of the searches' argument lists. */
static int convert_REQUEST(const ArgTable *t, const char *name, PyObject *arg, Asked *a) {
    static const char shape[] = "request must be (layout, cells, colours, target, candidates, rules)";
    if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 6) { PyErr_SetString(PyExc_TypeError, shape); return -1; }
    int target, candidates, rules;
    if (!(a->L = get_layout(PyTuple_GET_ITEM(arg, 0))) ||
        convert_INT(t, "request's target", PyTuple_GET_ITEM(arg, 3), &target) != 0 ||
        convert_INT(t, "request's candidates", PyTuple_GET_ITEM(arg, 4), &candidates) != 0 ||
        convert_INT(t, "request's rules", PyTuple_GET_ITEM(arg, 5), &rules) != 0)
        return -1;
    if (rules & ~RULES_KNOWN) {
        PyErr_Format(PyExc_ValueError, "rules holds unknown option bits 0x%x (known: 0x%x)", rules & ~RULES_KNOWN,
                     RULES_KNOWN);
        return -1;
    }
    if (parse_request(a->L, PyTuple_GET_ITEM(arg, 1), PyTuple_GET_ITEM(arg, 2), target, &a->q) != 0) return -1;
    a->q.candidates = candidates & ((1 << a->q.nrobots) - 1);
    a->q.rules = rules;
    a->q.allow_sorting = a->q.skip_bounds = 0;
    return 0;
}

/* Build a request's search board into S; -1 (with a Python error set) on failure. */
static int new_setup(Asked *a, int allow_sorting, int skip_bounds, Prepared *S) {
    a->q.allow_sorting = allow_sorting;
    a->q.skip_bounds = skip_bounds;
    return setup_search(a->L, &a->q, S);
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

static int attach_exact(PyObject *capsule, const Layout *L, const Request *q, Prepared *S);

static PyObject *cells_tuple(const int *pos, int n);

/* `names`, when not None, must be a tuple of one 4-tuple per robot. */
static int check_move_names(PyObject *names, int nrobots) {
    if (names == Py_None) return 0;
    int ok = PyTuple_Check(names) && PyTuple_GET_SIZE(names) == nrobots;
    for (int r = 0; ok && r < nrobots; r++) {
        PyObject *row = PyTuple_GET_ITEM(names, r);
        ok = PyTuple_Check(row) && PyTuple_GET_SIZE(row) == 4;
    }
    if (!ok) PyErr_SetString(PyExc_TypeError, "moves must be a tuple of one 4-tuple per robot, or None");
    return ok ? 0 : -1;
}

/* The solution's moves, each names[robot][direction] (the caller's robot
 * order), or a (robot, direction) pair where names is None. */
static PyObject *moves_list(const Prepared *S, const Result *res, PyObject *names) {
    PyObject *moves = PyList_New(res->length > 0 ? res->length : 0);
    if (!moves) return NULL;
    for (int i = 0; i < res->length; i++) {
        int r = S->perm[res->move_robot[i]], d = res->move_dir[i];
        PyObject *m = names != Py_None ? Py_NewRef(PyTuple_GET_ITEM(PyTuple_GET_ITEM(names, r), d))
                                       : Py_BuildValue("(ii)", r, d);
        if (!m) { Py_DECREF(moves); return NULL; }
        PyList_SET_ITEM(moves, i, m);
    }
    return moves;
}

/* A tuple of n new references (stolen: NULLs make it fail, and are skipped). */
static PyObject *steal_tuple(PyObject **items, int n) {
    PyObject *out = NULL;
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= items[i] != NULL;
    if (ok && (out = PyTuple_New(n)))
        for (int i = 0; i < n; i++) { PyTuple_SET_ITEM(out, i, items[i]); items[i] = NULL; }
    for (int i = 0; i < n; i++) Py_XDECREF(items[i]);
    return out;
}

#define SOLVE_ARGS(REQ, OPT) REQ(REQUEST, request) OPT(INT, max_depth, 64) OPT(DOUBLE, time_budget, 0.0) \
    OPT(SSIZE, state_budget, 1073741824) OPT(OBJECT, cancel, None) OPT(INT, strategy, 0) OPT(OBJECT, exact, None) \
    OPT(INT, threads, 1) OPT(SSIZE, crew_from, 1024) OPT(LLONG, ida_nodes, 500000) OPT(BOOL, crew_yields, True) \
    OPT(OBJECT, moves, None)
DECLARE_ARGS(SolveArgs, "solve", SOLVE_ARGS)

/* ida_nodes: then A*: past this IDA*'s repeated iterations cost more than A*'s memory. */
static PyObject *py_solve(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    SolveArgs a;
    if (SolveArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Layout *L = a.request.L;
    int strategy = a.strategy;
    if (check_limits(a.max_depth, a.state_budget) != 0) return NULL;
    if (strategy < 0 || strategy > 2) { PyErr_SetString(PyExc_ValueError, "strategy must be 0, 1 or 2"); return NULL; }
    if (a.threads < 1 || a.threads > 8) { PyErr_SetString(PyExc_ValueError, "threads must be from 1 to 8"); return NULL; }
    if (a.crew_from < 1) { PyErr_SetString(PyExc_ValueError, "crew_from must be at least 1"); return NULL; }
    if (check_move_names(a.moves, a.request.q.nrobots) != 0) return NULL;
    Prepared S;
    if (new_setup(&a.request, 1, 0, &S) != 0) return NULL;
    /* The lone-robot bound is reported as it is, whatever bound the search uses. */
    int lone = S.board.eligible ? heuristic(&S.board, &S.start) : 255;
    if (attach_exact(a.exact, L, &a.request.q, &S) != 0) return NULL;
    Limits lim = {0};
    Py_buffer view;
    if (get_cancel(a.cancel, &view, &lim) != 0) return NULL;
    lim.max_depth = a.max_depth;
    lim.state_budget = (size_t)a.state_budget;
    lim.threads = a.threads;
    lim.crew_from = (size_t)a.crew_from;
    lim.crew_yields = a.crew_yields;
    double t0 = now_seconds();
    lim.deadline = a.time_budget > 0 ? t0 + a.time_budget : 0;
    Result res;
    memset(&res, 0, offsetof(Result, move_robot));
    res.states = res.nodes = 0;
    res.strategy = 0;
    res.length = -1;

    Py_BEGIN_ALLOW_THREADS
    const Setup *b = &S.board;
    int at_target = -1;
    for (int r = 0; r < b->nrobots; r++)
        if (S.start.pos[r] == b->target && ((b->eligible >> r) & 1)) at_target = r;
    if (!b->eligible) {
        res.status = ST_UNSOLVABLE;
    } else if (!b->ricochet && at_target >= 0) {
        res.status = ST_OPTIMAL;
        res.length = 0;
    } else if (a.max_depth == 0) {
        res.status = ST_DEPTH;
        res.lower_bound = 1;
    } else {
        int settled = 0;
        if (strategy != 2)
            settled = run_ida(b, &S.start, &lim, strategy == 1 ? UINT64_MAX : (uint64_t)a.ida_nodes, &res);
        if (!settled) run_astar(b, &S.start, &lim, &res);
    }
    Py_END_ALLOW_THREADS

    double elapsed = now_seconds() - t0;
    if (lim.cancel) PyBuffer_Release(&view);
    /* A tuple, not a dict: building ten keys cost a short solve a tenth of its time.  Reach is None
     * in the usual round, where no robot that may finish stands on the target or reaches it in one move. */
    const Request *q = &a.request.q;
    int near = 0;
    for (int i = 0; i < q->nrobots; i++)
        near |= ((q->candidates >> i) & 1) && (S.reach_dir[i] >= 0 || q->cells[i] == q->target);
    CoreState *st = core_state(module);
    PyObject *items[10] = {
        Py_NewRef(st->status[res.status]), moves_list(&S, &res, a.moves),
        PyLong_FromLong(res.status == ST_OPTIMAL ? res.length : res.lower_bound),
        PyLong_FromUnsignedLongLong((unsigned long long)res.states),
        PyLong_FromUnsignedLongLong((unsigned long long)res.nodes), PyFloat_FromDouble(elapsed),
        Py_NewRef(st->strategy[res.strategy ? 1 : 0]), near ? cells_tuple(S.reach_dir, q->nrobots) : Py_NewRef(Py_None),
        PyLong_FromLong(S.eligible_ext), PyLong_FromLong(lone)};
    return steal_tuple(items, 10);
}

#define REACH_ARGS(REQ, OPT) REQ(REQUEST, request) OPT(INT, max_depth, 10) OPT(DOUBLE, time_budget, 0.0) \
    OPT(SSIZE, state_budget, 1073741824)
DECLARE_ARGS(ReachArgs, "reach", REACH_ARGS)

static PyObject *py_reach(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    ReachArgs a;
    if (ReachArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Layout *L = a.request.L;
    int max_depth = a.max_depth;
    double time_budget = a.time_budget;
    Py_ssize_t state_budget = a.state_budget;
    if (check_limits(max_depth, state_budget) != 0) return NULL;
    /* Every robot, every cell: the request's target and finishers do not matter. */
    Request q = a.request.q;
    q.candidates = (1 << q.nrobots) - 1;
    q.skip_bounds = 1;
    Prepared *S = malloc(sizeof(Prepared));
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

#define FACTS_ARGS(REQ, OPT) REQ(REQUEST, request) REQ(INT, length) OPT(LLONG, cap, 1000000) \
    OPT(DOUBLE, time_budget, 0.0) OPT(SSIZE, state_budget, 268435456) OPT(OBJECT, exact, None) OPT(INT, list, 0)
DECLARE_ARGS(FactsArgs, "facts", FACTS_ARGS)

static PyObject *py_facts(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    FactsArgs fa;
    if (FactsArgs_parse(args, nargs, kwnames, &fa) != 0) return NULL;
    Asked a = fa.request;
    PyObject *exact = fa.exact;
    int length = fa.length, list_limit = fa.list;
    long long cap = fa.cap;
    double time_budget = fa.time_budget;
    Py_ssize_t state_budget = fa.state_budget;
    Layout *L = a.L;
    if (length < 1 || length > MAX_DEPTH - 1 || cap < 1 || list_limit < 0 || list_limit > 1000000) {
        PyErr_SetString(PyExc_ValueError, "length must be from 1 to 254, cap positive and list from 0 to 10**6");
        return NULL;
    }
    if (check_limits(length, state_budget) != 0) return NULL;
    /* No sorting of interchangeable robots: robot identities matter for the facts. */
    Prepared *S = malloc(sizeof(Prepared));
    if (!S) return PyErr_NoMemory();
    if (new_setup(&a, 0, 0, S) != 0 || attach_exact(exact, L, &a.q, S) != 0) { free(S); return NULL; }
    Limits lim = {0};
    lim.max_depth = length;
    lim.state_budget = (size_t)state_budget;
    double t0 = now_seconds();
    lim.deadline = time_budget > 0 ? t0 + time_budget : 0;
    FactsSummary facts;
    SolutionList listing = {0};
    listing.limit = list_limit;
    if (list_limit > 0 && !(listing.moves = malloc((size_t)list_limit * (size_t)length))) {
        free(S);
        return PyErr_NoMemory();
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = count_facts(&S->board, &S->start, length, (uint64_t)cap, &lim, &facts, list_limit ? &listing : NULL);
    Py_END_ALLOW_THREADS
    int ext_mask = 0;
    for (int r = 0; r < a.q.nrobots; r++)
        if ((facts.fewest_mask >> r) & 1) ext_mask |= 1 << S->perm[r];
    /* The listed moves in the caller's robot order: robot * 4 + direction each. */
    for (size_t i = 0; i < (size_t)listing.listed * (size_t)length; i++)
        listing.moves[i] = (uint8_t)(S->perm[listing.moves[i] >> 2] * 4 + (listing.moves[i] & 3));
    free(S);
    PyObject *listed = PyBytes_FromStringAndSize((const char *)listing.moves, (Py_ssize_t)listing.listed * length);
    free(listing.moves);
    if (!listed) return NULL;
    if (failed < 0) { Py_DECREF(listed); return PyErr_NoMemory(); }
    if (failed) { Py_DECREF(listed); return Py_BuildValue("{s:s}", "status", STATUS_NAMES[failed]); }
    return Py_BuildValue("{s:s,s:K,s:O,s:i,s:i,s:i,s:K,s:d,s:N}", "status", "optimal",
                         "solutions", (unsigned long long)facts.solutions, "capped", facts.capped ? Py_True : Py_False,
                         "fewest_robots", facts.solutions ? facts.fewest : -1, "fewest_robots_mask", ext_mask,
                         "fewest_switches", facts.fewest_switches, "nodes", (unsigned long long)facts.nodes,
                         "seconds", now_seconds() - t0, "listed", listed);
}

/* An upper bound on the optimal length, found cheaply: the active robot alone,
 * or after one move of another robot.  Used by the generator to throw away
 * positions that are certainly shorter than it wants without a full search. */
#define UPPER_BOUND_ARGS(REQ, OPT) REQ(REQUEST, request) OPT(INT, helper_moves, 1)
DECLARE_ARGS(UpperBoundArgs, "upper_bound", UPPER_BOUND_ARGS)

static PyObject *py_upper_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    UpperBoundArgs ua;
    if (UpperBoundArgs_parse(args, nargs, kwnames, &ua) != 0) return NULL;
    int helper_moves = ua.helper_moves;
    if (helper_moves < 0 || helper_moves > 1) {
        PyErr_SetString(PyExc_ValueError, "helper_moves must be 0 or 1");
        return NULL;
    }
    Prepared *S = malloc(sizeof(Prepared));
    if (!S) return PyErr_NoMemory();
    if (new_setup(&ua.request, 0, 1, S) != 0) { free(S); return NULL; }
    int best;
    Py_BEGIN_ALLOW_THREADS
    const Setup *b = &S->board;
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

#define EXHAUSTIVE_ARGS(REQ, OPT) REQ(OBJECT, layout) REQ(OBJECT, colours) REQ(INT, target) REQ(INT, candidates) \
    REQ(BYTES, free) REQ(INT, min_length) OPT(LLONG, limit, 100000) OPT(OBJECT, probes, None) OPT(INT, threads, 2) \
    OPT(SSIZE, state_budget, 5368709120) OPT(DOUBLE, time_budget, 0.0)
DECLARE_ARGS(ExhaustiveArgs, "exhaustive", EXHAUSTIVE_ARGS)

static PyObject *py_exhaustive(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    ExhaustiveArgs a;
    if (ExhaustiveArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    PyObject *capsule = a.layout, *colours = a.colours, *probes = a.probes;
    const char *free_cells = a.free.s;
    Py_ssize_t free_len = a.free.len, state_budget = a.state_budget;
    int target = a.target, candidates = a.candidates, min_length = a.min_length, threads = a.threads;
    long long limit = a.limit;
    double time_budget = a.time_budget;
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

#define ANALYSE_ARGS(REQ, OPT) REQ(OBJECT, layout) REQ(OBJECT, colours) REQ(INT, target) REQ(INT, candidates) \
    REQ(BYTES, free) OPT(INT, threads, 2) OPT(SSIZE, state_budget, 5368709120) OPT(DOUBLE, time_budget, 0.0)
DECLARE_ARGS(AnalyseArgs, "analyse", ANALYSE_ARGS)

static PyObject *py_analyse(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AnalyseArgs a;
    if (AnalyseArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    PyObject *capsule = a.layout, *colours = a.colours;
    const char *free_cells = a.free.s;
    Py_ssize_t free_len = a.free.len, state_budget = a.state_budget;
    int target = a.target, candidates = a.candidates, threads = a.threads;
    double time_budget = a.time_budget;
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
#define ANALYSIS_ARGS(REQ, OPT) REQ(OBJECT, analysis)
DECLARE_ARGS(AnalysisInfoArgs, "analysis_info", ANALYSIS_ARGS)

static PyObject *py_analysis_info(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AnalysisInfoArgs a;
    if (AnalysisInfoArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Analysis *A = get_analysis(a.analysis);
    if (!A) return NULL;
    PyObject *counts = counts_list(A->hist);
    if (!counts) return NULL;
    return Py_BuildValue("{s:N,s:K,s:i,s:d,s:K}", "counts", counts, "unsolvable", (unsigned long long)A->hist[255],
                         "layers", A->layers, "seconds", A->seconds, "bytes", (unsigned long long)A->R.size);
}

/* Free the table now rather than when the capsule goes (4 GiB for 4 robots). */
DECLARE_ARGS(AnalysisReleaseArgs, "analysis_release", ANALYSIS_ARGS)

static PyObject *py_analysis_release(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AnalysisReleaseArgs a;
    if (AnalysisReleaseArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Analysis *A = get_analysis(a.analysis);
    if (!A) return NULL;
    table_release(A->R.dist, A->R.size);
    A->R.dist = NULL;
    Py_RETURN_NONE;
}

#define ANALYSIS_LENGTHS_ARGS(REQ, OPT) REQ(OBJECT, analysis) REQ(OBJECT, positions)
DECLARE_ARGS(AnalysisLengthsArgs, "analysis_lengths", ANALYSIS_LENGTHS_ARGS)

static PyObject *py_analysis_lengths(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AnalysisLengthsArgs a;
    if (AnalysisLengthsArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    Analysis *A = get_analysis(a.analysis);
    if (!A) return NULL;
    uint64_t *idx;
    Py_ssize_t n;
    if (probe_indices(&A->R, a.positions, &idx, &n) != 0) return NULL;
    PyObject *out = probe_lengths(&A->R, idx, n);
    free(idx);
    return out;
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
#define ANALYSIS_SAMPLE_ARGS(REQ, OPT) REQ(OBJECT, analysis) REQ(BYTES, start) REQ(INT, min_length) \
    REQ(LLONG, per_length) REQ(ULLONG, seed)
DECLARE_ARGS(AnalysisSampleArgs, "analysis_sample", ANALYSIS_SAMPLE_ARGS)

static PyObject *py_analysis_sample(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AnalysisSampleArgs a;
    if (AnalysisSampleArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    PyObject *capsule = a.analysis;
    const char *start = a.start.s;
    Py_ssize_t start_len = a.start.len;
    int min_length = a.min_length;
    long long per_length = a.per_length;
    unsigned long long seed = a.seed;
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
static int attach_exact(PyObject *capsule, const Layout *L, const Request *q, Prepared *S) {
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
    Setup *b = &S->board;
    b->exact = R->dist;
    b->exact_sym = 0;
    for (int r = 0; r < b->nrobots; r++) {
        b->exact_stride[r] = R->stride[S->perm[r]];
        if ((R->sym_mask >> S->perm[r]) & 1) b->exact_sym |= 1 << r;
    }
    for (int i = 0; i < R->sym_n; i++) b->exact_sym_stride[i] = R->stride[R->sym_slot[i]];
    b->single_finisher = -1; /* its sharper bound assumes the lone-robot bound */
    b->lowering = NULL;
    b->stops = NULL;         /* so does the relaxed finish */
    return 0;
}

/* For the tests: see table_selftest(). */
#define TABLE_SELFTEST_ARGS(REQ, OPT) REQ(ULLONG, n) REQ(ULLONG, crowd) REQ(INT, key_bits) REQ(INT, threads) \
    REQ(ULLONG, seed)
DECLARE_ARGS(TableSelftestArgs, "_table_selftest", TABLE_SELFTEST_ARGS)

static PyObject *py_table_selftest(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    TableSelftestArgs a;
    if (TableSelftestArgs_parse(args, nargs, kwnames, &a) != 0) return NULL;
    unsigned long long n = a.n, crowd = a.crowd, seed = a.seed;
    int key_bits = a.key_bits, threads = a.threads;
    if (key_bits < 20 || key_bits > 64 || crowd > n || crowd > 100000 || n > ((size_t)1 << 28) || threads < 1 ||
        threads > 8) {
        PyErr_SetString(PyExc_ValueError,
                        "key_bits must be 20-64, crowd at most n and 100,000 (each takes about 4,096 draws), "
                        "n at most 2**28, threads 1-8");
        return NULL;
    }
    size_t slots = 0;
    int in_place = 0;
    long bad;
    Py_BEGIN_ALLOW_THREADS
    bad = table_selftest((size_t)n, (size_t)crowd, key_bits, threads, (uint64_t)seed, &slots, &in_place);
    Py_END_ALLOW_THREADS
    if (bad < 0) return PyErr_NoMemory();
    return Py_BuildValue("{s:l,s:K,s:i}", "bad", bad, "slots", (unsigned long long)slots, "in_place", in_place);
}

/* Every entry point takes its arguments as a vector (METH_FASTCALL |
 * METH_KEYWORDS), parsed by the table its docstring's signature comes from. */
#define ENTRY(name, fn, LIST, returns) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, ARGS_DOC(name, LIST, returns)}

static PyMethodDef core_methods[] = {
    ENTRY("compile_board", py_compile_board, COMPILE_BOARD_ARGS,
          "A board's tables compiled for the searches: a layout capsule.  step: int16 [direction][cell] next "
          "cells (-1: none), little-endian; barrier: per cell 0, or (colour + 1) | (orientation << 3)."),
    ENTRY("layout_bytes", py_layout_bytes, LAYOUT_BYTES_ARGS,
          "The bytes the compiled board holds now, its searches' caches included."),
    ENTRY("solve", py_solve, SOLVE_ARGS,
          "The optimal search: (status, moves, lower_bound, states, nodes, seconds, strategy, reach, eligible, "
          "lone_bound).  request = (layout, cells, colours, target, candidates, rules); strategy 0 auto, 1 IDA*, "
          "2 A*; cancel a buffer whose first byte stops the search when set; exact an analysis (analyse()); "
          "moves, per robot (the request's order), the 4 objects its moves N, E, S, W are given as (None: "
          "(robot, direction) pairs).  reach: per robot the direction that reaches the target in one move, or -1; "
          "None when no robot that may finish stands on the target or reaches it in one move."),
    ENTRY("reach", py_reach, REACH_ARGS,
          "A dict: depths per robot and cell (bytes, robot-major; 255 unreached), complete_to, status, states, "
          "nodes, seconds (the request's target and finishers aside)."),
    ENTRY("upper_bound", py_upper_bound, UPPER_BOUND_ARGS,
          "The length of a solution found cheaply (a finisher alone, after at most helper_moves moves of another "
          "robot), or None."),
    ENTRY("facts", py_facts, FACTS_ARGS,
          "A dict of facts over every solution of `length` moves: solutions (up to cap), capped, fewest_robots, "
          "fewest_robots_mask, fewest_switches, nodes, seconds, and up to `list` of them as bytes (robot * 4 + "
          "direction); or {'status': ...} when a limit stopped it."),
    ENTRY("exhaustive", py_exhaustive, EXHAUSTIVE_ARGS,
          "A dict: plain-rule lengths of every position of a board and goal (counts per length, unsolvable, "
          "the longest positions with a solution each, probes' lengths)."),
    ENTRY("analyse", py_analyse, ANALYSE_ARGS, "An analysis capsule: exhaustive()'s table, kept in memory."),
    ENTRY("analysis_info", py_analysis_info, ANALYSIS_ARGS,
          "A dict: counts per length, unsolvable, layers, seconds, bytes."),
    ENTRY("analysis_release", py_analysis_release, ANALYSIS_ARGS, "Frees the analysis's table now."),
    ENTRY("analysis_lengths", py_analysis_lengths, ANALYSIS_LENGTHS_ARGS,
          "The plain-rule length of each position (cells in the analysis's robot order; None: unreachable)."),
    ENTRY("analysis_sample", py_analysis_sample, ANALYSIS_SAMPLE_ARGS,
          "A dict: counts per length and up to per_length sampled positions a length (seeded)."),
    ENTRY("_table_selftest", py_table_selftest, TABLE_SELFTEST_ARGS,
          "For the tests: a dict of bad (keys lost), slots, in_place (growths)."),
    {NULL, NULL, 0, NULL},
};

/* Multi-phase initialisation (PEP 489): the module's state holds the names a
 * solve answers with (layouts and analyses are capsules); its exec slot makes
 * them and adds the RULE_* bits, so that the tests hold Python's RuleFlag to them. */
static int core_exec(PyObject *m) {
    CoreState *st = core_state(m);
    for (int i = 0; i < NSTATUS; i++)
        if (!(st->status[i] = PyUnicode_InternFromString(STATUS_NAMES[i]))) return -1;
    if (!(st->strategy[0] = PyUnicode_InternFromString("ida")) ||
        !(st->strategy[1] = PyUnicode_InternFromString("astar")))
        return -1;
    if (PyModule_AddIntConstant(m, "RULE_PLAIN", RULE_PLAIN) < 0 ||
        PyModule_AddIntConstant(m, "RULE_VORTEX_SIGHTLINE", RULE_VORTEX_SIGHTLINE) < 0 ||
        PyModule_AddIntConstant(m, "RULES_KNOWN", RULES_KNOWN) < 0)
        return -1;
    return 0;
}

static int core_clear(PyObject *m) {
    CoreState *st = core_state(m);
    if (!st) return 0;
    for (int i = 0; i < NSTATUS; i++) Py_CLEAR(st->status[i]);
    Py_CLEAR(st->strategy[0]);
    Py_CLEAR(st->strategy[1]);
    return 0;
}

static void core_free(void *m) { core_clear(m); }

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "solver._core", "The optimal search for Ricochet Robots, in C.", sizeof(CoreState),
    core_methods, core_slots, NULL, core_clear, core_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
