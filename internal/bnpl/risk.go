package bnpl

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A business's BNPL risk (GET /api/bnpl/risk): the business fronts every purchase to the merchant
// and recovers it from its employee's pay (doc.go), so what its employees still owe is its
// exposure. Risk reads it as Summary reads the dashboard's figures — the same rule for what is
// owed (the ACTIVE agreements' instalments DUE or COLLECTING), the same day (the UTC date of
// today), an instalment due that day not overdue — and breaks it down: by how late (ageing
// buckets), by merchant and by employee (the largest exposures first), beside what was written
// off. So its OutstandingSantim and overdue figures are the dashboard's, to the santim.
//
// Overflow: as Summary's — each sum is taken in exact numeric and read as text (money.ParseSum),
// so one past int64 (or the outstanding or overdue figure, added across the buckets) is
// money.ErrOverflow, Risk's error and the caller's to refuse, never a wrapped figure nor a
// database error.

// The ageing buckets, by days past the due date, in order.
const (
	AgeNotDue   = "NOT_DUE"    // due today or later
	Age1To30    = "DAYS_1_30"  // 1 to 30 days late
	Age31To60   = "DAYS_31_60" // 31 to 60 days late
	Age61To90   = "DAYS_61_90" // 61 to 90 days late
	AgeOver90   = "DAYS_90_PLUS"
	maxTopRisks = 20 // the most merchants and employees Risk lists
)

// AgeBuckets are the ageing buckets in order.
var AgeBuckets = []string{AgeNotDue, Age1To30, Age31To60, Age61To90, AgeOver90}

// RiskReport is a business's BNPL exposure on a day.
type RiskReport struct {
	Day                time.Time // the UTC date the report is as of
	OutstandingSantim  int64
	OverdueInstalments int64
	OverdueSantim      int64
	// Ageing has a bucket of AgeBuckets each, in order: the instalments still owed and their
	// amount.
	Ageing []AgeBucket
	// Merchants and Employees are the exposures by merchant and by employee, the largest
	// outstanding first (then by id), at most maxTopRisks each; MerchantCount and EmployeeCount
	// are how many there are in all.
	Merchants     []Exposure
	MerchantCount int64
	Employees     []Exposure
	EmployeeCount int64
	// WrittenOff is what the business wrote off: agreements, and the amount (the posted
	// write-offs').
	WrittenOffAgreements int64
	WrittenOffSantim     int64
}

// AgeBucket is one ageing bucket's instalments.
type AgeBucket struct {
	Bucket       string `bun:"bucket" db:"bucket"`
	Instalments  int64  `bun:"instalments" db:"instalments"`
	AmountSantim int64  `bun:"amount_santim" db:"amount_santim"`
}

// Exposure is what one merchant's sales or one employee's purchases still owe.
type Exposure struct {
	ID                string `bun:"id" db:"id"`
	Name              string `bun:"name" db:"name"` // a merchant's name ("" for an employee)
	Agreements        int64  `bun:"agreements" db:"agreements"`
	OutstandingSantim int64  `bun:"outstanding_santim" db:"outstanding_santim"`
	OverdueSantim     int64  `bun:"overdue_santim" db:"overdue_santim"`
	Total             int64  `bun:"total" db:"total"` // how many exposures there are (every row the same)
}

// owedSQL is the instalments still owed of the context's business's ACTIVE agreements with how
// late each is on ?1: Summary's rule (businessSummarySQL).
const owedSQL = `WITH owed AS (
		SELECT a.id AS agreement_id, a.merchant_id, a.employee_id, i.amount_santim, ?1::date - i.due_date AS late
		FROM app.bnpl_agreements a JOIN app.bnpl_instalments i ON i.tenant_id = a.tenant_id AND i.agreement_id = a.id
		WHERE a.tenant_id = ?0 AND a.status = ?2 AND i.status IN (?3))
	`

const ageingSQL = owedSQL + `SELECT CASE WHEN late <= 0 THEN '` + AgeNotDue + `' WHEN late <= 30 THEN '` + Age1To30 + `'
		WHEN late <= 60 THEN '` + Age31To60 + `' WHEN late <= 90 THEN '` + Age61To90 + `' ELSE '` + AgeOver90 + `' END AS bucket,
		count(*) AS instalments, sum(amount_santim)::text AS amount_santim
	FROM owed GROUP BY 1`

// exposureSQL groups owed by a column (?4: merchant_id or employee_id, named by the caller),
// naming a merchant from its partner standing.
const exposureSQL = owedSQL + `SELECT o.id, coalesce(ps.name, '') AS name, o.agreements, o.outstanding_santim::text AS outstanding_santim,
		o.overdue_santim::text AS overdue_santim,
		count(*) OVER () AS total
	FROM (SELECT ?4 AS id, count(DISTINCT agreement_id) AS agreements, sum(amount_santim) AS outstanding_santim,
			coalesce(sum(amount_santim) FILTER (WHERE late > 0), 0) AS overdue_santim
		FROM owed GROUP BY 1) o
	LEFT JOIN app.partner_standing ps ON ?5 AND ps.id = o.id
	ORDER BY o.outstanding_santim DESC, o.id LIMIT ?6`

