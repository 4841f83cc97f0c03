#ifndef APDU_CSQLITE_SHIM_H
#define APDU_CSQLITE_SHIM_H
// SQLite for the SUN replay-counter store (apt libsqlite3-dev).
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro Swift cannot import: SQLite copies the bound bytes at once.
static inline void (*apdu_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
#endif
