// Content hashing for caches (compiled objects, decisions). Not cryptographic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace metile {

// 64-bit FNV-1a, seedable so two independent halves can form a 128-bit key.
uint64_t fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ull);

// A 32-hex-digit key of `data`, for file names of on-disk caches.
std::string content_hash(std::string_view data);

}  // namespace metile
