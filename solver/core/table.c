/* Open-addressing hash tables (huge pages for big ones) and key lists. */
#include "core.h"

#include <sys/mman.h>

/* Zeroed memory for a table.  Large tables are mapped on their own and asked
 * for huge pages: a search touches them at random, and with 4 KiB pages most
 * probes would also miss the TLB. */
#define BIG_TABLE ((size_t)4 << 20)

void *table_alloc(size_t bytes) {
    if (bytes < BIG_TABLE) return calloc(1, bytes);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void table_release(void *p, size_t bytes) {
    if (!p) return;
    if (bytes < BIG_TABLE) free(p);
    else munmap(p, bytes);
}

/* See Table: grow at 70% of the slots, stop at 85% when growing is not allowed. */
static void table_limits(Table *t, size_t slots) {
    t->limit = slots / 10 * 7;
    t->full = slots / 100 * 85;
}

int table_init(Table *t, size_t min_slots, size_t max_bytes, int key_bits) {
    size_t slots = 256;
    t->embedded = key_bits <= 55;
    while (slots < min_slots) slots <<= 1;
    while (slots > 256 && slots * slot_bytes(t) > max_bytes) slots >>= 1;
    t->keys = table_alloc(slots * sizeof(uint64_t));
    t->vals = t->embedded ? NULL : table_alloc(slots);
    if (!t->keys || (!t->embedded && !t->vals)) {
        table_release(t->keys, slots * sizeof(uint64_t)); table_release(t->vals, slots);
        t->keys = NULL; t->vals = NULL;
        return -1;
    }
    t->mask = slots - 1;
    t->count = 0;
    table_limits(t, slots);
    return 0;
}

void table_free(Table *t) {
    table_release(t->keys, (t->mask + 1) * sizeof(uint64_t));
    table_release(t->vals, t->mask + 1);
    t->keys = NULL;
    t->vals = NULL;
}

/* A table of twice t's slots, empty, into *next if the budget allows;
 * returns 0 on success.  table_rehash() then moves t's keys into it and
 * table_grown() puts it in t's place. */
int table_grow_begin(const Table *t, size_t max_bytes, Table *next) {
    size_t slots = (t->mask + 1) * 2;
    if (slots * slot_bytes(t) > max_bytes) return -1;
    *next = *t;
    next->keys = table_alloc(slots * sizeof(uint64_t));
    next->vals = t->embedded ? NULL : table_alloc(slots);
    if (!next->keys || (!t->embedded && !next->vals)) {
        table_release(next->keys, slots * sizeof(uint64_t)); table_release(next->vals, slots);
        return -1;
    }
    next->mask = slots - 1;
    table_limits(next, slots);
    return 0;
}

/* Moves t's slots lo .. hi - 1 into next.  `shared`: other threads move
 * other slots at once, so an empty slot is taken by compare-and-swap (keys
 * are distinct, so whoever takes it, the other probes on). */
void table_rehash(const Table *t, Table *next, size_t lo, size_t hi, int shared) {
    size_t mask = next->mask;
    for (size_t i = lo; i < hi; i++) {
        uint64_t word = slot_word(t, i);
        if (!word) continue;
        size_t j = hash64(t->embedded ? word & KEY_MASK : word) & mask;
        if (shared) {
            for (uint64_t empty = 0;
                 !__atomic_compare_exchange_n(&next->keys[j], &empty, word, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
                 empty = 0)
                j = (j + 1) & mask;
        } else {
            while (next->keys[j]) j = (j + 1) & mask;
            next->keys[j] = word;
        }
        if (next->vals) next->vals[j] = t->vals[i];
    }
}

void table_grown(Table *t, Table *next) {
    table_release(t->keys, (t->mask + 1) * sizeof(uint64_t));
    table_release(t->vals, t->mask + 1);
    *t = *next;
}

/* Grow to twice the slots if the budget allows; returns 0 on success. */
int table_grow(Table *t, size_t max_bytes) {
    Table next;
    if (table_grow_begin(t, max_bytes, &next) != 0) return -1;
    table_rehash(t, &next, 0, t->mask + 1, 0);
    table_grown(t, &next);
    return 0;
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
