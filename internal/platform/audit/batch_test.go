package audit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestWriteManyInCallersTransaction(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-7", RequestID: "req-9"})
	entries := []audit.Entry{
		{Action: "CreateEmployee", Outcome: audit.Success, TargetType: "Employee", TargetID: "emp_1", Details: map[string]any{"line": 2}},
		{Action: "CreateEmployee", Outcome: audit.Success, TargetType: "Employee", TargetID: "emp_2"},
		{Action: "BulkImportEmployees", Outcome: audit.Denied, Details: map[string]string{"code": "TENANT_MISMATCH"}},
	}
	boom := errors.New("the change failed")
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		require.NoError(t, audit.WriteMany(ctx, tx, entries))
		return boom
	})
	require.ErrorIs(t, err, boom)

	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { return audit.WriteMany(ctx, tx, entries) }))
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { return audit.WriteMany(ctx, tx, nil) }))
	type row struct{ tenant, actor, action, outcome, targetType, targetID, details, request string }
	var got []row
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tenant_id, actor, action, outcome, coalesce(target_type, '-'), coalesce(target_id, '-'),
			details::text, request_id FROM app.audit_log ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.tenant, &r.actor, &r.action, &r.outcome, &r.targetType, &r.targetID, &r.details, &r.request); err != nil {
				return err
			}
			got = append(got, r)
		}
		return rows.Err()
	}))
	require.Equal(t, []row{
		{"tenant-a", "user-7", "CreateEmployee", "SUCCESS", "Employee", "emp_1", `{"line": 2}`, "req-9"},
		{"tenant-a", "user-7", "CreateEmployee", "SUCCESS", "Employee", "emp_2", `{}`, "req-9"},
		{"tenant-a", "user-7", "BulkImportEmployees", "DENIED", "-", "-", `{"code": "TENANT_MISMATCH"}`, "req-9"},
	}, got, "one row per entry, in order, the rolled-back batch left none")
}

func TestWriteManyRefusesIncompleteEntries(t *testing.T) {
	d := testkit.NewDB(t)
	full := tenancy.Scope{TenantID: "tenant-a", Actor: "user-7"}
	ok := audit.Entry{Action: "A", Outcome: audit.Success}
	for name, tc := range map[string]struct {
		scope tenancy.Scope
		e     []audit.Entry
		want  error
	}{
		"no tenant":         {tenancy.Scope{Actor: "u"}, []audit.Entry{ok}, tenancy.ErrNoTenant},
		"no actor":          {tenancy.Scope{TenantID: "t"}, []audit.Entry{ok}, audit.ErrNoActor},
		"no action":         {full, []audit.Entry{ok, {Outcome: audit.Success}}, audit.ErrInvalid},
		"bad outcome":       {full, []audit.Entry{ok, {Action: "A", Outcome: "MAYBE"}}, audit.ErrInvalid},
		"no tenant, empty":  {tenancy.Scope{Actor: "u"}, nil, tenancy.ErrNoTenant},
		"unmarshalable too": {full, []audit.Entry{ok, {Action: "A", Outcome: audit.Success, Details: func() {}}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tenancy.With(context.Background(), tc.scope)
			err := pgx.BeginFunc(ctx, d.App, func(tx pgx.Tx) error { return audit.WriteMany(ctx, tx, tc.e) })
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
	var n int
	ctx := tenancy.With(context.Background(), full)
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log`).Scan(&n)
	}))
	require.Zero(t, n, "one bad entry writes none")
}
