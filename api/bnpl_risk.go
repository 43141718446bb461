package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
)

// GET /api/bnpl/risk: the business's BNPL exposure — what its employees' plans still owe, by how
// late (ageing buckets), by merchant and by employee (the largest first), and what it wrote off.
// The figures are the business dashboard's BNPL section's, broken down. Rules:
// internal/bnpl/risk.go.

type bnplAgeBucketJSON struct {
	Bucket       string `json:"bucket"`
	Instalments  int64  `json:"instalments"`
	AmountSantim int64  `json:"amountSantim"`
}

type bnplExposureJSON struct {
	ID                string  `json:"id"`
	Name              *string `json:"name,omitempty"`
	Agreements        int64   `json:"agreements"`
	OutstandingSantim int64   `json:"outstandingSantim"`
	OverdueSantim     int64   `json:"overdueSantim"`
}

type bnplExposuresJSON struct {
	Count int64              `json:"count"`
	Top   []bnplExposureJSON `json:"top"`
}

type bnplRiskJSON struct {
	AsOf               string              `json:"asOf"`
	OutstandingSantim  int64               `json:"outstandingSantim"`
	OverdueInstalments int64               `json:"overdueInstalments"`
	OverdueSantim      int64               `json:"overdueSantim"`
	Ageing             []bnplAgeBucketJSON `json:"ageing"`
	Merchants          bnplExposuresJSON   `json:"merchants"`
	Employees          bnplExposuresJSON   `json:"employees"`
	WrittenOff         struct {
		Agreements   int64 `json:"agreements"`
		AmountSantim int64 `json:"amountSantim"`
	} `json:"writtenOff"`
}

func toBnplExposuresJSON(count int64, rows []bnpl.Exposure, merchant bool) bnplExposuresJSON {
	out := bnplExposuresJSON{Count: count, Top: []bnplExposureJSON{}}
	for _, e := range rows {
		j := bnplExposureJSON{ID: e.ID, Agreements: e.Agreements, OutstandingSantim: e.OutstandingSantim, OverdueSantim: e.OverdueSantim}
		if merchant {
			name := e.Name
			j.Name = &name
		}
		out.Top = append(out.Top, j)
	}
	return out
}

// codeBnplRiskTotalsOverflow refuses a risk report whose sums pass int64 santim (bnpl.Risk's
// money.ErrOverflow): the report has no filter to narrow, so the business reads its exposure
// through the BNPL lists' narrower filters instead.
const codeBnplRiskTotalsOverflow = "BNPL_RISK_TOTALS_OVERFLOW"

func (s *Server) bnplRisk(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	r, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.RiskReport, error) {
		return bnpl.Risk(ctx, tx, s.now())
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeBnplRiskTotalsOverflow))
		return
	}
	out := bnplRiskJSON{AsOf: r.Day.Format("2006-01-02"), OutstandingSantim: r.OutstandingSantim, OverdueInstalments: r.OverdueInstalments,
		OverdueSantim: r.OverdueSantim, Ageing: []bnplAgeBucketJSON{},
		Merchants: toBnplExposuresJSON(r.MerchantCount, r.Merchants, true), Employees: toBnplExposuresJSON(r.EmployeeCount, r.Employees, false)}
	for _, b := range r.Ageing {
		out.Ageing = append(out.Ageing, bnplAgeBucketJSON(b))
	}
	out.WrittenOff.Agreements, out.WrittenOff.AmountSantim = r.WrittenOffAgreements, r.WrittenOffSantim
	c.JSON(http.StatusOK, out)
}
