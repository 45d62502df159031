/* A*'s state, shared by its one-thread loop (astar.c) and its crew (crew.c). */
#ifndef RICOCHET_ASTAR_H
#define RICOCHET_ASTAR_H
#include "core.h"

/* A* with the lone-robot bound, which is consistent (a move changes it by at
 * most one), so states are expanded in order of f = g + h and the first goal
 * generated is optimal.  Open states sit in buckets by (f, g); within one f the
 * deepest bucket goes first, which reaches the goal of the last layer early.
 * Only states with g + h <= optimum are expanded: on deep puzzles the helpers'
 * wanderings far from the target are never explored. */
typedef struct {
    int dim;                 /* f and g both run from 0 to dim - 1 */
    KeyList *bucket;         /* [f * dim + g]; each list grows on first push */
} Open;

/* The mark on a key in a bucket whose bound was sharpened when it was pushed
 * (keys use at most 61 bits): popping it need not sharpen it again. */
#define SHARPENED (1ULL << 63)

#define BUCKET(o, f, g) (&(o)->bucket[(size_t)(f) * (size_t)(o)->dim + (size_t)(g)])

typedef struct Crew Crew;

/* The slots of a thread's memo of relaxed finishes, as a power of two: on the
 * 21-move 5-robot puzzle 1.3 million finishes with helpers came down to
 * 4,300 keys (relaxed.c). */
#define ASTAR_MEMO_BITS 12

typedef struct {
    const Setup *b;
    Limits *lim;
    Table seen;
    Open open;
    size_t bytes, budget;
    int beyond;                  /* a push was dropped for going past the depth limit */
    uint64_t goal_parent;        /* the goal's parent state, and the last move into the goal */
    int16_t goal_cell;
    uint8_t goal_dir;
    Crew *crew;                  /* helper threads, when the search has more than one */
    int records;                 /* keys in buckets carry the move that reached them (see below) */
    int rec_shift;               /* ... above the key's own bits */
    uint64_t key_mask;           /* a bucket entry's key without its mark and record */
    RelaxedMemo *memo;           /* the relaxed finish's (relaxed.c), of the thread that runs the search */
} Astar;

/* A bucket entry may carry the move that reached its state (a record): its
 * mover's cells before and after, and its direction.  A move m from that state
 * is not searched when it commutes with the record c (c then m reaches the
 * same position as m then c, each move legal where made) and m comes first in
 * a fixed order of moves (by start cell, then direction): the same child is
 * reached at the same depth through the other order.  (Nor is the mover's
 * move straight back, when untracked: that child is the state's parent's
 * parent, stored two moves shallower.)  Why nothing is lost,
 * though a state keeps only the record of its first arrival: if m is skipped
 * at T, then m then c reaches T's child from V = T - c + m, at the same
 * depth; if V's own record c' skips c there, c' then c does from V - c' + c,
 * and so on.  Each step asks a move later in the order than the last, so the
 * chain ends at a move that is searched.  Every state on the way is as deep
 * as T and one move from the child: when the child lies on an optimal
 * solution, so does it, and its bound, being admissible, cannot hold it back
 * past the optimum's layer. */
static inline uint64_t entry_key(const Astar *A, uint64_t entry) { return entry & A->key_mask; }

/* An expansion in two halves, so that a thread overlaps two of them: the
 * state's moves and its children's keys and bounds first, their slots
 * prefetched; what becomes of the children one expansion later, when the
 * slots are likely in the cache (see run_astar and crew.c). */
typedef struct {
    int live;                    /* the children await the second half */
    uint64_t entry;              /* the state's bucket entry, popped from bucket (f, g) */
    int f, g, settled;           /* settled: see astar_pop() */
    Pos p;
    uint8_t occ[MAX_CELLS];      /* p's robots marked while live */
    int nmoves, nchild;
    Child moves[MAX_ROBOTS * 4];
    uint64_t child[MAX_ROBOTS * 4];
    uint8_t child_h[MAX_ROBOTS * 4];
    int lifted;                  /* its relaxed finish failed (see astar.c) ... */
    uint64_t read[MAX_CELLS / 64]; /* ... reading whether these cells held a helper */
    RelaxedMemo *memo;           /* the expanding thread's, or NULL */
} Expansion;

/* What astar_pop() makes of an entry. */
enum { POP_LATER, POP_EXPAND };

/* astar.c */
/* An entry popped from bucket (f, g) into e: POP_LATER when its sharpened
 * bound, or (with four robots or more) its finisher's relaxed finish
 * (relaxed.c), sends it on to layer *later; else POP_EXPAND, with its position
 * in e->p, its robots marked in e->occ, and e->settled when its finisher is
 * known not to finish alone.  An entry whose state was reached more cheaply since is expanded
 * all the same, without a look-up to find out: that is 1-2% of the pops, and
 * its children, all reached as cheaply before, are mostly turned away by
 * their claims, while the look-up cost a trip to memory for every pop.  Such
 * a state has no goal child (that goal, one move deeper than the cheaper
 * arrival, would have ended the search in an earlier layer), so the solution
 * read back from the table's depths is as long as the one reported. */
int astar_pop(const Astar *A, uint64_t entry, int f, int g, Expansion *e, int *later);
int astar_push(Astar *A, int f, int g, uint64_t key, Result *res);
/* The keys and bounds of p's children (their slots prefetched) into keys, h
 * and *n; the index of the first move that reaches the goal, else -1. */
int child_keys(const Astar *A, const Pos *p, const Child *moves, int nmoves, uint64_t *keys, uint8_t *h, int *n);
/* Store `key` reached in g moves (while layer f is expanded) unless it was
 * reached as cheaply; 1 when it should then be pushed. */
int astar_claim(Astar *A, uint64_t key, int g, int f, Result *res);
/* astar_claim, then push the entry (key and record) into bucket (cf, g). */
void astar_admit(Astar *A, uint64_t entry, int cf, int g, int f, Result *res);
/* The first half for e's popped state (e->p, its robots marked in e->occ):
 * its moves, commuting ones skipped (e->nmoves), and its children's keys and
 * bounds.  The index of a move that reaches the goal (e->occ then cleared),
 * else -1 and e is live. */
int expansion_open(const Astar *A, Expansion *e);
/* The second half for child c of expansion e, around the caller's store.
 * child_layer: its layer, or -1 when it is dropped (no finisher can reach
 * the target; past the depth limit, *beyond set).  child_entry, once the
 * store let it in: its bucket entry (key, mark, record), its bound sharpened
 * while e's robots are at hand, *cf its layer then (-1 past the limit). */
int child_layer(const Astar *A, const Expansion *e, int c, int *beyond);
uint64_t child_entry(const Astar *A, Expansion *e, int c, int *cf, int *beyond);
/* The record of move mv (see above), or 0 when the search keeps none. */
uint64_t record_of(const Astar *A, const Child *mv);

/* crew.c: a bucket's states expanded by several threads in chunks. */
Crew *crew_start(Astar *A, int threads);
void crew_stop(Crew *c);
void crew_chunk(Crew *c, KeyList *bucket, int f, int g, Result *res);

#endif
