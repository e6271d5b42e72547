/*
 * The scalar key hashes every C part of kafka_placement.partitioning._native shares: Kafka's
 * Utils.murmur2, librdkafka's rd_crc32 and rd_fnv1a, one key at a time, and the jump consistent hash.
 * Each must equal the pure-Python reference (murmur2.py, librdkafka_hashes.py, jump.py) for every input.
 */
#ifndef KP_HASH_KERNELS_H
#define KP_HASH_KERNELS_H

#include <Python.h>
#include <stdint.h>

enum { ALGO_MURMUR2 = 0, ALGO_CRC32 = 1, ALGO_FNV1A = 2 };

#define MM_SEED 0x9747b28cu
#define MM_M 0x5bd1e995u
#define FNV_OFFSET 0x811c9dc5u
#define FNV_PRIME 0x01000193u
#define CRC_POLY 0xedb88320u

/* the CRC-32 tables (slicing by 8), filled by kp_crc_init() at module init */
extern uint32_t kp_crc_table[8][256];
void kp_crc_init(void);

/* little-endian 32-bit load from any address (one mov on x86, correct on big-endian hosts too) */
static inline uint32_t load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint32_t murmur2_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t h = MM_SEED ^ (uint32_t)len;
    Py_ssize_t nblocks = len >> 2;
    for (Py_ssize_t i = 0; i < nblocks; i++, p += 4) {
        uint32_t k = load_le32(p) * MM_M;
        k ^= k >> 24;
        k *= MM_M;
        h = (h * MM_M) ^ k;
    }
    switch (len & 3) {
    case 3:
        h ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1:
        h ^= (uint32_t)p[0];
        h *= MM_M;
    }
    h ^= h >> 13;
    h *= MM_M;
    h ^= h >> 15;
    return h;
}

static inline uint32_t crc32_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t c = 0xffffffffu;
    while (len >= 8) {
        uint32_t a = load_le32(p) ^ c;
        uint32_t b = load_le32(p + 4);
        c = kp_crc_table[7][a & 0xffu] ^ kp_crc_table[6][(a >> 8) & 0xffu] ^ kp_crc_table[5][(a >> 16) & 0xffu] ^
            kp_crc_table[4][a >> 24] ^ kp_crc_table[3][b & 0xffu] ^ kp_crc_table[2][(b >> 8) & 0xffu] ^
            kp_crc_table[1][(b >> 16) & 0xffu] ^ kp_crc_table[0][b >> 24];
        p += 8;
        len -= 8;
    }
    while (len-- > 0)
        c = kp_crc_table[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static inline uint32_t fnv1a_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t h = FNV_OFFSET;
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    /* librdkafka: abs() of the signed value (Sarama); INT32_MIN stays 0x80000000 */
    return (h & 0x80000000u) ? (uint32_t)0u - h : h;
}

static inline uint32_t hash_one(int algo, const unsigned char *p, Py_ssize_t len)
{
    switch (algo) {
    case ALGO_MURMUR2:
        return murmur2_one(p, len);
    case ALGO_CRC32:
        return crc32_one(p, len);
    default:
        return fnv1a_one(p, len);
    }
}

/* Jump consistent hash (Lamping & Veach 2014), the paper's loop in the same float64 arithmetic as jump.py */
static inline int64_t jump_bucket(uint64_t key, int64_t num_buckets)
{
    int64_t b = -1, j = 0;
    while (j < num_buckets) {
        b = j;
        key = key * 2862933555777941757ULL + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return b;
}

/* How a scheme turns a key's hash into a partition index: (hash & mask) % n, or jump(unsigned hash, n);
 * a NULL key is hashed like an empty one unless null_is_keyless (the record router and one-key
 * partition_key read the same numbers, from schemes.SCHEMES). */
typedef struct {
    int algo;
    uint32_t mask;
    int null_is_keyless;
    int empty_is_keyless;
    int jump;
} KeyScheme;

static inline int64_t scheme_index(const KeyScheme *s, const unsigned char *p, Py_ssize_t len, uint32_t n)
{
    uint32_t h = hash_one(s->algo, p, len);
    return s->jump ? jump_bucket((uint64_t)h, (int64_t)n) : (int64_t)((h & s->mask) % n);
}

#endif
