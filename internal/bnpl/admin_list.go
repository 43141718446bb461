package bnpl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The platform's oversight of BNPL (GET /api/admin/bnpl): every agreement of every business,
// whichever merchant it was bought from, newest first, with the names of its business and its
// merchant, how far its instalments have got, what the customer still owes, and the filter's
// totals by state. It reads every tenant, so it runs only in a platform admin's cross-tenant
// transaction (crosstenant.Tx: the platform_access policies of migration 0048, the organizations'
// and partner_standing's); the business's own routes (List, Get) stay tenant-scoped.
//
// What is owed is the package's one rule, Agreement.OutstandingSantim: each listed agreement is
// read with its instalments and asked. The totals are one aggregate over the whole filter (a
// page's worth of agreements is not the filter), so they state that rule in SQL — the
// instalments DUE or COLLECTING (owedInstalmentStates), nothing for a FAILED agreement — and
// TestAdminList (admin_list_test.go) holds the two to each other, state by state, under every
// filter.
//
// Order and paging: newest first, by (created_at, id), the ties broken by id; a page's cursor
// is its last agreement's id, from which the next page reads on. Migration 0107's indexes serve
// that order across tenants, by merchant and by state; a business's uses bnpl_agreements_list.

// CodeAdminTotalsOverflow refuses an oversight read whose sums pass int64 santim (AdminTotals'
// money.ErrOverflow, which the route answers with this code) or whose listed agreement holds a
// stored amount that does (AdminList's AdminTotalsOverflow): a narrower filter answers.
const CodeAdminTotalsOverflow = "BNPL_TOTALS_OVERFLOW"

// AdminTotalsOverflow is CodeAdminTotalsOverflow's refusal (422) of a stored amount past int64.
func AdminTotalsOverflow() *refusal.Refusal {
	return &refusal.Refusal{Code: CodeAdminTotalsOverflow, Status: http.StatusUnprocessableEntity,
		Message: "the filter's BNPL totals pass what an amount can carry; narrow it (status, businessId, merchantId, from, to)"}
}

// owedInstalmentStates are the instalment states Agreement.OutstandingSantim counts as owed.
var owedInstalmentStates = []string{InstalmentDue, InstalmentCollecting}

// AdminFilter narrows the platform's list of agreements; "" (or a zero time) matches any.
type AdminFilter struct {
	Status     string
	BusinessID string // the agreement's tenant: the business whose employee bought
	MerchantID string
	// From and To bound the agreement's creation: From ≤ created_at < To.
	From, To time.Time
}

// AdminAgreement is an agreement as the platform's list shows it: with its instalments (what is
// owed is asked of them), its business's and merchant's names, and the instants that only this
// list reads.
type AdminAgreement struct {
	Agreement
	BusinessName string
	MerchantName string
	// FailedAt is when the merchant's settlement failed (FAILED only; MarkFailed sets it with the
	// state, migration 0095); WrittenOffAt when the write-off saga recorded (WRITTEN_OFF only).
	FailedAt     *time.Time
	WrittenOffAt *time.Time
}

// InstalmentsCollected counts the agreement's instalments COLLECTED from the customer.
func (a Agreement) InstalmentsCollected() int {
	n := 0
	for _, i := range a.Instalments {
		if i.Status == InstalmentCollected {
			n++
		}
	}
	return n
}

// InstalmentsScheduled counts the agreement's instalments of its schedule as it stands: every one
// but those a restructure SUPERSEDED (history, never collected), so the collected ones of an
// earlier schedule count beside the current schedule's.
func (a Agreement) InstalmentsScheduled() int {
	n := 0
	for _, i := range a.Instalments {
		if i.Status != InstalmentSuperseded {
			n++
		}
	}
	return n
}

// AdminTotal is the count of a filter's agreements in one state, their purchases (the principal
// the businesses fronted) and what their customers still owe.
type AdminTotal struct {
	Count             int64
	PurchaseSantim    int64
	OutstandingSantim int64
}

