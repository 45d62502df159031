/* Open-addressing hash tables (huge pages for big ones) and key lists. */
#include "core.h"

#include <pthread.h>
#include <sys/mman.h>

/* Zeroed memory for a table.  Large tables are mapped on their own and asked
 * for huge pages: a search touches them at random, and with 4 KiB pages most
 * probes would also miss the TLB.  The mapping is only address space until
 * its pages are first written. */
#define BIG_TABLE ((size_t)4 << 20)

static void *table_reserve(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void *table_alloc(size_t bytes) { return bytes < BIG_TABLE ? calloc(1, bytes) : table_reserve(bytes); }

void table_release(void *p, size_t bytes) {
    if (!p) return;
    if (bytes < BIG_TABLE) free(p);
    else munmap(p, bytes);
}

/* See Table: grow at 70% of the slots, stop at 85% when growing is not allowed. */
static void table_limits(Table *t, size_t slots) {
    t->mask = slots - 1;
    t->shift = 64 - __builtin_ctzll((unsigned long long)slots);
    t->limit = slots / 10 * 7;
    t->full = slots / 100 * 85;
}

static void table_arrays_free(Table *t) {
    if (t->room) {
        if (t->keys) munmap(t->keys, t->room * sizeof(uint64_t));
        if (t->vals) munmap(t->vals, t->room);
    } else {
        free(t->keys);
        free(t->vals);
    }
    t->keys = NULL;
    t->vals = NULL;
}

/* Address space for `room` slots into t (keys, and values apart when they
 * are not embedded); 0 on success. */
static int table_reserve_room(Table *t, size_t room) {
    t->room = room;
    t->keys = table_reserve(room * sizeof(uint64_t));
    t->vals = t->embedded || !t->keys ? NULL : table_reserve(room);
    if (t->keys && (t->embedded || t->vals)) return 0;
    table_arrays_free(t);
    return -1;
}

/* Zeroed arrays for `slots` slots into t.  A big table gets address space
 * for as many slots as max_bytes allows, to grow into in place, or for
 * `slots` alone where that much is refused (under a strict commit limit,
 * reserved address space counts). */
static int table_arrays(Table *t, size_t slots, size_t max_bytes) {
    t->room = 0;
    if (slots * sizeof(uint64_t) >= BIG_TABLE) {
        size_t room = slots;
        while (room * 2 * slot_bytes(t) <= max_bytes) room *= 2;
        if (table_reserve_room(t, room) != 0 && (room == slots || table_reserve_room(t, slots) != 0)) return -1;
    } else {
        t->keys = calloc(slots, sizeof(uint64_t));
        t->vals = t->embedded ? NULL : calloc(slots, 1);
        if (!t->keys || (!t->embedded && !t->vals)) {
            table_arrays_free(t);
            return -1;
        }
    }
    table_limits(t, slots);
    t->count = 0;
    t->max_disp = 0;
    return 0;
}

int table_init(Table *t, size_t min_slots, size_t max_bytes, int key_bits) {
    size_t slots = 256;
    *t = (Table){0};
    t->embedded = key_bits <= 55;
    while (slots < min_slots) slots <<= 1;
    while (slots > 256 && slots * slot_bytes(t) > max_bytes) slots >>= 1;
    return table_arrays(t, slots, max_bytes);
}

void table_free(Table *t) { table_arrays_free(t); }

/* Store a key's slot word (and value) at the first free slot from its home;
 * the slots from the home on are known to hold no key that will move. */
static void table_place(Table *t, uint64_t word, uint8_t val) {
    size_t home = table_home(t, t->embedded ? word & KEY_MASK : word), j = home;
    while (t->keys[j]) j = (j + 1) & t->mask;
    t->keys[j] = word;
    if (t->vals) t->vals[j] = val;
    if (((j - home) & t->mask) > t->max_disp) t->max_disp = (j - home) & t->mask;
}

/* A slot's contents, set aside while a table grows in place. */
typedef struct {
    uint64_t word;
    uint8_t val;
} Stashed;

/* A growth in place under way (see table_growth_begin). */
struct Growth {
    size_t s;                /* the old slots below s were set aside */
    size_t lo, hi;           /* the step's old slots */
    Stashed *stash;
    size_t stashed;          /* taken by several threads at once: atomics */
    size_t disp;             /* the farthest a moved key lies from its home, so far */
};

#define MIN_STEP ((size_t)4096) /* old slots in the smallest step but the last */

/* Doubling t within its room.  A key's home in the larger table is 2h or
 * 2h + 1 where it was h.  The keys below the first empty slot (those that
 * wrapped round the table's end) are set aside first; then the old slots
 * are moved in steps, the top half first, then the quarter below it, and
 * so on: the keys of step [lo, hi) go to slots at or above hi, which the
 * steps before emptied or the growth added, so a step's keys may be moved
 * in any order and by several threads at once.  A key whose new home lies
 * below hi (its old home below lo: at most max_disp of them in a step, and
 * in the last step, which ends at the first empty slot, its whole span) is
 * set aside too, and every key set aside is stored once all the rest are.
 * A probe never wraps round past the keys set aside into slots not yet
 * moved: that run, from some slot x through the top and the slots below s,
 * would hold 2n - x + s keys with new homes in [x, 2n), while only the keys
 * of old slots [x / 2, n) have such homes.  NULL, t unchanged, when the
 * table is too crowded at its start or there is no memory for the keys set
 * aside. */
Growth *table_growth_begin(Table *t) {
    size_t n = t->mask + 1, s = 0;
    while (s < n / 4 && t->keys[s]) s++;
    if (s >= n / 4) return NULL;
    /* Room to set aside: the slots below s, and what each step may add. */
    Growth steps = {.s = s, .lo = n};
    size_t cap = s, lo, hi;
    while (table_growth_step(&steps, &lo, &hi)) cap += lo == s ? hi - s : t->max_disp + 1;
    Growth *g = malloc(sizeof(Growth));
    Stashed *stash = malloc(cap * sizeof(Stashed));
    if (!g || !stash) { free(g); free(stash); return NULL; }
    *g = (Growth){.s = s, .lo = n, .hi = n, .stash = stash};
    for (size_t i = 0; i < s; i++) {
        g->stash[g->stashed++] = (Stashed){t->keys[i], t->vals ? t->vals[i] : 0};
        t->keys[i] = 0;
    }
    table_limits(t, 2 * n);
    return g;
}

/* The next step's old slots into [*lo, *hi); 0 when the moves are done. */
int table_growth_step(Growth *g, size_t *lo, size_t *hi) {
    if (g->lo <= g->s) return 0;
    g->hi = g->lo;
    g->lo = g->hi / 2 > g->s && g->hi / 2 >= MIN_STEP ? g->hi / 2 : g->s;
    *lo = g->lo;
    *hi = g->hi;
    return 1;
}

/* Moves the keys of old slots [lo, hi), within the step's; `shared`: other
 * threads move other slots of the step at once (an empty slot is then taken
 * by compare-and-swap). */
void table_growth_move(Table *t, Growth *g, size_t lo, size_t hi, int shared) {
    size_t disp = 0, mask = t->mask;
    for (size_t i = lo; i < hi; i++) {
        uint64_t word = t->keys[i];
        if (!word) continue;
        uint8_t val = t->vals ? t->vals[i] : 0;
        t->keys[i] = 0;
        size_t home = table_home(t, t->embedded ? word & KEY_MASK : word), j = home;
        if (home < g->hi) {
            g->stash[__atomic_fetch_add(&g->stashed, 1, __ATOMIC_RELAXED)] = (Stashed){word, val};
            continue;
        }
        for (;;) {
            if (!slot_word(t, j)) {
                uint64_t empty = 0;
                if (!shared) { t->keys[j] = word; break; }
                if (__atomic_compare_exchange_n(&t->keys[j], &empty, word, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
                continue; /* taken meanwhile: look at it again */
            }
            j = (j + 1) & mask;
        }
        if (t->vals) t->vals[j] = val;
        if (((j - home) & mask) > disp) disp = (j - home) & mask;
    }
    for (size_t seen = __atomic_load_n(&g->disp, __ATOMIC_RELAXED);
         disp > seen && !__atomic_compare_exchange_n(&g->disp, &seen, disp, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);) {
    }
}

/* The keys set aside stored; the growth is over. */
void table_growth_end(Table *t, Growth *g) {
    t->max_disp = g->disp;
    for (size_t k = 0; k < g->stashed; k++) table_place(t, g->stash[k].word, g->stash[k].val);
    free(g->stash);
    free(g);
}

static int grow_in_place(Table *t) {
    Growth *g = table_growth_begin(t);
    if (!g) return -1;
    size_t lo, hi;
    while (table_growth_step(g, &lo, &hi)) table_growth_move(t, g, lo, hi, 0);
    table_growth_end(t, g);
    return 0;
}

/* Whether t's next growth, within max_bytes, is in place (into fresh pages). */
int table_grows_in_place(const Table *t, size_t max_bytes) {
    size_t slots = (t->mask + 1) * 2;
    return slots <= t->room && slots * slot_bytes(t) <= max_bytes;
}

/* Pages for part `part` of `parts` equal parts of the slots t's next growth
 * in place adds, faulted in ahead of it, so that several threads can
 * share the kernel's clearing of them.  Nothing is written: another thread
 * may do the same for another part. */
void table_populate(const Table *t, size_t part, size_t parts) {
#ifdef MADV_POPULATE_WRITE
    size_t n = t->mask + 1, share = (n + parts - 1) / parts, lo = n + part * share, hi = lo + share;
    if (hi > 2 * n) hi = 2 * n;
    if (lo >= hi) return;
    size_t page = (size_t)1 << 21;
    uintptr_t a = (uintptr_t)&t->keys[lo] & ~(page - 1), b = (uintptr_t)&t->keys[hi];
    if (a < (uintptr_t)&t->keys[n]) a = (uintptr_t)&t->keys[n];
    madvise((void *)a, b - a, MADV_POPULATE_WRITE);
    if (t->vals) madvise(&t->vals[lo], hi - lo, MADV_POPULATE_WRITE);
#else
    (void)t; (void)part; (void)parts;
#endif
}

/* Grow to twice the slots if the budget allows; returns 0 on success.  A big
 * table grows in place; a small one, or one without room, into new arrays. */
int table_grow(Table *t, size_t max_bytes) {
    size_t slots = (t->mask + 1) * 2;
    if (slots * slot_bytes(t) > max_bytes) return -1;
    if (table_grows_in_place(t, max_bytes) && grow_in_place(t) == 0) return 0;
    Table next = *t;
    if (table_arrays(&next, slots, max_bytes) != 0) return -1;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->keys[i]) table_place(&next, t->keys[i], t->vals ? t->vals[i] : 0);
    next.count = t->count;
    table_arrays_free(t);
    *t = next;
    return 0;
}

/* For the tests: a growth in place whose large steps `threads` threads
 * share, as A*'s crew does. */
typedef struct {
    Table *t;
    Growth *g;
    size_t lo, hi, next;
} SharedMove;

#define TEST_PART ((size_t)1 << 12)

static void *shared_move(void *arg) {
    SharedMove *m = arg;
    for (size_t lo; (lo = m->lo + __atomic_fetch_add(&m->next, 1, __ATOMIC_RELAXED) * TEST_PART) < m->hi;)
        table_growth_move(m->t, m->g, lo, lo + TEST_PART < m->hi ? lo + TEST_PART : m->hi, 1);
    return NULL;
}

static int grow_on_threads(Table *t, int threads) {
    Growth *g = table_growth_begin(t);
    if (!g) return -1;
    SharedMove m = {t, g, 0, 0, 0};
    while (table_growth_step(g, &m.lo, &m.hi)) {
        pthread_t tid[8];
        int started = 0;
        m.next = 0;
        while (started < threads - 1 && started < 8 && pthread_create(&tid[started], NULL, shared_move, &m) == 0) started++;
        shared_move(&m);
        for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    }
    table_growth_end(t, g);
    return 0;
}

/* For the tests: n distinct keys of key_bits bits stored, each with a value,
 * into a table that starts at 256 slots and grows as it fills (its growths
 * in place on `threads` threads); `crowd` of them have homes in the top
 * 1/4096 of every table of 4,096 slots or more, so that one run of keys
 * wraps round the table's end and lies far from its homes.  Every key is
 * then looked up.  Returns how many are missing or hold a wrong value (-1:
 * no memory); *slots: the table's size at the end; *in_place: its growths
 * in place. */
long table_selftest(size_t n, size_t crowd, int key_bits, int threads, uint64_t seed, size_t *slots, int *in_place) {
    Table t;
    size_t max_bytes = (size_t)1 << 40;
    if (table_init(&t, 256, max_bytes, key_bits) != 0) return -1;
    uint64_t mask = key_bits >= 64 ? ~0ULL : (1ULL << key_bits) - 1, x = seed;
    uint64_t *keys = malloc(n * sizeof(uint64_t));
    long bad = -1;
    *in_place = 0;
    if (!keys) goto done;
    for (size_t i = 0; i < n; i++) {
        do { /* distinct, since hash64 is a bijection: keys drawn through it in order are */
            x += 0x9E3779B97F4A7C15ULL;
            keys[i] = hash64(x) & mask;
        } while (!keys[i] || (i < crowd && hash64(keys[i]) >> 52 != 0xFFF));
        uint64_t *before = t.keys;
        size_t was = t.mask;
        if (threads > 1 && t.count >= t.limit && table_grows_in_place(&t, max_bytes) && grow_on_threads(&t, threads) != 0)
            goto done;
        int fresh;
        ptrdiff_t slot = table_slot(&t, keys[i], max_bytes, &fresh);
        if (slot < 0) goto done;
        if (t.mask != was && t.keys == before) (*in_place)++;
        if (fresh) set_val(&t, (size_t)slot, (int)(keys[i] % 251) + 1);
    }
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        ptrdiff_t slot = table_find(&t, keys[i]);
        if (slot < 0 || get_val(&t, (size_t)slot) != (int)(keys[i] % 251) + 1) bad++;
    }
    *slots = t.mask + 1;
done:
    free(keys);
    table_free(&t);
    return bad;
}

int keys_push(KeyList *l, uint64_t k, size_t *bytes, size_t budget) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        if (*bytes + (cap - l->cap) * sizeof(uint64_t) > budget) return -1;
        uint64_t *keys = realloc(l->keys, cap * sizeof(uint64_t));
        if (!keys) return -1;
        *bytes += (cap - l->cap) * sizeof(uint64_t);
        l->keys = keys;
        l->cap = cap;
    }
    l->keys[l->len++] = k;
    return 0;
}
