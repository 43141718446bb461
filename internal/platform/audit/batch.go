package audit

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// WriteMany inserts entries in tx for the context's tenant and actor, as Write does for each, in
// one statement: a change that touches thousands of rows (a bulk import) records one row per
// thing it changed without a round trip per row. Every entry is checked before anything is
// written; one incomplete entry writes none.
func WriteMany(ctx context.Context, tx db.Writer, entries []Entry) error {
	s, err := scope(ctx)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	actions, outcomes := make([]string, len(entries)), make([]string, len(entries))
	types, ids, details := make([]string, len(entries)), make([]string, len(entries)), make([]string, len(entries))
	for i, e := range entries {
		d, err := e.check()
		if err != nil {
			return err
		}
		actions[i], outcomes[i], types[i], ids[i], details[i] = e.Action, string(e.Outcome), e.TargetType, e.TargetID, string(d)
	}
	// WITH ORDINALITY keeps the entries' order in the identity column.
	_, err = tx.Exec(ctx, `
		INSERT INTO app.audit_log (tenant_id, actor, action, outcome, target_type, target_id, details, request_id)
		SELECT $1, $2, a.action, a.outcome, NULLIF(a.target_type, ''), NULLIF(a.target_id, ''), a.details::jsonb, NULLIF($3, '')
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
			WITH ORDINALITY AS a (action, outcome, target_type, target_id, details, n)
		ORDER BY a.n`,
		s.TenantID, s.Actor, s.RequestID, actions, outcomes, types, ids, details)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}
