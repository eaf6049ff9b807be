-- faction is, for a post on the faction-only channel, the only faction that
-- may read it; NULL for a post everybody reads (the only kind before this).
ALTER TABLE posts ADD COLUMN faction TEXT CHECK (faction IS NULL OR faction IN ('FBI', 'MIB'));
