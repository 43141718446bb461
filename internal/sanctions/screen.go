package sanctions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/personname"
)

// MaxEvidence bounds the matches a result (and a recorded check) carries: the best ones.
const MaxEvidence = 10

// candidateLimit bounds the names the trigram index hands to exact scoring per screening.
const candidateLimit = 500

// ErrNoActiveList: no list has been ingested, so there is nothing to screen against. Screening
// against nothing is not a CLEAR: it is an error, and every gate fails closed on it.
var ErrNoActiveList = errors.New("sanctions: no sanctions list has been ingested (run wagerail sanctions ingest)")

// ErrListOutdated: an active list version's names were normalised by older rules than this
// screener's (NormalizerVersion), so comparing them with a name normalised now could miss a match
// either side would find. Screening refuses until wagerail sanctions rescreen (Renormalize) has
// rewritten them: it fails closed.
var ErrListOutdated = errors.New("sanctions: the active sanctions lists were normalised by older matching rules (run wagerail sanctions rescreen)")

// Evidence is one listed entry a name matched.
type Evidence struct {
	EntryID     int64     `json:"entryId"`
	ListSource  Source    `json:"listSource"`
	ListVersion int64     `json:"listVersion"`
	SourceRef   string    `json:"sourceRef"`
	EntryType   EntryType `json:"entryType"`
	PrimaryName string    `json:"primaryName"`
	// MatchedName is the entry's name (primary or alias) closest to the subject's, and NameKind
	// which it is.
	MatchedName string   `json:"matchedName"`
	NameKind    NameKind `json:"nameKind"`
	// Score is the final score (name similarity adjusted by date of birth), rounded to 4 places.
	Score    float64  `json:"score"`
	DOBMatch DOBMatch `json:"dobMatch"`
	Outcome  Outcome  `json:"outcome"`
}