// writtenOffSQL sums the business's write-offs whose journal is posted (writeoff.go: the amount
// owed when the operator wrote the agreement off).
const writtenOffSQL = `SELECT count(*) AS agreements, coalesce(sum(amount_santim), 0)::text AS amount_santim
	FROM app.bnpl_write_offs WHERE tenant_id = ?0 AND status = ?1`

// Risk reads the context's business's RiskReport on the day of today (its UTC date), in the
// context's tenant transaction q (a pgx or bun one, as Summarize): four statements, one snapshot
// when q is a snapshot transaction (the route's).
func Risk(ctx context.Context, q db.Writer, today time.Time) (RiskReport, error) {
	t := today.UTC()
	r := RiskReport{Day: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}
	tenant, day := tenancy.TenantID(ctx), r.Day.Format(time.DateOnly)
	owed := bun.List([]string{InstalmentDue, InstalmentCollecting})
	ageing, err := db.Select[struct {
		Bucket      string `bun:"bucket" db:"bucket"`
		Instalments int64  `bun:"instalments" db:"instalments"`
		Amount      string `bun:"amount_santim" db:"amount_santim"`
	}](ctx, q, ageingSQL, tenant, day, StatusActive, owed)
	if err != nil {
		return RiskReport{}, fmt.Errorf("bnpl: risk: ageing: %w", err)
	}
	by := map[string]AgeBucket{}
	for _, b := range ageing {
		v := AgeBucket{Bucket: b.Bucket, Instalments: b.Instalments}
		if v.AmountSantim, err = money.ParseSum(b.Amount); err != nil {
			return RiskReport{}, fmt.Errorf("bnpl: risk: ageing %s: %w", b.Bucket, err)
		}
		by[b.Bucket] = v
	}
	for _, name := range AgeBuckets {
		b := by[name]
		b.Bucket = name
		r.Ageing = append(r.Ageing, b)
		var ok bool
		if r.OutstandingSantim, ok = money.Add(r.OutstandingSantim, b.AmountSantim); !ok {
			return RiskReport{}, fmt.Errorf("bnpl: risk: outstanding: %w", money.ErrOverflow)
		}
		if name != AgeNotDue {
			r.OverdueInstalments += b.Instalments
			r.OverdueSantim += b.AmountSantim // a part of the outstanding, all positive: in range
		}
	}
	for _, e := range []struct {
		column   string
		merchant bool
		out      *[]Exposure
		count    *int64
	}{{"merchant_id", true, &r.Merchants, &r.MerchantCount}, {"employee_id", false, &r.Employees, &r.EmployeeCount}} {
		rows, err := db.Select[struct {
			ID          string `bun:"id" db:"id"`
			Name        string `bun:"name" db:"name"`
			Agreements  int64  `bun:"agreements" db:"agreements"`
			Outstanding string `bun:"outstanding_santim" db:"outstanding_santim"`
			Overdue     string `bun:"overdue_santim" db:"overdue_santim"`
			Total       int64  `bun:"total" db:"total"`
		}](ctx, q, exposureSQL, tenant, day, StatusActive, owed, bun.Ident(e.column), e.merchant, maxTopRisks)
		if err != nil {
			return RiskReport{}, fmt.Errorf("bnpl: risk: by %s: %w", e.column, err)
		}
		*e.out = make([]Exposure, len(rows))
		for i, x := range rows {
			v := Exposure{ID: x.ID, Name: x.Name, Agreements: x.Agreements, Total: x.Total}
			if err := money.ParseSums([]string{x.Outstanding, x.Overdue}, &v.OutstandingSantim, &v.OverdueSantim); err != nil {
				return RiskReport{}, fmt.Errorf("bnpl: risk: by %s: %w", e.column, err)
			}
			(*e.out)[i] = v
		}
		if len(rows) > 0 {
			*e.count = rows[0].Total
		}
	}
	wo, err := db.Select[struct {
		Agreements int64  `bun:"agreements" db:"agreements"`
		Amount     string `bun:"amount_santim" db:"amount_santim"`
	}](ctx, q, writtenOffSQL, tenant, WriteOffPosted)
	if err != nil {
		return RiskReport{}, fmt.Errorf("bnpl: risk: written off: %w", err)
	}
	if len(wo) == 1 {
		r.WrittenOffAgreements = wo[0].Agreements
		if r.WrittenOffSantim, err = money.ParseSum(wo[0].Amount); err != nil {
			return RiskReport{}, fmt.Errorf("bnpl: risk: written off: %w", err)
		}
	}
	return r, nil
}
