// The PostgreSQL schema as an ordered list of migrations. Never edit a shipped migration: append
// one. `{s}` stands for the store's quoted schema name.

/** One schema step; `version` values are 1, 2, 3, … in order. */
export interface PgMigration {
  /** The schema version this step produces. */
  readonly version: number;
  /** What it does. */
  readonly description: string;
  /** The statements, run in one transaction with `{s}` replaced by the quoted schema. */
  readonly statements: readonly string[];
}

/**
 * Every migration, in order. The last one's version is the current schema version.
 *
 * Layout notes:
 * - Free text (statuses, senders, op ids, …) and JSON bodies are stored as JSON text in `text`
 *   columns: PostgreSQL `text` and `jsonb` cannot hold NUL, and a lone surrogate would be replaced
 *   on the way to UTF-8; JSON escapes keep every JavaScript string exact. Ids are stored raw.
 * - `change_seq` orders messages and signals together across the store. Up to version 2 it came
 *   from the one-row `change_counter` table, whose row lock was held until commit: every writer of
 *   the schema waited for the previous one's commit. From version 3 it is derived from the writing
 *   transaction's id (see version 3 below), and readers stop at `change_horizon()`, below which no
 *   new change can appear: a reader that has seen change N never later finds a new change below N.
 *   Subscribers rely on this.
 * - A signal's `seq` counts per session (1, 2, 3, … without gaps), assigned under a lock of that
 *   session (version 3; before, under the counter lock), so in that session's commit order.
 * - `write_id` is a client-chosen id per signal so that a write retried after a dropped
 *   connection is stored once.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: "sessions, branches, messages, progressions, signals, change counter",
    statements: [
      `CREATE TABLE {s}.change_counter (
        id integer PRIMARY KEY CHECK (id = 1),
        last bigint NOT NULL
      )`,
      `INSERT INTO {s}.change_counter (id, last) VALUES (1, 0)`,
      `CREATE TABLE {s}.sessions (
        id text PRIMARY KEY,
        created bigserial NOT NULL,
        status text NOT NULL,
        status_reason_code text,
        started_at double precision,
        ended_at double precision,
        model text,
        provider text,
        effort text,
        agent_name text,
        agent_hash text,
        invocation_id text,
        metadata text,
        input_tokens double precision,
        output_tokens double precision,
        total_cost_usd double precision,
        num_turns double precision,
        duration_ms double precision,
        last_activity_at double precision
      )`,
      `CREATE INDEX sessions_by_created ON {s}.sessions (created)`,
      `CREATE TABLE {s}.branches (
        id text PRIMARY KEY,
        fields text NOT NULL
      )`,
      `CREATE TABLE {s}.messages (
        id text PRIMARY KEY,
        change_seq bigint NOT NULL UNIQUE,
        role text NOT NULL,
        content text NOT NULL,
        sender text,
        recipient text,
        branch_id text,
        session_id text,
        created_at double precision NOT NULL
      )`,
      `CREATE INDEX messages_by_session ON {s}.messages (session_id, change_seq)`,
      `CREATE INDEX messages_by_branch ON {s}.messages (branch_id, change_seq)`,
      `CREATE TABLE {s}.progressions (
        position bigserial PRIMARY KEY,
        progression_id text NOT NULL,
        message_id text NOT NULL,
        UNIQUE (progression_id, message_id)
      )`,
      `CREATE TABLE {s}.signals (
        session_id text NOT NULL,
        seq bigint NOT NULL,
        change_seq bigint NOT NULL UNIQUE,
        write_id uuid NOT NULL UNIQUE,
        kind text NOT NULL,
        op_id text NOT NULL,
        ts double precision NOT NULL,
        payload text NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
      `CREATE INDEX signals_by_session_change ON {s}.signals (session_id, change_seq)`,
      // One call appends a batch of messages and signals in arrival order (o_* ordinals), skips
      // rows already stored (message id, signal write_id: a retried batch is stored once) and
      // notifies subscribers with the last change number and the sessions touched. Each
      // statement of a VOLATILE plpgsql function takes a fresh snapshot, so everything below the
      // counter lock sees every earlier commit.
      `CREATE FUNCTION {s}.append_changes(
        channel text,
        m_ord integer[], m_id text[], m_role text[], m_content text[], m_sender text[],
        m_recipient text[], m_branch text[], m_session text[], m_created double precision[],
        s_ord integer[], s_write uuid[], s_session text[], s_kind text[], s_op text[],
        s_ts double precision[], s_payload text[]
      ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        total integer := coalesce(array_length(m_ord, 1), 0) + coalesce(array_length(s_ord, 1), 0);
        base bigint;
        touched text;
      BEGIN
        UPDATE {s}.change_counter SET last = last + total WHERE id = 1 RETURNING last - total INTO base;
        INSERT INTO {s}.messages
          (id, change_seq, role, content, sender, recipient, branch_id, session_id, created_at)
        SELECT t.id, base + t.ord, t.role, t.content, t.sender, t.recipient, t.branch, t.session, t.created
        FROM unnest(m_ord, m_id, m_role, m_content, m_sender, m_recipient, m_branch, m_session, m_created)
          AS t(ord, id, role, content, sender, recipient, branch, session, created)
        WHERE NOT EXISTS (SELECT 1 FROM {s}.messages x WHERE x.id = t.id)
        ORDER BY t.ord
        ON CONFLICT (id) DO NOTHING;
        INSERT INTO {s}.signals (session_id, seq, change_seq, write_id, kind, op_id, ts, payload)
        SELECT t.session,
          coalesce((SELECT max(x.seq) FROM {s}.signals x WHERE x.session_id = t.session), 0)
            + row_number() OVER (PARTITION BY t.session ORDER BY t.ord),
          base + t.ord, t.write, t.kind, t.op, t.ts, t.payload
        FROM unnest(s_ord, s_write, s_session, s_kind, s_op, s_ts, s_payload)
          AS t(ord, write, session, kind, op, ts, payload)
        WHERE NOT EXISTS (SELECT 1 FROM {s}.signals y WHERE y.write_id = t.write);
        SELECT json_agg(DISTINCT v)::text INTO touched
        FROM unnest(m_session || s_session) AS v WHERE v IS NOT NULL;
        IF touched IS NULL OR length(touched) > 7000 THEN touched := 'null'; END IF;
        PERFORM pg_notify(channel, '{"to":' || (base + total) || ',"s":' || touched || '}');
        RETURN base + total;
      END
      $fn$`,
    ],
  },
  {
    version: 2,
    description: "resumable agent runs and their approvals",
    statements: [
      // `record` is the whole RunRecord as JSON text; the columns beside it serve the queries.
      // `claim_token` is chosen per claimRun call, so a claim retried after a dropped connection
      // can tell its own committed claim from another process's.
      `CREATE TABLE {s}.runs (
        position bigserial PRIMARY KEY,
        run_id text NOT NULL UNIQUE,
        session_id text,
        status text NOT NULL,
        created_at double precision NOT NULL,
        claim_token uuid,
        record text NOT NULL
      )`,
      `CREATE INDEX runs_by_status ON {s}.runs (status, created_at, position)`,
      `CREATE INDEX runs_by_session ON {s}.runs (session_id, position)`,
    ],
  },
  {
    version: 3,
    description:
      "writers of different sessions commit in parallel: change numbers from transaction ids, per-session locks, notifications after commit, session rows created by their first write",
    statements: [
      // The one-row counter made every writer of the schema wait for the previous one's commit
      // (its row lock was held through the WAL flush), and pg_notify inside the write took the
      // cluster-wide notification lock at commit, which serialises every notifying transaction.
      // Now a batch's change numbers are (transaction id + offset) × 1024 + ordinal: unique,
      // increasing with the order in which writers took their transaction id, and taken without
      // any shared row. `xid_offset` keeps them above every number stored before this migration.
      `CREATE TABLE {s}.change_clock (
        id integer PRIMARY KEY CHECK (id = 1),
        xid_offset bigint NOT NULL
      )`,
      `INSERT INTO {s}.change_clock (id, xid_offset)
        SELECT 1, greatest(0, (SELECT coalesce(max(c), 0) FROM (
          SELECT max(change_seq) AS c FROM {s}.messages
          UNION ALL SELECT max(change_seq) FROM {s}.signals
          UNION ALL SELECT last FROM {s}.change_counter) AS t) / 1024 + 1
          - pg_snapshot_xmax(pg_current_snapshot())::text::bigint)`,
      `DROP FUNCTION {s}.append_changes(text, integer[], text[], text[], text[], text[], text[],
        text[], text[], double precision[], integer[], uuid[], text[], text[], text[],
        double precision[], text[])`,
      `DROP TABLE {s}.change_counter`,
      // Sessions written to without a session row (before this version a row came only from
      // createSession) get one, so they can be restored.
      `INSERT INTO {s}.sessions (id, status)
        SELECT session_id, '"created"' FROM (
          SELECT session_id, min(change_seq) AS o FROM (
            SELECT session_id, change_seq FROM {s}.messages WHERE session_id IS NOT NULL
            UNION ALL SELECT session_id, change_seq FROM {s}.signals
            UNION ALL SELECT session_id, 0 FROM {s}.runs WHERE session_id IS NOT NULL
          ) AS data GROUP BY session_id
        ) AS found
        WHERE NOT EXISTS (SELECT 1 FROM {s}.sessions x WHERE x.id = found.session_id)
        ORDER BY o, session_id`,
      // One call appends a batch in arrival order (ordinals 1…1023), skips rows already stored
      // (message id, signal write_id: a retried batch is stored once) and creates the session row
      // of every session it writes to (status "created") when there is none. It first takes the
      // schema's shared writer lock (so change_horizon() sees it before it has a transaction id),
      // then the locks of the sessions it adds signals to, in key order (so a session's signals
      // are numbered 1, 2, 3, … in commit order), and only then its transaction id. Writers of
      // different sessions share no lock. Each statement of a VOLATILE plpgsql function takes a
      // fresh snapshot, so the inserts see every commit made before the locks were granted.
      `CREATE FUNCTION {s}.append_changes(
        m_ord integer[], m_id text[], m_role text[], m_content text[], m_sender text[],
        m_recipient text[], m_branch text[], m_session text[], m_created double precision[],
        s_ord integer[], s_write uuid[], s_session text[], s_kind text[], s_op text[],
        s_ts double precision[], s_payload text[]
      ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        total integer := coalesce(array_length(m_ord, 1), 0) + coalesce(array_length(s_ord, 1), 0);
        base bigint;
      BEGIN
        IF total > 1023 THEN
          RAISE EXCEPTION 'append_changes takes at most 1023 rows, got %', total;
        END IF;
        PERFORM pg_advisory_xact_lock_shared(6843252, hashtext('{s}'));
        PERFORM pg_advisory_xact_lock(k) FROM (
          SELECT DISTINCT hashtextextended('{s}:' || v, 0) AS k FROM unnest(s_session) AS v
        ) AS keys ORDER BY k;
        SELECT (pg_current_xact_id()::text::bigint + xid_offset) * 1024 INTO base
        FROM {s}.change_clock WHERE id = 1;
        INSERT INTO {s}.sessions (id, status)
        SELECT d.v, '"created"' FROM (
          SELECT DISTINCT v FROM unnest(m_session || s_session) AS v WHERE v IS NOT NULL
        ) AS d
        WHERE NOT EXISTS (SELECT 1 FROM {s}.sessions x WHERE x.id = d.v)
        ORDER BY d.v
        ON CONFLICT (id) DO NOTHING;
        INSERT INTO {s}.messages
          (id, change_seq, role, content, sender, recipient, branch_id, session_id, created_at)
        SELECT t.id, base + t.ord, t.role, t.content, t.sender, t.recipient, t.branch, t.session, t.created
        FROM unnest(m_ord, m_id, m_role, m_content, m_sender, m_recipient, m_branch, m_session, m_created)
          AS t(ord, id, role, content, sender, recipient, branch, session, created)
        WHERE NOT EXISTS (SELECT 1 FROM {s}.messages x WHERE x.id = t.id)
        ORDER BY t.ord
        ON CONFLICT (id) DO NOTHING;
        INSERT INTO {s}.signals (session_id, seq, change_seq, write_id, kind, op_id, ts, payload)
        SELECT t.session,
          coalesce((SELECT max(x.seq) FROM {s}.signals x WHERE x.session_id = t.session), 0)
            + row_number() OVER (PARTITION BY t.session ORDER BY t.ord),
          base + t.ord, t.write, t.kind, t.op, t.ts, t.payload
        FROM unnest(s_ord, s_write, s_session, s_kind, s_op, s_ts, s_payload)
          AS t(ord, write, session, kind, op, ts, payload)
        WHERE NOT EXISTS (SELECT 1 FROM {s}.signals y WHERE y.write_id = t.write);
        RETURN base + total;
      END
      $fn$`,
      // The change number below which nothing new can appear: every writer that took its
      // transaction id before this call's snapshot (xmax) and no longer holds the writer lock has
      // committed or rolled back, and its rows are visible to any later statement (locks are
      // released after a commit becomes visible). Writers still holding the lock bound it by
      // their transaction id; one without an id yet will get one at or above xmax. pg_locks is
      // read once (MATERIALIZED) so the writer lock and the transaction id come from one picture.
      `CREATE FUNCTION {s}.change_horizon() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        x0 bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        low bigint := x0 % 4294967296;
        oldest bigint;
      BEGIN
        WITH l AS MATERIALIZED (
          SELECT locktype, pid, classid, objid, objsubid, database, transactionid, mode, granted
          FROM pg_locks
        ), writers AS (
          SELECT pid FROM l
          WHERE locktype = 'advisory' AND objsubid = 2 AND classid = 6843252
            AND objid::bigint = (hashtext('{s}')::bigint & 4294967295)
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        )
        SELECT min(x0 + (((l.transactionid::text::bigint - low) % 4294967296 + 6442450944)
          % 4294967296) - 2147483648)
        INTO oldest
        FROM l JOIN writers w ON w.pid = l.pid
        WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted;
        RETURN (least(x0, coalesce(oldest, x0)) + (SELECT xid_offset FROM {s}.change_clock WHERE id = 1)) * 1024;
      END
      $fn$`,
    ],
  },
  {
    version: 4,
    description: "a new message sets its session's last_activity_at in the same write",
    statements: [
      // append_changes gains m_at, the writer's clock: the sessions of the messages it adds
      // (not those it skips as already stored) get last_activity_at = m_at, so a message write
      // is also the session's activity touch. Their rows are locked in id order first (rows of
      // sessions this batch created are among them), as the per-session locks (version 3) are
      // taken in key order, so two batches touching the same sessions cannot deadlock. The 16-argument
      // version stays for processes of the previous version still running during an upgrade
      // (they touch the session themselves).
      `CREATE FUNCTION {s}.append_changes(
        m_ord integer[], m_id text[], m_role text[], m_content text[], m_sender text[],
        m_recipient text[], m_branch text[], m_session text[], m_created double precision[],
        s_ord integer[], s_write uuid[], s_session text[], s_kind text[], s_op text[],
        s_ts double precision[], s_payload text[], m_at double precision
      ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        total integer := coalesce(array_length(m_ord, 1), 0) + coalesce(array_length(s_ord, 1), 0);
        base bigint;
        active text[];
      BEGIN
        IF total > 1023 THEN
          RAISE EXCEPTION 'append_changes takes at most 1023 rows, got %', total;
        END IF;
        PERFORM pg_advisory_xact_lock_shared(6843252, hashtext('{s}'));
        PERFORM pg_advisory_xact_lock(k) FROM (
          SELECT DISTINCT hashtextextended('{s}:' || v, 0) AS k FROM unnest(s_session) AS v
        ) AS keys ORDER BY k;
        SELECT (pg_current_xact_id()::text::bigint + xid_offset) * 1024 INTO base
        FROM {s}.change_clock WHERE id = 1;
        INSERT INTO {s}.sessions (id, status)
        SELECT d.v, '"created"' FROM (
          SELECT DISTINCT v FROM unnest(m_session || s_session) AS v WHERE v IS NOT NULL
        ) AS d
        WHERE NOT EXISTS (SELECT 1 FROM {s}.sessions x WHERE x.id = d.v)
        ORDER BY d.v
        ON CONFLICT (id) DO NOTHING;
        WITH added AS (
          INSERT INTO {s}.messages
            (id, change_seq, role, content, sender, recipient, branch_id, session_id, created_at)
          SELECT t.id, base + t.ord, t.role, t.content, t.sender, t.recipient, t.branch, t.session, t.created
          FROM unnest(m_ord, m_id, m_role, m_content, m_sender, m_recipient, m_branch, m_session, m_created)
            AS t(ord, id, role, content, sender, recipient, branch, session, created)
          WHERE NOT EXISTS (SELECT 1 FROM {s}.messages x WHERE x.id = t.id)
          ORDER BY t.ord
          ON CONFLICT (id) DO NOTHING
          RETURNING session_id
        )
        SELECT array_agg(DISTINCT session_id) INTO active FROM added WHERE session_id IS NOT NULL;
        IF active IS NOT NULL THEN
          PERFORM 1 FROM {s}.sessions WHERE id = ANY (active) ORDER BY id FOR UPDATE;
          UPDATE {s}.sessions SET last_activity_at = m_at WHERE id = ANY (active);
        END IF;
        INSERT INTO {s}.signals (session_id, seq, change_seq, write_id, kind, op_id, ts, payload)
        SELECT t.session,
          coalesce((SELECT max(x.seq) FROM {s}.signals x WHERE x.session_id = t.session), 0)
            + row_number() OVER (PARTITION BY t.session ORDER BY t.ord),
          base + t.ord, t.write, t.kind, t.op, t.ts, t.payload
        FROM unnest(s_ord, s_write, s_session, s_kind, s_op, s_ts, s_payload)
          AS t(ord, write, session, kind, op, ts, payload)
        WHERE NOT EXISTS (SELECT 1 FROM {s}.signals y WHERE y.write_id = t.write);
        RETURN base + total;
      END
      $fn$`,
    ],
  },
];

/** The schema version this code writes. */
export const PG_SCHEMA_VERSION: number = PG_MIGRATIONS[PG_MIGRATIONS.length - 1].version;
