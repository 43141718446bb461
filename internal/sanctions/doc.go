// Package sanctions owns sanctions screening: the published lists (OFAC SDN, the UN consolidated
// list, national lists in our CSV), matching a name against them, the tenant-scoped record of
// every screening (checks), their review, re-screening after each list update, and the gate the
// money sagas call. It owns app.sanctions_list_versions, app.sanctions_entries,
// app.sanctions_names and app.sanctions_checks (migration app/0012). It must not let a screening
// that could not run pass as CLEAR: every path fails closed.
//
// # Using it
//
// KYC approval (screen, record, decide — in the approval's own transaction):
//
//	dob, err := sanctions.ParseDOB("1980-04-02", now)     // or the zero time when unknown
//	res, err := sanctions.Screen(ctx, tx, fullName, dob)  // reads the active lists; writes nothing
//	check, err := sanctions.RecordCheck(ctx, tx, tenant,
//		sanctions.Subject{Type: sanctions.SubjectEmployee, ID: employeeID, UserID: linkedUserID}, res)
//	if res.Outcome == sanctions.Block { … refuse the approval (409 SANCTIONS_BLOCKED) … }
//
// RecordCheck writes the check and its audit row (SanctionsScreened) in the caller's transaction,
// so the check exists exactly when the decision it informed does. To keep a refused approval's
// check while rolling the approval back, record it in a transaction of its own. A REVIEW or
// BLOCK is recorded with needs_review set; a platform admin decides it (ResolveReview, route
// POST /api/sanctions/checks/{id}/review): a REVIEW may be CLEARED (false positive), any hit
// CONFIRMED. A BLOCK is never cleared in the application.
//
// The money sagas' pre-disburse gate (after the KYC gate, before the account lookup):
//
//	err := sanctions.Gate(ctx, tx, tenant, sanctions.SubjectEmployee, employeeID)
//	// nil: go on; otherwise refuse. sanctions.GateCode(err) is the stable error type:
//	// SANCTIONS_BLOCKED, SANCTIONS_REVIEW_PENDING, SANCTIONS_NOT_SCREENED, SANCTIONS_LIST_STALE,
//	// or SANCTIONS_GATE_UNAVAILABLE for an error that is not a decision (retry).
//
// Gate passes only when the subject's latest check is CLEAR (or a REVIEW a reviewer cleared) and
// ran against exactly the list versions active now, under the current matching rules
// (NormalizerVersion); no check, a stale check, a BLOCK, an undecided REVIEW, a database error or
// a cancelled context all refuse. An employee is paid under their name on record: GateAs also
// screens that name when the latest check screened another (a KYC document's name, or the
// record's before a rename), and refuses unless it is CLEAR.
//
// # Lists
//
// The lists are global rows readable by the runtime role and written only by Ingest, which runs as
// wagerail_platform on the audited cross-tenant path (`wagerail sanctions ingest`). A version is
// named by the content hash of its files: the same files again change nothing; a new version is
// loaded and made active in one transaction, so a malformed or truncated file (refused with its
// line number) or any failure leaves the previous version active. A new version with less than
// half the entries of the active one is refused unless AllowShrink (a file cut at a line
// boundary parses cleanly; this is the check that catches it). Putting back a superseded version
// is refused.
//
// After an ingest the CLI runs Rescreen: every subject, in every tenant, whose latest check passes
// is screened again against the new versions; a new hit is recorded as needing review (so the
// gate closes) and announced with a sanctions.review_required.v1 outbox event in its tenant.
//
// The matching rules are versioned (NormalizerVersion, recorded on every list version and every
// check; migration app/0021). After a build with new rules is deployed, screening refuses lists
// normalised under older rules (ErrListOutdated) and the gate refuses checks made under them
// (SANCTIONS_LIST_STALE) until `wagerail sanctions rescreen` runs Rescreen, which first rewrites
// the lists' normalised names (Renormalize) and then re-screens every subject due: a name the old
// rules cleared and the new ones catch (issue 21: a listed name with invisible characters inside)
// becomes a hit needing review.
//
// # Matching
//
// Names are compared token by token, in any order, in the form of the one name normaliser,
// internal/platform/personname (the gateway's holder-name match uses it too). Normalize removes invisible
// characters (default-ignorable and format characters: zero-width spaces and joiners, soft hyphen,
// BOM, variation selectors, tag characters, bidi controls), applies NFKC, folds case and
// diacritics and punctuation, transliterates Ethiopic, Arabic, Cyrillic and Greek words to Latin
// and folds letters of other scripts that look like Latin ones inside a Latin word to them
// (Unicode TR39 confusables, personname.ConfusablesVersion); a whole word of Cyrillic or Greek letters
// that look Latin is matched in both readings (LookalikeReading). A name it cannot bring to
// Latin with confidence (another script; Arabic script, whose transliteration finds the listed
// Latin spelling only part of the time, as the recall test measures; a word mixing scripts that
// does not fold) is at least a REVIEW with a reason (Unscreenable): screening fails closed.
// Titles a name starts with (Mr, Dr, Sheikh, Haji, Ato, W/ro, …) are not matched. NameScore: Jaro–Winkler per token, vowel-insensitive for
// transliteration variants (and insensitive to doubled letters against a spelling without them,
// as Arabic writes names), best pairing, weighted by length. A name whose words are broken up
// (Gir-ma Wol.de, letters spaced out: G i r m a) is read with its pieces joined into the listed
// name's words again (rejoin), at rejoinWeight: a REVIEW, a BLOCK with the listed date of birth.
// Candidates come from a pg_trgm index (a name with one-letter pieces is looked up joined as
// well); exact scoring is in Go. A date of birth on both sides raises (DOBBoost) or lowers
// (DOBPenalty) the score. Decide maps the final score to CLEAR / REVIEW (≥ ReviewThreshold) /
// BLOCK (≥ BlockThreshold); a match on a weak alias is at most a REVIEW.
package sanctions
