/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * What the C++ fuzz targets share: the promise check (abort, so libFuzzer
 * reports the input), a reader of the fuzzer's bytes that yields zeros
 * once they run out, and a heap copy of exactly the bytes a validator
 * vouched for (AddressSanitizer catches a read past it).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace tc::fuzz {

/* a promise of the validator under test: says which one broke, then aborts */
#define REQUIRE(_cond) tc::fuzz::require_at((_cond), #_cond, __FILE__, __LINE__)

inline void require_at(bool cond, const char *what, const char *file, int line)
{
    if (!cond) {
        std::fprintf(stderr, "%s:%d: a promise broke: %s\n", file, line, what);
        std::abort();
    }
}

class bytes_in {
public:
    bytes_in(const uint8_t *data, size_t size) : p_(data), n_(size) {}

    size_t left() const { return n_; }
    uint8_t u8()
    {
        if (n_ == 0) {
            return 0;
        }
        --n_;
        return *p_++;
    }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
    uint64_t u64() { return u32() | (static_cast<uint64_t>(u32()) << 32); }

    /* the rest as (offset lo, offset hi, xor) patches onto @a buf of @a len */
    void patch(void *buf, size_t len)
    {
        auto *b = static_cast<uint8_t*>(buf);
        while (len != 0 && n_ >= 3) {
            const size_t at = u16() % len;
            b[at] ^= u8();
        }
    }

private:
    const uint8_t *p_;
    size_t        n_;
};

/* read @a len bytes at @a p, as a user of them would */
inline void read_bytes(const std::byte *p, size_t len)
{
    uint8_t x = 0;
    for (size_t i = 0; i < len; ++i) {
        x ^= static_cast<uint8_t>(p[i]);
    }
    asm volatile("" : : "r"(x));
}

/* @a len bytes of @a src in an allocation of exactly @a len bytes */
inline std::unique_ptr<std::byte[]> exact_copy(const void *src, size_t len)
{
    auto copy = std::make_unique_for_overwrite<std::byte[]>(len);
    if (len != 0) {
        std::memcpy(copy.get(), src, len);
    }
    return copy;
}

} // namespace tc::fuzz
