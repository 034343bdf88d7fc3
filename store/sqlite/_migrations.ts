// The SQLite schema as an ordered list of migrations. Never edit a shipped migration: append one.

/** One schema step; `version` values are 1, 2, 3, … in order. */
export interface Migration {
  /** The schema version this step produces. */
  readonly version: number;
  /** What it does. */
  readonly description: string;
  /** The statements, run in one transaction. */
  readonly statements: readonly string[];
  /**
   * A read-only store can open a file without this step: its tables are new and reading them
   * from a file that lacks them returns nothing.
   */
  readonly readOptional?: boolean;
}

/** Every migration, in order. The last one's version is the current schema version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "sessions, branches, messages, progressions, session signals",
    statements: [
      `CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        status TEXT NOT NULL,
        status_reason_code TEXT,
        started_at REAL,
        ended_at REAL,
        model TEXT,
        provider TEXT,
        effort TEXT,
        agent_name TEXT,
        agent_hash TEXT,
        invocation_id TEXT,
        node_metadata TEXT,
        input_tokens REAL,
        output_tokens REAL,
        total_cost_usd REAL,
        num_turns REAL,
        duration_ms REAL,
        last_activity_at REAL
      )`,
      `CREATE TABLE branches (
        id TEXT PRIMARY KEY NOT NULL,
        fields TEXT NOT NULL
      )`,
      `CREATE TABLE messages (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        sender TEXT,
        recipient TEXT,
        branch_id TEXT,
        session_id TEXT,
        created_at REAL NOT NULL
      )`,
      `CREATE TABLE progressions (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        progression_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        UNIQUE (progression_id, message_id)
      )`,
      `CREATE TABLE session_signals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        op_id TEXT NOT NULL,
        ts REAL NOT NULL,
        payload TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    description: "indexes for the list queries",
    statements: [
      "CREATE INDEX messages_by_session ON messages (session_id, position)",
      "CREATE INDEX messages_by_branch ON messages (branch_id, position)",
      "CREATE INDEX session_signals_by_session ON session_signals (session_id, seq)",
    ],
  },
  {
    version: 3,
    description: "resumable agent runs and their approvals",
    readOptional: true,
    statements: [
      `CREATE TABLE runs (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        session_id TEXT,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        record TEXT NOT NULL
      )`,
      "CREATE INDEX runs_by_status ON runs (status, created_at, position)",
      "CREATE INDEX runs_by_session ON runs (session_id, position)",
    ],
  },
  {
    version: 4,
    description: "a session row for every session that has data (later writes create their own)",
    // A read-only store on an older file only misses these rows (restore needs a writable open).
    readOptional: true,
    statements: [
      `INSERT INTO sessions (id, status)
        SELECT session_id, '"created"' FROM (
          SELECT session_id, min(o) AS o FROM (
            SELECT session_id, position AS o FROM messages WHERE session_id IS NOT NULL
            UNION ALL SELECT session_id, seq FROM session_signals
            UNION ALL SELECT session_id, position FROM runs WHERE session_id IS NOT NULL
          ) GROUP BY session_id
        ) WHERE session_id NOT IN (SELECT id FROM sessions) ORDER BY o`,
    ],
  },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1].version;