// Result is one screening of a name.
type Result struct {
	Name string `json:"name"`
	// OtherNames are the subject's other names screened with this one, whose screenings were
	// not worse (Worse); "" never.
	OtherNames []string `json:"otherNames,omitempty"`
	// DOB is the subject's date of birth as screened (YYYY-MM-DD), "" when none.
	DOB     string  `json:"dob,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Score is the best final score over every candidate (also when CLEAR).
	Score float64 `json:"score"`
	// Evidence holds the matches that are not CLEAR, best first, at most MaxEvidence.
	Evidence []Evidence `json:"evidence"`
	// ListVersions are the active versions screened against, by id.
	ListVersions []int64 `json:"listVersions"`
	// Reason says why the outcome is at least a REVIEW whatever the lists hold: the name could
	// not be brought to Latin with confidence (see Unscreenable). "" otherwise.
	Reason string `json:"reason,omitempty"`
	// NormalizerVersion is the version of the matching rules the name was screened with.
	NormalizerVersion int `json:"normalizerVersion"`
}

// ValidName checks a name the edge takes to screen later (a KYC submission's full name):
// field.Name's rules, and once normalised it must still hold a letter or digit, which Screen
// needs to compare it with anything.
func ValidName(fieldName, name string) error {
	if err := field.Name(fieldName, name); err != nil {
		return err
	}
	if len(matchTokens(personname.Normalize(name))) == 0 {
		return &field.Error{Field: fieldName, Problem: noLetter}
	}
	return nil
}

const noLetter = "must contain a letter or digit"

// Screen screens a person's (or organization's) name, and date of birth when known (zero:
// unknown), against every active list version. Candidates come from the trigram index (pg_trgm
// similarity, or word similarity of the name to part of a listed name); each is then scored
// exactly (NameScore, adjusted by date of birth) and the best score per entry decides its
// outcome. The result's outcome is the worst over all entries.
//
// b is a pool or the caller's transaction, of any role: the lists are readable by the runtime
// role. Screen writes nothing (see RecordCheck): it reads in a transaction (a savepoint inside
// the caller's) that it rolls back.
//
// A name Unscreenable finds fault with (a script the screener cannot bring to Latin, Arabic script,
// a word mixing scripts) is at least a REVIEW, with the Reason, whatever the lists hold: it fails
// closed. A name with a look-alike reading (LookalikeReading) is matched in both readings.
//
// Errors: *field.Error for a name that is not a printable name with a letter or digit,
// ErrNoActiveList, ErrListOutdated, a database error.
func Screen(ctx context.Context, b db.Beginner, name string, dob time.Time) (Result, error) {
	name = strings.TrimSpace(name)
	// The edge refuses invisible characters in names (field.Name), but names stored before it did
	// are screened again (Rescreen): refusing them here would leave those subjects out of the
	// re-screening, so they are checked without their invisible characters, which matching
	// ignores anyway.
	if err := field.Name("name", strings.TrimSpace(personname.StripIgnorable(name))); err != nil {
		return Result{}, err
	}
	normalized, lookalike, why := personname.Analyze(name)
	tokens := matchTokens(normalized)
	if len(tokens) == 0 {
		return Result{}, &field.Error{Field: "name", Problem: noLetter}
	}
	res := Result{Name: name, Outcome: Clear, Evidence: []Evidence{}, NormalizerVersion: NormalizerVersion}
	if !dob.IsZero() {
		res.DOB = dob.Format(time.DateOnly)
	}
	tx, err := b.Begin(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("sanctions.screen: %w", err)
	}
	// Read only: rolling back also undoes the SET LOCAL below inside a caller's transaction.
	defer func() { _ = tx.Rollback(ctx) }()
	vs, outdated, err := activeVersions(ctx, tx)
	if err != nil {
		return Result{}, err
	}
	if len(vs) == 0 {
		return Result{}, ErrNoActiveList
	}
	if outdated {
		return Result{}, ErrListOutdated
	}
	res.ListVersions = vs
	// The planner prices a trigram comparison like an integer equality (pg_trgm's functions
	// keep the default cost), so it would rather test every name (a scan of the table, or of
	// any btree index) than ask the trigram index, which is several times faster. Pricing
	// operators at their real weight, for this transaction only, makes it choose the index.
	if _, err := tx.Exec(ctx, `SET LOCAL cpu_operator_cost = 1`); err != nil {
		return Result{}, fmt.Errorf("sanctions.screen: %w", err)
	}
	best, order, err := candidates(ctx, tx, tokens, tokens, vs, dob, candidateLimit)
	if err != nil {
		return Result{}, err
	}
	merge := func(more map[int64]Evidence, moreOrder []int64) {
		for _, id := range moreOrder {
			have, seen := best[id]
			if !seen {
				order = append(order, id)
			}
			if !seen || better(more[id], have) {
				best[id] = more[id]
			}
		}
	}
	if lookalike != normalized {
		// A word in Cyrillic or Greek letters that all look Latin: its look-alike reading is
		// matched too (see LookalikeReading), and each entry keeps its stronger match.
		alt := matchTokens(lookalike)
		more, moreOrder, err := candidates(ctx, tx, alt, alt, vs, dob, candidateLimit)
		if err != nil {
			return Result{}, err
		}
		merge(more, moreOrder)
	}
	// A long name may be a short listed one padded with other names (Min Kang with four given
	// names around it), whose trigrams are too few among the whole name's for the index to
	// offer it: unless the whole name already matched, every two adjacent words are looked up
	// too, and what they find is scored against the whole name. Letters spaced out (G i r m a)
	// are found joined, not in pairs.
	matched := slices.ContainsFunc(order, func(id int64) bool { return best[id].Outcome != Clear })
	for i := 0; !matched && len(tokens) >= windowedFrom && i+1 < min(len(tokens), MaxTokens); i++ {
		if utf8.RuneCountInString(tokens[i]) < 2 || utf8.RuneCountInString(tokens[i+1]) < 2 {
			continue
		}
		more, moreOrder, err := candidates(ctx, tx, tokens[i:i+2], tokens, vs, dob, windowLimit)
		if err != nil {
			return Result{}, err
		}
		merge(more, moreOrder)
	}
	for _, id := range order {
		ev := best[id]
		res.Score = math.Max(res.Score, ev.Score)
		if ev.Outcome.rank() > res.Outcome.rank() {
			res.Outcome = ev.Outcome
		}
		if ev.Outcome != Clear {
			res.Evidence = append(res.Evidence, ev)
		}
	}
	slices.SortFunc(res.Evidence, func(a, b Evidence) int {
		switch {
		case a.Outcome.rank() != b.Outcome.rank():
			return b.Outcome.rank() - a.Outcome.rank()
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.EntryID < b.EntryID:
			return -1
		case a.EntryID > b.EntryID:
			return 1
		}
		return 0
	})
	if len(res.Evidence) > MaxEvidence {
		res.Evidence = res.Evidence[:MaxEvidence]
	}
	if why != "" {
		res.Reason = why
		if res.Outcome.rank() < Review.rank() {
			res.Outcome = Review
		}
	}
	return res, nil
}

// windowedFrom is the token count from which a name is also looked up two tokens at a time, and
// windowLimit how many listed names each pair brings (the closest by trigram similarity: a listed
// name of those two words is among the first).
const (
	windowedFrom = 4
	windowLimit  = 25
)

// candidates scores against tokens the (at most limit) listed names the trigram index offers for
// query (tokens itself, or a part of it) and keeps each entry's best match; order lists the entries as first
// seen. A query with a token of one letter is looked up joined into one word as well: its letters
// spaced out (G i r m a W o l d e) share no trigram with the listed name, joined they share most
// (the scorer reads the pieces as words again: rejoin).
func candidates(ctx context.Context, tx pgx.Tx, query, tokens []string, versions []int64, dob time.Time, limit int) (map[int64]Evidence, []int64, error) {
	match, rank, args := `n.normalized % $1 OR n.normalized %> $1`, `similarity(n.normalized, $1)`,
		[]any{strings.Join(query, " "), versions, limit}
	if slices.ContainsFunc(query, func(t string) bool { return utf8.RuneCountInString(t) == 1 }) {
		match, rank = match+` OR n.normalized % $4`, `greatest(`+rank+`, similarity(n.normalized, $4))`
		args = append(args, strings.Join(query, ""))
	}
	rows, err := tx.Query(ctx, `
		SELECT e.id, v.id, v.source, e.source_ref, e.entry_type, e.primary_name, e.dobs, n.name, n.normalized, n.kind
		FROM app.sanctions_names n
		JOIN app.sanctions_entries e ON e.id = n.entry_id
		JOIN app.sanctions_list_versions v ON v.id = n.version_id
		WHERE n.version_id = ANY($2) AND (`+match+`)
		ORDER BY `+rank+` DESC, n.entry_id
		LIMIT $3`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("sanctions.screen: %w", err)
	}
	defer rows.Close()
	best := map[int64]Evidence{}
	var order []int64
	for rows.Next() {
		var ev Evidence
		var src, typ, kind, normName string
		var dobs []string
		if err := rows.Scan(&ev.EntryID, &ev.ListVersion, &src, &ev.SourceRef, &typ, &ev.PrimaryName, &dobs,
			&ev.MatchedName, &normName, &kind); err != nil {
			return nil, nil, fmt.Errorf("sanctions.screen: %w", err)
		}
		ev.ListSource, ev.EntryType, ev.NameKind = Source(src), EntryType(typ), NameKind(kind)
		cand := matchTokens(normName)
		ev.DOBMatch = CompareDOB(dob, dobs)
		score := adjust(tokenScore(tokens, cand), ev.DOBMatch)
		ev.Score = math.Round(score*1e4) / 1e4
		ev.Outcome = Decide(ev.Score, ev.NameKind == WeakAlias)
		have, seen := best[ev.EntryID]
		if !seen {
			order = append(order, ev.EntryID)
		}
		if !seen || better(ev, have) {
			best[ev.EntryID] = ev
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sanctions.screen: %w", err)
	}
	return best, order, nil
}

// MaxOtherNames bounds a check's other names (the database checks it too).
const MaxOtherNames = 4

// Worse is whichever of two screenings of one subject (the name on a document and the name on
// record, say) holds it back more: the worse outcome, then the higher score; a when they tie.
// The other screening's names join its OtherNames (at most MaxOtherNames, each name once), so a
// recorded check re-screens the subject under all of them.
func Worse(a, b Result) Result {
	w, o := a, b
	if b.Outcome.rank() > a.Outcome.rank() || b.Outcome == a.Outcome && b.Score > a.Score {
		w, o = b, a
	}
	names := slices.Clone(w.OtherNames)
	for _, n := range append([]string{o.Name}, o.OtherNames...) {
		if len(names) < MaxOtherNames && Key(n) != Key(w.Name) && !slices.ContainsFunc(names, func(m string) bool { return Key(m) == Key(n) }) {
			names = append(names, n)
		}
	}
	w.OtherNames = names
	return w
}

// better reports whether a is the stronger match of one entry than b: a worse outcome first (a
// BLOCK on an alias beats a higher-scoring weak alias), then a higher score.
func better(a, b Evidence) bool {
	if a.Outcome.rank() != b.Outcome.rank() {
		return a.Outcome.rank() > b.Outcome.rank()
	}
	return a.Score > b.Score
}

// activeVersions are the ids of the active versions, ascending, and whether any of them was
// normalised by rules older than NormalizerVersion.
func activeVersions(ctx context.Context, q db.Querier) ([]int64, bool, error) {
	rows, err := q.Query(ctx, `SELECT id, normalizer_version < $1 FROM app.sanctions_list_versions WHERE active ORDER BY id`,
		NormalizerVersion)
	if err != nil {
		return nil, false, fmt.Errorf("sanctions: active versions: %w", err)
	}
	var ids []int64
	outdated := false
	var id int64
	var old bool
	_, err = pgx.ForEachRow(rows, []any{&id, &old}, func() error {
		ids = append(ids, id)
		outdated = outdated || old
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("sanctions: active versions: %w", err)
	}
	return ids, outdated, nil
}
