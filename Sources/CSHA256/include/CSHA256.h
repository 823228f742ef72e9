#ifndef NAVD_CSHA256_H
#define NAVD_CSHA256_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU runs navd_sha256_compress_hardware: x86-64 with the SHA
/// extensions, SSSE3 and SSE4.1 (CPUID). Always 0 on other architectures.
int navd_sha256_hardware_available(void);

/// Compresses `blocks` consecutive 64-byte blocks at `data` into `state`
/// (the eight working words a…h of FIPS 180-4) with the x86 SHA extensions.
/// Call it only when navd_sha256_hardware_available() returned 1.
void navd_sha256_compress_hardware(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
