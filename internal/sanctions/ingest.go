package sanctions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/personname"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// IngestActor is who ingestion acts as, in the audit trail, when the context names no one.
var IngestActor = tenancy.System("sanctions-ingest")

// Audit actions of this package.
const (
	ActionListIngested  = "SanctionsListIngested"
	ActionScreened      = "SanctionsScreened"
	ActionReviewDecided = "SanctionsReviewDecided"
	// ActionListRenormalized: a list version's names were rewritten under new matching rules.
	ActionListRenormalized = "SanctionsListRenormalized"
)

// File is one list file: its name (for error messages) and its content.
type File struct {
	Name string
	Data []byte
}

// ReadFile reads a list file of at most MaxFileBytes from r.
func ReadFile(name string, r io.Reader) (File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return File{}, perr(name, 0, "larger than %d bytes", MaxFileBytes)
	}
	return File{Name: name, Data: data}, nil
}

// Parse reads a source's files: OFAC takes the SDN file then the alternate names file; UN and
// National take one file.
func Parse(src Source, files ...File) (List, error) {
	want := map[Source]int{OFAC: 2, UN: 1, National: 1}[src]
	if want == 0 {
		return List{}, fmt.Errorf("sanctions: unknown list source %q", src)
	}
	if len(files) != want {
		return List{}, fmt.Errorf("sanctions: %s takes %d file(s), got %d", src, want, len(files))
	}
	switch src {
	case OFAC:
		return ParseOFAC(files[0].Name, files[0].Data, files[1].Name, files[1].Data)
	case UN:
		return ParseUN(files[0].Name, files[0].Data)
	}
	return ParseNational(files[0].Name, files[0].Data)
}

