package activities

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
)

// gateTenant creates an organization and returns its id.
func gateTenant(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	id := orgs.NewOrganizationID()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: id, Actor: tenancy.System("test")})
	require.NoError(t, tenancy.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "Acme", Kind: orgs.Business}, "")
		return err
	}))
	return id
}

func gateInput(tenant, subject, workflowID string) GateInput {
	return GateInput{Saga: "ewa-disburse", Run: Run{TenantID: tenant, WorkflowID: workflowID, CorrelationID: "http-req-1"},
		SubjectType: "EMPLOYEE", SubjectID: subject, TargetType: "EwaRequest", TargetID: "req-" + subject}
}

// gateAudit is one audit row of a gate.
type gateAudit struct {
	Actor, Outcome, TargetType, TargetID, Code, WorkflowID, RequestID, Extra string
}

// gateAudits lists the tenant's audit rows of action for a target, with details[extra].
func gateAudits(t *testing.T, pool *pgxpool.Pool, tenant, action, target, extra string) []gateAudit {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	var out []gateAudit
	require.NoError(t, tenancy.InTx(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT actor, outcome, target_type, target_id, details->>'code', details->>'workflowId',
				coalesce(request_id, ''), coalesce(details->>$3, '')
			FROM app.audit_log WHERE action = $1 AND target_id = $2 ORDER BY id`, action, target, extra)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (gateAudit, error) {
			var a gateAudit
			err := r.Scan(&a.Actor, &a.Outcome, &a.TargetType, &a.TargetID, &a.Code, &a.WorkflowID, &a.RequestID, &a.Extra)
			return a, err
		})
		return err
	}))
	return out
}

// requireRefusal asserts a gate's refusal: non-retryable, typed by code.
func requireRefusal(t *testing.T, err error, code string) {
	t.Helper()
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, code, ae.Type())
	require.True(t, ae.NonRetryable())
	got, ok := GateRefusal(err)
	require.True(t, ok)
	require.Equal(t, code, got)
}

// requireCannotDecide asserts an error that is not a refusal and is retried.
func requireCannotDecide(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	_, refused := GateRefusal(err)
	require.False(t, refused, "%v", err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.False(t, ae.NonRetryable(), "%v", err)
}

func TestKycGateAgainstPostgres(t *testing.T) {
	d := testkit.NewDB(t)
	tenant := gateTenant(t, d.App)
	now := time.Now().UTC()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	// approved: valid for a year; expired: approved with a one-hour validity two hours ago;
	// pending: submitted only; rejected; none: never submitted.
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		for _, c := range []struct {
			subject string
			actions []kyc.Action
			at      time.Time
			valid   time.Duration
		}{
			{"approved", []kyc.Action{kyc.Claim, kyc.Approve}, now, 0},
			{"expired", []kyc.Action{kyc.Claim, kyc.Approve}, now.Add(-2 * time.Hour), time.Hour},
			{"pending", nil, now, 0},
			{"rejected", []kyc.Action{kyc.Claim, kyc.Reject}, now, 0},
		} {
			s, _, err := kyc.Submit(ctx, tx, tenant, kyc.NewSubmission{SubjectType: kyc.SubjectEmployee, SubjectID: c.subject,
				FullName: "Almaz Tesfaye", NationalID: "1", DateOfBirth: now.AddDate(-30, 0, 0), PhotoKey: "p", SubmittedBy: "u"})
			if err != nil {
				return err
			}
			for _, a := range c.actions {
				if _, err := kyc.Transition(ctx, tx, tenant, s.ID, a, kyc.Change{Reviewer: "admin", Note: "checked", Now: c.at, Validity: c.valid}); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	g := &Gates{DB: d.App, Now: func() time.Time { return now }}

	require.NoError(t, g.KycGate(context.Background(), gateInput(tenant, "approved", "wf-1")))
	require.Empty(t, gateAudits(t, d.App, tenant, ActionKycGateBlocked, "req-approved", "kyc"), "a pass writes no refusal")

	for subject, status := range map[string]string{"expired": "EXPIRED", "pending": "NOT_APPROVED", "none": "NOT_APPROVED", "rejected": "NOT_APPROVED"} {
		in := gateInput(tenant, subject, "wf-"+subject)
		requireRefusal(t, g.KycGate(context.Background(), in), GateKycNotApproved)
		// A retried attempt (the first one's answer lost) refuses again without a second row.
		requireRefusal(t, g.KycGate(context.Background(), in), GateKycNotApproved)
		require.Equal(t, []gateAudit{{Actor: "system:ewa-disburse", Outcome: "DENIED", TargetType: "EwaRequest", TargetID: "req-" + subject,
			Code: GateKycNotApproved, WorkflowID: "wf-" + subject, RequestID: "http-req-1", Extra: status}},
			gateAudits(t, d.App, tenant, ActionKycGateBlocked, "req-"+subject, "kyc"), subject)
	}
	// Another saga run refusing the same subject has its own row.
	requireRefusal(t, g.KycGate(context.Background(), gateInput(tenant, "pending", "wf-again")), GateKycNotApproved)
	require.Len(t, gateAudits(t, d.App, tenant, ActionKycGateBlocked, "req-pending", "kyc"), 2)

	// Another tenant's approval does not pass this tenant's gate.
	other := gateTenant(t, d.App)
	requireRefusal(t, g.KycGate(context.Background(), gateInput(other, "approved", "wf-x")), GateKycNotApproved)

	// Bad input is refused, not retried, and writes nothing.
	bad := gateInput(tenant, "approved", "wf-bad")
	bad.SubjectID = "emp\x00"
	err := g.KycGate(context.Background(), bad)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, ErrTypeInvalidArgument, ae.Type())
}

// The database down: the gate cannot decide, which is retryable and never a pass; Failed then
// writes the refusal's one FAILED row, once however often it is called, and not at all when the
// gate had already written its DENIED row.
func TestGatesFailClosedWhenTheDatabaseIsDown(t *testing.T) {
	d := testkit.NewDB(t)
	tenant := gateTenant(t, d.App)
	down, err := db.Open(context.Background(), d.AppDSN, 2)
	require.NoError(t, err)
	down.Close()
	broken := &Gates{DB: down}
	in := gateInput(tenant, "emp-1", "wf-down")
	requireCannotDecide(t, broken.KycGate(context.Background(), in))
	requireCannotDecide(t, broken.SanctionsGate(context.Background(), in))

	g := &Gates{DB: d.App}
	for i := 0; i < 2; i++ {
		require.NoError(t, g.Failed(context.Background(), GateFailedInput{Gate: GateKYC, Input: in, Cause: "DEPENDENCY_FAILED"}))
	}
	require.Equal(t, []gateAudit{{Actor: "system:ewa-disburse", Outcome: "FAILED", TargetType: "EwaRequest", TargetID: "req-emp-1",
		Code: GateKycUnavailable, WorkflowID: "wf-down", RequestID: "http-req-1", Extra: "DEPENDENCY_FAILED"}},
		gateAudits(t, d.App, tenant, ActionKycGateBlocked, "req-emp-1", "cause"))

	denied := gateInput(tenant, "emp-2", "wf-denied")
	requireRefusal(t, g.KycGate(context.Background(), denied), GateKycNotApproved)
	require.NoError(t, g.Failed(context.Background(), GateFailedInput{Gate: GateKYC, Input: denied, Cause: "TIMEOUT"}))
	rows := gateAudits(t, d.App, tenant, ActionKycGateBlocked, "req-emp-2", "cause")
	require.Len(t, rows, 1)
	require.Equal(t, "DENIED", rows[0].Outcome)

	err = g.Failed(context.Background(), GateFailedInput{Gate: "ROBOT", Input: in})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.True(t, ae.NonRetryable())
	require.ErrorContains(t, (&Gates{}).KycGate(context.Background(), in), "no database")
}

func TestSanctionsGateAgainstPostgres(t *testing.T) {
	d := testkit.NewDB(t)
	tenant := gateTenant(t, d.App)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	data, err := os.ReadFile("../internal/sanctions/testdata/national-sample.csv")
	require.NoError(t, err)
	_, err = sanctions.Ingest(ctx, d.Platform(t), sanctions.National, sanctions.IngestOptions{}, sanctions.File{Name: "national-sample.csv", Data: data})
	require.NoError(t, err)
	screen := func(subject, name, dob string) sanctions.Outcome {
		parsed, err := sanctions.ParseDOB(dob, time.Now())
		require.NoError(t, err)
		res, err := sanctions.Screen(ctx, d.App, name, parsed)
		require.NoError(t, err)
		var c sanctions.Check
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			c, err = sanctions.RecordCheck(ctx, tx, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: subject}, res)
			return err
		}))
		return c.Outcome
	}
	require.Equal(t, sanctions.Clear, screen("clear", "Abebe Kebede", "1988-05-01"))
	require.Equal(t, sanctions.Block, screen("blocked", "Tesfaye Worku Demissie", "1975-03-14"))
	require.Equal(t, sanctions.Review, screen("review", "Tesfaye Worku Bekele", ""))

	g := &Gates{DB: d.App}
	require.NoError(t, g.SanctionsGate(context.Background(), gateInput(tenant, "clear", "wf-clear")))
	for subject, code := range map[string]string{"blocked": sanctions.CodeBlocked, "review": sanctions.CodeReview, "never": sanctions.CodeNoCheck} {
		in := gateInput(tenant, subject, "wf-"+subject)
		requireRefusal(t, g.SanctionsGate(context.Background(), in), GateSanctionsBlocked)
		requireRefusal(t, g.SanctionsGate(context.Background(), in), GateSanctionsBlocked)
		require.Equal(t, []gateAudit{{Actor: "system:ewa-disburse", Outcome: "DENIED", TargetType: "EwaRequest", TargetID: "req-" + subject,
			Code: GateSanctionsBlocked, WorkflowID: "wf-" + subject, RequestID: "http-req-1", Extra: code}},
			gateAudits(t, d.App, tenant, ActionSanctionsGateBlocked, "req-"+subject, "sanctionsCode"), subject)
	}
}

func TestAccountGateAgainstGatewayAndSandbox(t *testing.T) {
	d := testkit.NewDB(t)
	tenant := gateTenant(t, d.App)
	sb := sandboxtest.Start(t, d.App, sandboxtest.Options{})
	gw := gatewaytest.Serve(t, d.App, sb.URL, gatewaytest.Options{Guard: func(c *gateway.GuardConfig) { c.RetryBackoff = 10 * time.Millisecond }})
	open, closed := testkit.Unique("EMP"), testkit.Unique("EMP")
	sb.Account(t, open, "Almaz Tesfaye", 0)
	sb.Account(t, closed, "Almaz Tesfaye", 0)
	sb.CloseAccount(t, closed)
	g := &Gates{DB: d.App, Gateway: gw.Client}
	in := func(subject, account, holder string, rule bool) GateInput {
		i := gateInput(tenant, subject, "wf-"+subject)
		i.Partner, i.AccountNumber, i.ExpectedHolderName, i.RequireNameMatch = "sandbox", account, holder, rule
		return i
	}
	ctx := context.Background()

	require.NoError(t, g.AccountGate(ctx, in("match", open, "ALMAZ  tesfaye", true)), "names compare normalised")
	require.NoError(t, g.AccountGate(ctx, in("match-geez", open, "አልማዝ ተስፋዬ", true)), "an Ethiopic holder name matches its Latin form")
	require.NoError(t, g.AccountGate(ctx, in("rule-off", open, "Someone Else", false)), "the name rule is the tenant's choice")

	for _, c := range []struct {
		subject, account, holder string
		rule                     bool
		code, reason             string
	}{
		{"missing", testkit.Unique("NONE"), "Almaz Tesfaye", true, GateAccountNotFound, "NOT_FOUND"},
		{"missing-rule-off", testkit.Unique("NONE"), "", false, GateAccountNotFound, "NOT_FOUND"},
		{"closed", closed, "Almaz Tesfaye", true, GateAccountNotFound, "ACCOUNT_STATUS_CLOSED"},
		{"mismatch", open, "Someone Else", true, GateAccountMismatch, "NAME_MATCH_MISMATCH"},
		{"mismatch-geez", open, "አልማዝ ከበደ", true, GateAccountMismatch, "NAME_MATCH_MISMATCH"},
		{"no-name", open, "", true, GateAccountMismatch, "NAME_MATCH_NOT_CHECKED"},
	} {
		i := in(c.subject, c.account, c.holder, c.rule)
		requireRefusal(t, g.AccountGate(ctx, i), c.code)
		requireRefusal(t, g.AccountGate(ctx, i), c.code)
		require.Equal(t, []gateAudit{{Actor: "system:ewa-disburse", Outcome: "DENIED", TargetType: "EwaRequest", TargetID: "req-" + c.subject,
			Code: c.code, WorkflowID: "wf-" + c.subject, RequestID: "http-req-1", Extra: c.reason}},
			gateAudits(t, d.App, tenant, ActionAccountGateBlocked, "req-"+c.subject, "reason"), c.subject)
	}

	// The partner down: the gate cannot decide (retryable), and writes nothing.
	sb.Fault(t, "", map[string]any{"errorRatePercent": 100})
	requireCannotDecide(t, g.AccountGate(ctx, in("partner-down", open, "Almaz Tesfaye", true)))
	require.Empty(t, gateAudits(t, d.App, tenant, ActionAccountGateBlocked, "req-partner-down", "reason"))
	sb.ClearFault(t, "")

	// The gateway unreachable: the same.
	unreachable, err := gateway.Dial("127.0.0.1:1", gateway.ClientOptions{Timeout: 2 * time.Second})
	require.NoError(t, err)
	defer unreachable.Close()
	requireCannotDecide(t, (&Gates{DB: d.App, Gateway: unreachable}).AccountGate(ctx, in("gw-down", open, "Almaz Tesfaye", true)))
	require.ErrorContains(t, (&Gates{DB: d.App}).AccountGate(ctx, in("x", open, "", false)), "no database pool or gateway")

	// An account at another partner than the one the transfer goes through is refused before
	// any lookup (through the unreachable gateway: a call could not have decided), as that bank
	// would credit whatever account it has under the number.
	other := in("other-partner", open, "Almaz Tesfaye", true)
	other.TransferPartner = "awash"
	requireRefusal(t, (&Gates{DB: d.App, Gateway: unreachable}).AccountGate(ctx, other), GateAccountNotFound)
	require.Equal(t, []gateAudit{{Actor: "system:ewa-disburse", Outcome: "DENIED", TargetType: "EwaRequest", TargetID: "req-other-partner",
		Code: GateAccountNotFound, WorkflowID: "wf-other-partner", RequestID: "http-req-1", Extra: "OTHER_PARTNER"}},
		gateAudits(t, d.App, tenant, ActionAccountGateBlocked, "req-other-partner", "reason"))
	same := in("same-partner", open, "Almaz Tesfaye", true)
	same.TransferPartner = "sandbox"
	require.NoError(t, g.AccountGate(ctx, same))
	other.TransferPartner = "bad partner"
	require.Error(t, g.AccountGate(ctx, other))
}
