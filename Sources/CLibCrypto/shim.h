#ifndef NAVD_CLIBCRYPTO_SHIM_H
#define NAVD_CLIBCRYPTO_SHIM_H

// OpenSSL's libcrypto, which libpq links already: its AES-256-GCM (EVP), to seal the answers to
// keyed creates that a shared store keeps (NavSessions/Auth/SealedAnswer.swift), and SHA-256
// (NavSessions/Auth/SHA256.swift).
#include <openssl/evp.h>

// SHA-256 through the one-digest calls, which OpenSSL 3 marks deprecated in favour of EVP: they
// cannot fail and allocate nothing, and run the same code (the x86 SHA extensions where the CPU
// has them). EVP's digest context is allocated and its calls may fail, a failure every request
// would have to handle, and costs more for a token's two blocks (measured on this machine:
// ~145 ns a 64-byte token here, ~170-250 ns through EVP with a context kept per thread).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

/// The SHA-256 digest of `count` bytes at `data` into `digest` (32 bytes).
static inline void navd_sha256(const void *data, size_t count, unsigned char *digest) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, count);
    SHA256_Final(digest, &context);
}

// The GCM tag's get and set, whose control codes are macros of macros.
static inline int navd_gcm_get_tag(EVP_CIPHER_CTX *context, unsigned char *tag) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag);
}

static inline int navd_gcm_set_tag(EVP_CIPHER_CTX *context, unsigned char *tag) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, tag);
}

// HMAC-SHA256 in one call, for webhook signatures (NavWebhooks/WebhookSignature.swift).
#include <openssl/hmac.h>

/// HMAC-SHA256 of `count` bytes at `data` under `key` into `digest` (32 bytes); 0 on failure.
static inline int navd_hmac_sha256(const void *key, size_t keyCount, const void *data, size_t count, unsigned char *digest) {
    unsigned int length = 32;
    return HMAC(EVP_sha256(), key, (int)keyCount, data, count, digest, &length) != NULL && length == 32;
}

#endif