// where states f as a WHERE clause over app.bnpl_agreements a, its arguments from $1.
func (f AdminFilter) where() (string, []any) {
	var w db.Where
	w.AddIf(f.Status != "", "a.status = ?", f.Status)
	w.AddIf(f.BusinessID != "", "a.tenant_id = ?", f.BusinessID)
	w.AddIf(f.MerchantID != "", "a.merchant_id = ?", f.MerchantID)
	w.AddIf(!f.From.IsZero(), "a.created_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "a.created_at < ?", f.To.UTC())
	return w.String(), w.Args
}

// AdminList reads up to limit agreements of every business matching f, newest first, after the
// agreement after (its id, "" from the newest; an id that names no agreement reads nothing), each
// with its instalments: two statements, in q, a platform admin's cross-tenant transaction.
// Errors: BNPL_TOTALS_OVERFLOW when a stored amount passes int64.
func AdminList(ctx context.Context, q db.Querier, f AdminFilter, after string, limit int) ([]AdminAgreement, error) {
	where, args := f.where()
	if after != "" {
		args = append(args, after)
		n := strconv.Itoa(len(args))
		where += ` AND (a.created_at, a.id) < (SELECT c.created_at, c.id FROM app.bnpl_agreements c WHERE c.id = $` + n + `)`
	}
	args = append(args, limit)
	rows, err := q.Query(ctx, `SELECT `+agreementColumns+`, a.failed_at,
			(SELECT w.completed_at FROM app.bnpl_write_offs w WHERE w.tenant_id = a.tenant_id AND w.agreement_id = a.id AND w.status = 'POSTED'),
			coalesce((SELECT o.name FROM app.organizations o WHERE o.id = a.tenant_id), ''),
			coalesce((SELECT ps.name FROM app.partner_standing ps WHERE ps.id = a.merchant_id), '')
		FROM app.bnpl_agreements a WHERE `+where+`
		ORDER BY a.created_at DESC, a.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, adminReadError("list", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AdminAgreement, error) {
		var v AdminAgreement
		var err error
		v.Agreement, err = scanAgreementWith(r, &v.FailedAt, &v.WrittenOffAt, &v.BusinessName, &v.MerchantName)
		return v, err
	})
	if err != nil {
		return nil, adminReadError("list", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	tenants, ids := make([]string, len(out)), make([]string, len(out))
	for i, a := range out {
		tenants[i], ids[i] = a.TenantID, a.ID
	}
	// The page's instalments in one statement, each agreement's by its tenant and id (the
	// instalments' primary key), in the columns instalmentsOf reads for a business.
	type agreementInstalment struct {
		AgreementID string `db:"agreement_id"`
		Instalment
	}
	irows, err := q.Query(ctx, `SELECT i.agreement_id, i.idx, i.due_date, i.amount_santim::bigint AS amount_santim, i.status,
			coalesce(i.collect_workflow_id, '') AS collect_workflow_id, coalesce(i.collect_source, '') AS collect_source,
			coalesce(i.collect_mandate_id, '') AS collect_mandate_id, coalesce(i.ledger_tx_id, '') AS ledger_tx_id, i.collected_at,
			i.schedule_version
		FROM unnest($1::text[], $2::text[]) AS k(tenant_id, agreement_id)
		JOIN app.bnpl_instalments i ON i.tenant_id = k.tenant_id AND i.agreement_id = k.agreement_id
		ORDER BY i.agreement_id, i.idx`, tenants, ids)
	if err != nil {
		return nil, adminReadError("instalments", err)
	}
	ins, err := pgx.CollectRows(irows, pgx.RowToStructByName[agreementInstalment])
	if err != nil {
		return nil, adminReadError("instalments", err)
	}
	byAgreement := make(map[string][]Instalment, len(out))
	for _, i := range ins {
		byAgreement[i.AgreementID] = append(byAgreement[i.AgreementID], i.Instalment)
	}
	for i := range out {
		out[i].Instalments = byAgreement[out[i].ID]
	}
	return out, nil
}

// AdminTotals counts and sums the agreements of every business matching f, by state: every state
// of AgreementStatuses is a key (zero when none; only f.Status's when f names one), in one
// statement in q (a platform admin's cross-tenant transaction; the caller reads it in the list's
// snapshot).
//
// Overflow: each sum is taken in exact numeric and read as text (money.ParseSum), so a sum past
// int64 is money.ErrOverflow, the caller's to refuse (the route answers BNPL_TOTALS_OVERFLOW,
// 422), never a wrapped figure nor a database error. A purchase is at most 10^11 santim (the table's CHECK), so the purchases
// pass int64 only past 92 million agreements at that bound; an instalment is only checked > 0,
// but by construction an agreement's instalments owe at most its purchase.
func AdminTotals(ctx context.Context, q db.Querier, f AdminFilter) (map[string]AdminTotal, error) {
	where, args := f.where()
	args = append(args, owedInstalmentStates, StatusFailed)
	owed, failed := "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
	rows, err := q.Query(ctx, `SELECT a.status, count(*), coalesce(sum(a.purchase_santim), 0)::text,
			coalesce(sum(o.owed) FILTER (WHERE a.status <> `+failed+`), 0)::text
		FROM app.bnpl_agreements a
		LEFT JOIN LATERAL (SELECT sum(i.amount_santim) AS owed FROM app.bnpl_instalments i
			WHERE i.tenant_id = a.tenant_id AND i.agreement_id = a.id AND i.status = ANY(`+owed+`::text[])) o ON true
		WHERE `+where+` GROUP BY a.status`, args...)
	if err != nil {
		return nil, adminReadError("totals", err)
	}
	type statusTotal struct {
		status, purchase, owed string
		count                  int64
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statusTotal, error) {
		var v statusTotal
		err := r.Scan(&v.status, &v.count, &v.purchase, &v.owed)
		return v, err
	})
	if err != nil {
		return nil, adminReadError("totals", err)
	}
	out := map[string]AdminTotal{}
	for _, s := range AgreementStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = AdminTotal{}
		}
	}
	for _, r := range got {
		t := AdminTotal{Count: r.count}
		if err := money.ParseSums([]string{r.purchase, r.owed}, &t.PurchaseSantim, &t.OutstandingSantim); err != nil {
			return nil, fmt.Errorf("bnpl.admin_totals: %s: %w", r.status, err)
		}
		out[r.status] = t
	}
	return out, nil
}

// adminReadError is an oversight read's error: a stored amount past int64 (SQLSTATE 22003,
// numeric_value_out_of_range, from the list's bigint columns: an instalment is only checked
// positive) is BNPL_TOTALS_OVERFLOW; anything else is ours. The totals' sums never raise it: they
// are read as text (AdminTotals).
func adminReadError(op string, err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == pgerrcode.NumericValueOutOfRange {
		return AdminTotalsOverflow()
	}
	return fmt.Errorf("bnpl.admin_%s: %w", op, err)
}
