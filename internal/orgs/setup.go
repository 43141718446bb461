package orgs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// ActivateInvitedMemberships turns every INVITED membership of userID into an ACTIVE one: the
// invited person has just set their password through the link mailed to them, which proves the
// e-mail the admin invited. It returns the tenants whose membership changed (the caller must
// invalidate its access cache for each).
//
// The memberships are found in a transaction scoped to the user alone (RLS shows a user their own
// memberships in every tenant); each is then changed in a transaction scoped to its tenant, with
// its MemberActivated audit row (actor: the user). It is idempotent: a membership already ACTIVE
// (or BANNED meanwhile) is left alone, so a retry after a failure finishes the rest.
func ActivateInvitedMemberships(ctx context.Context, b db.Beginner, userID string) ([]string, error) {
	type invited struct{ tenant, member string }
	var pending []invited
	err := db.InScopedTx(ctx, b, "", userID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tenant_id, id FROM app.members
			WHERE user_id = $1 AND status = 'INVITED' ORDER BY created_at, id`, userID)
		if err != nil {
			return err
		}
		pending, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (invited, error) {
			var p invited
			err := r.Scan(&p.tenant, &p.member)
			return p, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("orgs: invited memberships: %w", err)
	}
	var done []string
	for _, p := range pending {
		actx := tenancy.WithActor(tenancy.WithTenant(ctx, p.tenant), userID)
		changed := false
		err := db.InScopedTx(actx, b, p.tenant, userID, func(tx pgx.Tx) error {
			tag, err := tx.Exec(actx, `UPDATE app.members SET status = 'ACTIVE', updated_at = now()
				WHERE tenant_id = $1 AND id = $2 AND user_id = $3 AND status = 'INVITED'`, p.tenant, p.member, userID)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			changed = true
			return audit.Write(actx, tx, audit.Entry{Action: "MemberActivated", Outcome: audit.Success,
				TargetType: "Member", TargetID: p.member, Details: map[string]string{"from": Invited, "to": Active}})
		})
		if err != nil {
			return done, fmt.Errorf("orgs: activate membership: %w", err)
		}
		if changed {
			done = append(done, p.tenant)
		}
	}
	return done, nil
}
