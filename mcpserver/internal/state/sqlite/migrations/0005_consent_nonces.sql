-- 5: the used nonces of host consent (WRITE_APPROVAL=host), so that a
-- sealed confirmation is honoured once, by whichever process sees it
-- first. A nonce is kept until its question has lapsed.

CREATE TABLE consent_nonces (
	nonce      TEXT PRIMARY KEY CHECK (length(nonce) BETWEEN 16 AND 64),
	expires_at TEXT NOT NULL,
	used_at    TEXT NOT NULL
);
CREATE INDEX consent_nonces_expiry ON consent_nonces (expires_at);
