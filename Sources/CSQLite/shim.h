#ifndef NAVD_CSQLITE_SHIM_H
#define NAVD_CSQLITE_SHIM_H

#include <stddef.h>
#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a macro casting -1 to a function pointer, which Swift cannot import:
/// binding with it makes SQLite copy the bytes before the call returns. Text is always bound by
/// its `length` in bytes (never -1, which would end it at a first NUL); an empty buffer without
/// an address is the empty text, not SQL NULL.
static inline int navd_sqlite3_bind_text_with(sqlite3_stmt *statement, int index, const char *text, int length,
                                              sqlite3_destructor_type destructor) {
    if (text == NULL) {
        text = "";
        length = 0;
    }
    return sqlite3_bind_text(statement, index, text, length, destructor);
}

static inline int navd_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return navd_sqlite3_bind_text_with(statement, index, text, length, SQLITE_TRANSIENT);
}

/// The same, read in place (`SQLITE_STATIC`): the caller keeps the bytes until the statement has run.
static inline int navd_sqlite3_bind_text_static(sqlite3_stmt *statement, int index, const char *text, int length) {
    return navd_sqlite3_bind_text_with(statement, index, text, length, SQLITE_STATIC);
}

static inline int navd_sqlite3_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
