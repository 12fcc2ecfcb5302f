# The cold-index floor in another language's SQLite binding (Python's sqlite3),
# so that a floor measured only in our own runtime cannot flatter us:
#
#   python3 bench/lib/bare_load.py <vault> <db>
#
# The same job as `bare-load.ts load`: walk the vault (dot-folders and
# node_modules skipped), read every note, insert file name + text into one
# FTS5 table (unicode61 remove_diacritics 2, WAL, synchronous NORMAL), one
# transaction. Prints {"files", "bytes", "ms"} as JSON.
import json
import os
import sqlite3
import sys
import time

t0 = time.perf_counter()
vault, db_path = sys.argv[1], sys.argv[2]
db = sqlite3.connect(db_path, isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.execute("CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')")
files = 0
size = 0
db.execute("BEGIN")
for d, dirs, names in os.walk(vault):
    dirs[:] = [x for x in dirs if not x.startswith(".") and x != "node_modules"]
    for n in names:
        if n.startswith(".") or not n.lower().endswith(".md"):
            continue
        with open(os.path.join(d, n), "rb") as f:
            buf = f.read()
        files += 1
        size += len(buf)
        db.execute("INSERT INTO fts(title, body) VALUES (?, ?)", (n[:-3], buf.decode("utf-8", "replace")))
db.execute("COMMIT")
ms = (time.perf_counter() - t0) * 1000
db.close()
print(json.dumps({"files": files, "bytes": size, "ms": ms, "sqlite": sqlite3.sqlite_version}))
