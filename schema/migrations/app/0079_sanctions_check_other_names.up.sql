-- The other names a check screened its subject under. A KYC approval screens the name on the
-- document and the employee's name on record when they differ, and records the worse of the two
-- as name_screened; the other is kept here so that re-screening after a list changes screens
-- both again (before this only name_screened was, and a document name that became listed went
-- unnoticed while the record's name was the one stored).
ALTER TABLE app.sanctions_checks
    ADD COLUMN other_names text[] NOT NULL DEFAULT '{}'
        CHECK (cardinality(other_names) <= 4 AND array_position(other_names, NULL) IS NULL);