// ContentHash names a list version: SHA-256 over the source and each file's own SHA-256, in
// order, so the same publication gives the same hash whatever the files are called.
func ContentHash(src Source, files ...File) string {
	h := sha256.New()
	h.Write([]byte("wagerail-sanctions-v1\x00" + string(src) + "\x00"))
	for _, f := range files {
		s := sha256.Sum256(f.Data)
		h.Write(s[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IngestOptions tune Ingest.
type IngestOptions struct {
	// AllowShrink lets a version with fewer than ShrinkLimit of the active version's entries, or
	// for OFAC of its names besides the entries' own (aliases, a file of their own), become active (a list really cut down); without it such a file is refused as likely
	// truncated at a line boundary, which no parser can see.
	AllowShrink bool
}

// ShrinkLimit: a new version with fewer entries, or for OFAC fewer names besides the entries'
// own, than this share of the active one's is refused unless IngestOptions.AllowShrink.
const ShrinkLimit = 0.5

// IngestReport is what Ingest did.
type IngestReport struct {
	Source      Source `json:"source"`
	Version     int64  `json:"version"`
	ContentHash string `json:"contentHash"`
	Entries     int    `json:"entries"`
	Names       int    `json:"names"`
	// SkippedAliases: see List.SkippedAliases.
	SkippedAliases int `json:"skippedAliases"`
	// Unchanged: this content is already the active version; nothing was written.
	Unchanged bool `json:"unchanged"`
	// Previous is the version that was active before (0: none, or Unchanged).
	Previous int64 `json:"previousVersion,omitempty"`
}

// Errors Ingest returns (besides *ParseError and database errors).
var (
	// ErrSuperseded: the content is an older version of the source that a newer one replaced.
	// Putting an old list back would drop designations made since; it is refused.
	ErrSuperseded = errors.New("sanctions: this list content was ingested before and has since been superseded")
	// ErrShrank: see IngestOptions.AllowShrink.
	ErrShrank = errors.New("sanctions: the new list has far fewer entries or aliases than the active one")
)

// Ingest parses a source's files and, unless the same content is already active, loads them as a
// new version and makes it the source's active version — all in one transaction on the audited
// cross-tenant path, so screening sees either the previous version or the complete new one, and
// any failure (a malformed line, a database error, a cancelled context) leaves the previous
// version active and nothing of the new one behind. Entries of versions that stop being active
// are deleted in the same transaction. platform must log in as wagerail_platform, the one role
// that may write the lists; the context's actor is recorded (IngestActor when none).
//
// Errors: *ParseError (nothing written), ErrSuperseded, ErrShrank, crosstenant's errors, a
// database error.
func Ingest(ctx context.Context, platform db.Beginner, src Source, opts IngestOptions, files ...File) (IngestReport, error) {
	list, err := Parse(src, files...)
	if err != nil {
		return IngestReport{}, err
	}
	if tenancy.Actor(ctx) == "" {
		ctx = tenancy.WithActor(ctx, IngestActor)
	}
	rep := IngestReport{Source: src, ContentHash: ContentHash(src, files...), Entries: len(list.Entries),
		Names: list.Names(), SkippedAliases: list.SkippedAliases}
	err = crosstenant.Tx(ctx, platform, "sanctions list ingest "+string(src), func(tx pgx.Tx) error {
		r, err := load(ctx, tx, list, rep, opts)
		rep = r
		return err
	})
	if err != nil {
		return IngestReport{}, err
	}
	return rep, nil
}

func load(ctx context.Context, tx pgx.Tx, list List, rep IngestReport, opts IngestOptions) (IngestReport, error) {
	src := list.Source
	// One ingest of a source at a time; the second waits and then sees the first's version.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('app.sanctions_ingest:' || $1))`, string(src)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: %w", err)
	}
	var existing int64
	var existingActive bool
	err := tx.QueryRow(ctx, `SELECT id, active FROM app.sanctions_list_versions WHERE source = $1 AND content_hash = $2`,
		string(src), rep.ContentHash).Scan(&existing, &existingActive)
	switch {
	case err == nil && existingActive:
		rep.Version, rep.Unchanged = existing, true
		return rep, nil
	case err == nil:
		return rep, fmt.Errorf("%w (version %d)", ErrSuperseded, existing)
	case !errors.Is(err, pgx.ErrNoRows):
		return rep, fmt.Errorf("sanctions.ingest: %w", err)
	}
	var prevEntries, prevNames int
	err = tx.QueryRow(ctx, `SELECT id, entry_count, name_count FROM app.sanctions_list_versions WHERE source = $1 AND active`,
		string(src)).Scan(&rep.Previous, &prevEntries, &prevNames)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return rep, fmt.Errorf("sanctions.ingest: %w", err)
	}
	if rep.Previous != 0 && !opts.AllowShrink {
		// Entries, and for OFAC the names besides the entries' own: its aliases come in a file of
		// their own, which may be cut while every entry is there. (The other lists hold an
		// entry's aliases in its record: a cut file loses entries.)
		checks := []struct {
			what      string
			now, prev int
		}{{"entries", rep.Entries, prevEntries}}
		if src == OFAC {
			checks = append(checks, struct {
				what      string
				now, prev int
			}{"names besides the entries' own", rep.Names - rep.Entries, prevNames - prevEntries})
		}
		for _, c := range checks {
			if float64(c.now) < ShrinkLimit*float64(c.prev) {
				return rep, fmt.Errorf("%w (%d %s, the active version %d has %d); if the list really shrank, ingest it with --allow-shrink",
					ErrShrank, c.now, c.what, rep.Previous, c.prev)
			}
		}
	}
	if err := tx.QueryRow(ctx, `INSERT INTO app.sanctions_list_versions (source, content_hash, entry_count, name_count, ingested_by, normalizer_version)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, string(src), rep.ContentHash, rep.Entries, rep.Names,
		tenancy.Actor(ctx), NormalizerVersion).Scan(&rep.Version); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: version: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT nextval('app.sanctions_entry_ids') FROM generate_series(1, $1)`, len(list.Entries))
	if err != nil {
		return rep, fmt.Errorf("sanctions.ingest: ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return rep, fmt.Errorf("sanctions.ingest: ids: %w", err)
	}
	entryRows := make([][]any, len(list.Entries))
	nameRows := make([][]any, 0, rep.Names)
	for i, e := range list.Entries {
		dobs, programs := e.DOBs, e.Programs
		if dobs == nil {
			dobs = []string{}
		}
		if programs == nil {
			programs = []string{}
		}
		entryRows[i] = []any{ids[i], rep.Version, e.SourceRef, string(e.Type), e.Names[0].Name, e.Names[0].Normalized, dobs, programs}
		for _, n := range e.Names {
			nameRows = append(nameRows, []any{ids[i], rep.Version, string(n.Kind), n.Name, n.Normalized})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"app", "sanctions_entries"},
		[]string{"id", "version_id", "source_ref", "entry_type", "primary_name", "normalized_name", "dobs", "programs"},
		pgx.CopyFromRows(entryRows)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: entries: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"app", "sanctions_names"},
		[]string{"entry_id", "version_id", "kind", "name", "normalized"}, pgx.CopyFromRows(nameRows)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: names: %w", err)
	}
	// The swap: the old version off, the new one on. The partial unique index holds at most one
	// active per source at every statement's end.
	if _, err := tx.Exec(ctx, `UPDATE app.sanctions_list_versions SET active = false WHERE source = $1 AND active`, string(src)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: deactivate: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.sanctions_list_versions SET active = true WHERE id = $1`, rep.Version); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: activate: %w", err)
	}
	// Entries of inactive versions are no longer screened against; checks keep their own copy
	// of the evidence, so nothing refers to them.
	if _, err := tx.Exec(ctx, `DELETE FROM app.sanctions_names WHERE version_id IN
		(SELECT id FROM app.sanctions_list_versions WHERE source = $1 AND NOT active)`, string(src)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: prune: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM app.sanctions_entries WHERE version_id IN
		(SELECT id FROM app.sanctions_list_versions WHERE source = $1 AND NOT active)`, string(src)); err != nil {
		return rep, fmt.Errorf("sanctions.ingest: prune: %w", err)
	}
	err = audit.Write(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), tx, audit.Entry{
		Action: ActionListIngested, Outcome: audit.Success, TargetType: "SanctionsListVersion", TargetID: fmt.Sprint(rep.Version),
		Details: map[string]any{"source": src, "contentHash": rep.ContentHash, "entries": rep.Entries, "names": rep.Names,
			"skippedAliases": rep.SkippedAliases, "previousVersion": rep.Previous},
	})
	return rep, err
}

// ListVersion is one ingested version of a source.
type ListVersion struct {
	ID          int64     `json:"id"`
	Source      Source    `json:"source"`
	ContentHash string    `json:"contentHash"`
	Entries     int       `json:"entries"`
	Names       int       `json:"names"`
	IngestedAt  time.Time `json:"ingestedAt"`
	Active      bool      `json:"active"`
	// NormalizerVersion is the version of the matching rules its names were normalised with;
	// one older than NormalizerVersion must be renormalised (Renormalize) before screening.
	NormalizerVersion int `json:"normalizerVersion"`
}

// ActiveVersions are the versions screening uses now, one per source that has been ingested,
// by id.
func ActiveVersions(ctx context.Context, q db.Querier) ([]ListVersion, error) {
	rows, err := q.Query(ctx, `SELECT id, source, content_hash, entry_count, name_count, ingested_at, active, normalizer_version
		FROM app.sanctions_list_versions WHERE active ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sanctions.active_versions: %w", err)
	}
	vs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListVersion, error) {
		var v ListVersion
		var src string
		err := r.Scan(&v.ID, &src, &v.ContentHash, &v.Entries, &v.Names, &v.IngestedAt, &v.Active, &v.NormalizerVersion)
		v.Source = Source(src)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("sanctions.active_versions: %w", err)
	}
	return vs, nil
}

// Renormalize rewrites the normalised names of every active list version that was normalised by
// older matching rules than NormalizerVersion, in place (the list files are not kept), and
// records the current version on it: until then Screen refuses to screen against it
// (ErrListOutdated), since a name normalised now and a listed name normalised under other rules
// may fail to meet (a listed Arabic-script alias, say, is transliterated now). A name with no
// letter or digit left under the new rules is dropped. Each version is rewritten in one
// transaction on the audited cross-tenant path, under the same lock as an ingest of its source.
// It returns how many versions it rewrote; Rescreen runs it first. platform must log in as
// wagerail_platform.
func Renormalize(ctx context.Context, platform db.Beginner) (int, error) {
	if tenancy.Actor(ctx) == "" {
		ctx = tenancy.WithActor(ctx, IngestActor)
	}
	done := 0
	for {
		rewrote := false
		err := crosstenant.Tx(ctx, platform, "sanctions list renormalisation", func(tx pgx.Tx) error {
			var id int64
			var src string
			var was int
			err := tx.QueryRow(ctx, `SELECT id, source, normalizer_version FROM app.sanctions_list_versions
				WHERE active AND normalizer_version < $1 ORDER BY id LIMIT 1`, NormalizerVersion).Scan(&id, &src, &was)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("sanctions.renormalize: %w", err)
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('app.sanctions_ingest:' || $1))`, src); err != nil {
				return fmt.Errorf("sanctions.renormalize: %w", err)
			}
			// An ingest may have swapped the version out while this waited for the lock.
			var still bool
			if err := tx.QueryRow(ctx, `SELECT active AND normalizer_version < $2 FROM app.sanctions_list_versions WHERE id = $1`,
				id, NormalizerVersion).Scan(&still); err != nil {
				return fmt.Errorf("sanctions.renormalize: %w", err)
			}
			if !still {
				rewrote = true // look again
				return nil
			}
			if err := renormalizeVersion(ctx, tx, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE app.sanctions_list_versions SET normalizer_version = $2 WHERE id = $1`,
				id, NormalizerVersion); err != nil {
				return fmt.Errorf("sanctions.renormalize: %w", err)
			}
			rewrote = true
			done++
			return audit.Write(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), tx, audit.Entry{
				Action: ActionListRenormalized, Outcome: audit.Success, TargetType: "SanctionsListVersion", TargetID: fmt.Sprint(id),
				Details: map[string]any{"source": src, "fromNormalizerVersion": was, "toNormalizerVersion": NormalizerVersion},
			})
		})
		if err != nil {
			return done, err
		}
		if !rewrote {
			return done, nil
		}
	}
}

// renormalizeVersion rewrites one version's normalised names and primary names.
func renormalizeVersion(ctx context.Context, tx pgx.Tx, version int64) error {
	rows, err := tx.Query(ctx, `SELECT entry_id, name FROM app.sanctions_names WHERE version_id = $1`, version)
	if err != nil {
		return fmt.Errorf("sanctions.renormalize: %w", err)
	}
	var ids []int64
	var names, normalized []string
	var id int64
	var name string
	if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		ids, names, normalized = append(ids, id), append(names, name), append(normalized, personname.Normalize(name))
		return nil
	}); err != nil {
		return fmt.Errorf("sanctions.renormalize: %w", err)
	}
	// Names are unique per entry (Entry.addName keeps one per normalised form, and one raw name
	// has one), so (entry, name) finds the row.
	if _, err := tx.Exec(ctx, `DELETE FROM app.sanctions_names n USING unnest($2::bigint[], $3::text[], $4::text[]) AS u(entry_id, name, normalized)
		WHERE n.version_id = $1 AND n.entry_id = u.entry_id AND n.name = u.name AND u.normalized = ''`,
		version, ids, names, normalized); err != nil {
		return fmt.Errorf("sanctions.renormalize: names: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.sanctions_names n SET normalized = u.normalized
		FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(entry_id, name, normalized)
		WHERE n.version_id = $1 AND n.entry_id = u.entry_id AND n.name = u.name AND u.normalized <> '' AND n.normalized <> u.normalized`,
		version, ids, names, normalized); err != nil {
		return fmt.Errorf("sanctions.renormalize: names: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT id, primary_name FROM app.sanctions_entries WHERE version_id = $1`, version)
	if err != nil {
		return fmt.Errorf("sanctions.renormalize: %w", err)
	}
	ids, normalized = ids[:0], normalized[:0]
	if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		ids, normalized = append(ids, id), append(normalized, personname.Normalize(name))
		return nil
	}); err != nil {
		return fmt.Errorf("sanctions.renormalize: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.sanctions_entries e SET normalized_name = u.normalized
		FROM unnest($2::bigint[], $3::text[]) AS u(id, normalized)
		WHERE e.version_id = $1 AND e.id = u.id AND e.normalized_name <> u.normalized`, version, ids, normalized); err != nil {
		return fmt.Errorf("sanctions.renormalize: entries: %w", err)
	}
	return nil
}
