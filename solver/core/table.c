/* Open-addressing hash tables (huge pages for big ones) and key lists. */
#include "core.h"

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
    size_t slots = t->room ? t->room : t->mask + 1;
    if (t->room) {
        if (t->keys) munmap(t->keys, slots * sizeof(uint64_t));
        if (t->vals) munmap(t->vals, slots);
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

/* Doubles t within its room.  A key's home in the larger table is 2h or
 * 2h + 1 where it was h, so the keys are moved from the top slot down, each
 * into slots already emptied or fresh, after the few at the bottom are set
 * aside.  Why no move writes over a key not yet moved: with s the first
 * empty slot past 2 * max_disp + 1, the keys set aside are those below s,
 * which include every key that wrapped past the table's end (their run ends
 * at the first empty slot).  A key at slot i >= s sits at most max_disp past
 * its home h, so its new home is at least 2h >= 2i - 2 * max_disp > i: its
 * probe starts above the keys not yet moved.  Nor can it wrap round to them:
 * a full run from some slot x through the top and slots 0 .. s - 1 would
 * need 2n - x + s keys with new homes in [x, 2n), and only the keys of
 * slots [x / 2, n) have such homes.  -1, t unchanged, when there is no
 * memory to set the bottom keys aside or the table is too crowded. */
static int grow_in_place(Table *t) {
    size_t n = t->mask + 1, s = 2 * t->max_disp + 2;
    while (s < n / 2 && t->keys[s]) s++;
    if (s >= n / 2) return -1;
    Stashed *stash = malloc(s * sizeof(Stashed));
    if (!stash) return -1;
    size_t kept = 0;
    for (size_t i = 0; i < s; i++) {
        if (!t->keys[i]) continue;
        stash[kept++] = (Stashed){t->keys[i], t->vals ? t->vals[i] : 0};
        t->keys[i] = 0;
    }
    table_limits(t, 2 * n);
    t->max_disp = 0;
    for (size_t i = n; i-- > s;) {
        uint64_t word = t->keys[i];
        if (!word) continue;
        t->keys[i] = 0;
        table_place(t, word, t->vals ? t->vals[i] : 0);
    }
    for (size_t k = 0; k < kept; k++) table_place(t, stash[k].word, stash[k].val);
    free(stash);
    return 0;
}

/* Whether t's next growth, within max_bytes, is in place (into fresh pages). */
int table_grows_in_place(const Table *t, size_t max_bytes) {
    size_t slots = (t->mask + 1) * 2;
    return slots <= t->room && slots * slot_bytes(t) <= max_bytes;
}

/* Pages for the part [lo, hi) (fractions of `parts`) of the slots t's next
 * growth in place adds, faulted in ahead of it, so that several threads can
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
    if (slots <= t->room && grow_in_place(t) == 0) return 0;
    Table next = *t;
    if (table_arrays(&next, slots, max_bytes) != 0) return -1;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->keys[i]) table_place(&next, t->keys[i], t->vals ? t->vals[i] : 0);
    next.count = t->count;
    table_arrays_free(t);
    *t = next;
    return 0;
}

/* For the tests: n distinct keys of key_bits bits stored, each with a value,
 * into a table that starts at 256 slots and grows as it fills; `crowd` of
 * them have homes in the top 1/4096 of every table of 4,096 slots or more,
 * so that one run of keys wraps round the table's end and lies far from its
 * homes.  Every key is then looked up.  Returns how many are missing or
 * hold a wrong value (-1: no memory); *slots: the table's size at the end;
 * *in_place: its growths in place. */
long table_selftest(size_t n, size_t crowd, int key_bits, uint64_t seed, size_t *slots, int *in_place) {
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
