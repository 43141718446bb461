-- Issue 21: screening evasion. The normaliser that puts names in the form they are matched in
-- (internal/sanctions.Normalize) changed: invisible characters removed, NFKC, look-alike letters
-- of other scripts folded to Latin, Arabic/Cyrillic/Greek transliterated. A name matched under
-- older rules may match now (Usama bin Ladin with a WORD JOINER inside screened CLEAR), so:
--
-- * each list version records the normaliser version its sanctions_names.normalized were made
--   with; screening refuses (fails closed) while an active version was normalised by older rules,
--   and the re-screening job (wagerail sanctions rescreen, also run after every ingest) rewrites
--   them first. Rows from before this migration were made by version 1.
-- * each check records the normaliser version it was screened with; the gate treats a check made
--   by an older version as stale (SANCTIONS_LIST_STALE) until it is re-screened. An insert that
--   does not say which version it ran with gets 1 — the oldest — so it is stale: fail closed.
-- * a check may carry the reason it is a REVIEW without a list match (a name in a script the
--   screener cannot bring to Latin, or a word mixing scripts).
ALTER TABLE app.sanctions_list_versions ADD COLUMN normalizer_version integer NOT NULL DEFAULT 1
    CHECK (normalizer_version >= 1);
ALTER TABLE app.sanctions_checks ADD COLUMN normalizer_version integer NOT NULL DEFAULT 1
    CHECK (normalizer_version >= 1);
ALTER TABLE app.sanctions_checks ADD COLUMN review_reason text;

-- Renormalising rewrites the normalised forms in place (the list files are not kept, so the
-- version cannot be parsed again); only the platform role, on the audited cross-tenant path.
GRANT UPDATE (normalized_name) ON app.sanctions_entries TO wagerail_platform;
GRANT UPDATE (normalized) ON app.sanctions_names TO wagerail_platform;
