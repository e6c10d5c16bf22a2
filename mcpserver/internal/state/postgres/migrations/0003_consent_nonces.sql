-- The used nonces of host consent (WRITE_APPROVAL=host; the SQLite
-- backend's schema version 5), so that a sealed confirmation is honoured
-- once, by whichever replica sees it first. A nonce is kept until its
-- question has lapsed.

CREATE TABLE consent_nonces (
	nonce      text PRIMARY KEY CHECK (char_length(nonce) BETWEEN 16 AND 64),
	expires_at timestamptz NOT NULL,
	used_at    timestamptz NOT NULL
);
CREATE INDEX consent_nonces_expiry ON consent_nonces (expires_at);
